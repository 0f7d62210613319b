-- name: a campaign message's node, kept and in its outbound webhook events
-- The workflow node that sent a campaign's message, written with the record (null for the
-- push route's and the dashboard's single sends), so a message event's data names it beside
-- campaign_id. Adding a nullable column rewrites nothing.
ALTER TABLE messages ADD COLUMN node_id text;

CREATE OR REPLACE FUNCTION herald_webhook_message_events(m messages, old_status text, old_events jsonb) RETURNS SETOF jsonb LANGUAGE sql STABLE AS $fn$
  WITH data AS (
    SELECT jsonb_strip_nulls(jsonb_build_object(
      'message_id', m.id, 'channel', m.channel, 'status', m.status, 'person_id', m.person_id, 'external_id', m.external_id,
      'campaign_id', m.campaign_id, 'node_id', m.node_id, 'event_id', m.event_id, 'platform', m.platform,
      'to', CASE WHEN m.channel <> 'push' THEN m.address END, 'provider', m.provider, 'provider_id', m.provider_id,
      'skip_reason', m.skip_reason, 'error', m.error, 'title', m.title, 'body', m.body, 'tags', m.tags,
      'created_at', herald_iso(m.created_at), 'sent_at', herald_iso(m.sent_at))) AS d
  ), types AS (
    SELECT CASE m.status WHEN 'sent' THEN 'message.sent' WHEN 'delivered' THEN 'message.delivered' WHEN 'failed' THEN 'message.failed'
             WHEN 'skipped' THEN 'message.skipped' WHEN 'policy_suppressed' THEN 'message.skipped'
             WHEN 'bounced' THEN 'message.bounced' WHEN 'complained' THEN 'message.complained' END AS t
    WHERE m.status IS DISTINCT FROM old_status
    UNION ALL
    SELECT 'message.' || k FROM unnest(ARRAY['opened', 'clicked']) k,
      generate_series(1, (SELECT count(*) FROM jsonb_array_elements(COALESCE(m.events, '[]')) x WHERE x->>'type' = k)::int
                       - (SELECT count(*) FROM jsonb_array_elements(COALESCE(old_events, '[]')) x WHERE x->>'type' = k)::int)
  )
  SELECT jsonb_build_object('workspace_id', m.workspace_id, 'event_type', types.t, 'data', data.d) FROM types, data WHERE types.t IS NOT NULL
$fn$;

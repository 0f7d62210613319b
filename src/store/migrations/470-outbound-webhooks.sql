-- name: outbound webhooks: endpoints, the outbox of deliveries, attempts (docs/webhooks.md)
-- An endpoint's secrets are sealed (util/sealing.ts) under HERALD_SECRETS_KEY; after a
-- rotation the previous one keeps signing until previous_secret_until.
CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  url text NOT NULL,
  event_types text[] NOT NULL,
  description text NOT NULL DEFAULT '',
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  secret bytea NOT NULL,
  previous_secret bytea,
  previous_secret_until timestamptz,
  -- The first failed attempt since the last success: 5 days of failures disable the endpoint.
  failing_since timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_by_workspace ON webhook_endpoints (workspace_id, created_at);
-- What the triggers below probe for each writing statement: is anyone listening here?
CREATE INDEX webhook_endpoints_listening ON webhook_endpoints (workspace_id) WHERE enabled;

-- The outbox: one row per event and endpoint, written by the statement that commits the
-- change (the triggers below), so an event is never lost nor written twice. Each row is a
-- job (store/job-queue.ts): waiting until due, running while claimed; a claim not completed
-- (Herald killed mid-call) waits again, so delivery is at least once.
CREATE TABLE webhook_deliveries (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  event_type text NOT NULL,
  -- The body sent, {type, timestamp, data}, fixed when the change was committed.
  payload jsonb NOT NULL,
  state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'running', 'delivered', 'failed')),
  due_at timestamptz NOT NULL DEFAULT now(),
  attempts integer NOT NULL DEFAULT 0,
  claims integer NOT NULL DEFAULT 0,
  claimed_by integer,
  claimed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (workspace_id, due_at) WHERE state = 'waiting';
CREATE INDEX webhook_deliveries_running ON webhook_deliveries (workspace_id) WHERE state = 'running';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id);
-- Finished deliveries are removed after a while (store/webhooks.ts pruneDeliveries), oldest first.
CREATE INDEX webhook_deliveries_done ON webhook_deliveries (created_at) WHERE state IN ('delivered', 'failed');

CREATE TABLE webhook_attempts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  workspace_id uuid NOT NULL,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  event_type text NOT NULL,
  status_code integer,
  error text,
  attempt integer NOT NULL,
  at timestamptz NOT NULL DEFAULT now(),
  next_attempt_at timestamptz
);
CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, at DESC, id DESC);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id);

CREATE FUNCTION herald_iso(t timestamptz) RETURNS text LANGUAGE sql IMMUTABLE AS $fn$
  SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$fn$;

-- Whether an enabled endpoint of one of the workspaces listens. A statement of workspaces
-- nobody listens to (the usual case) stops here: with no enabled endpoint anywhere at the
-- first probe, else after one probe per workspace the statement wrote.
CREATE FUNCTION herald_webhooks_listening(workspaces uuid[]) RETURNS boolean LANGUAGE sql STABLE AS $fn$
  SELECT EXISTS (SELECT 1 FROM webhook_endpoints WHERE enabled)
     AND EXISTS (SELECT 1 FROM unnest(workspaces) w WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.workspace_id = w AND e.enabled))
$fn$;

-- Writes the outbox rows of the events `changes` (rows of workspace_id, event_type, data):
-- one per endpoint of the workspace, enabled, subscribed to the type or to "*".
CREATE FUNCTION herald_webhook_outbox(changes jsonb) RETURNS void LANGUAGE sql AS $fn$
  INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_type, payload)
  SELECT e.workspace_id, e.id, c.event_type,
         jsonb_build_object('type', c.event_type, 'timestamp', herald_iso(now()), 'data', c.data)
  FROM jsonb_to_recordset(changes) AS c(workspace_id uuid, event_type text, data jsonb)
  JOIN webhook_endpoints e ON e.workspace_id = c.workspace_id AND e.enabled
   AND (c.event_type = ANY (e.event_types) OR '*' = ANY (e.event_types))
$fn$;

-- Message outcomes, whichever statement writes them (every channel's send, provider
-- callbacks, tracked opens and clicks): a new row, or a row whose status changed, is one
-- event of its status; each `opened` or `clicked` added to its events is one more. The data
-- is the message as the status route shows it.
CREATE FUNCTION herald_webhook_message_events(m messages, old_status text, old_events jsonb) RETURNS SETOF jsonb LANGUAGE sql STABLE AS $fn$
  WITH data AS (
    SELECT jsonb_strip_nulls(jsonb_build_object(
      'message_id', m.id, 'channel', m.channel, 'status', m.status, 'person_id', m.person_id, 'external_id', m.external_id,
      'campaign_id', m.campaign_id, 'event_id', m.event_id, 'platform', m.platform,
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

CREATE FUNCTION herald_webhook_messages() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  changes jsonb;
BEGIN
  IF NOT herald_webhooks_listening(ARRAY(SELECT DISTINCT workspace_id FROM new_rows)) THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(ev) INTO changes FROM new_rows n, herald_webhook_message_events(n, NULL, '[]') ev;
  ELSE
    SELECT jsonb_agg(ev) INTO changes FROM new_rows n JOIN old_rows o ON o.id = n.id, herald_webhook_message_events(n, o.status, o.events) ev;
  END IF;
  IF changes IS NOT NULL THEN
    PERFORM herald_webhook_outbox(changes);
  END IF;
  RETURN NULL;
END $fn$;
CREATE TRIGGER messages_webhooks_in AFTER INSERT ON messages REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_webhook_messages();
CREATE TRIGGER messages_webhooks_again AFTER UPDATE ON messages REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_webhook_messages();

-- People: created, deleted, and changed in what they are (not when they were last seen);
-- a status moving to `unsubscribed` is person.unsubscribed, and back to `active` resubscribed.
CREATE FUNCTION herald_webhook_person(p people) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $fn$
  SELECT jsonb_strip_nulls(jsonb_build_object(
    'person_id', p.id, 'external_id', p.external_id, 'email', p.email, 'phone', p.phone, 'first_name', p.first_name,
    'last_name', p.last_name, 'avatar_url', p.avatar_url, 'timezone', p.timezone, 'locale', p.locale, 'status', p.status,
    'unsubscribed_at', herald_iso(p.unsubscribed_at), 'unsubscribe_reason', p.unsubscribe_reason, 'traits', p.traits,
    'created_at', herald_iso(p.created_at), 'updated_at', herald_iso(p.updated_at)))
$fn$;
CREATE FUNCTION herald_webhook_people() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  changes jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NOT herald_webhooks_listening(ARRAY(SELECT DISTINCT workspace_id FROM new_rows)) THEN
      RETURN NULL;
    END IF;
    SELECT jsonb_agg(jsonb_build_object('workspace_id', n.workspace_id, 'event_type', 'person.created', 'data', herald_webhook_person(n))) INTO changes FROM new_rows n;
  ELSIF TG_OP = 'DELETE' THEN
    IF NOT herald_webhooks_listening(ARRAY(SELECT DISTINCT workspace_id FROM old_rows)) THEN
      RETURN NULL;
    END IF;
    SELECT jsonb_agg(jsonb_build_object('workspace_id', o.workspace_id, 'event_type', 'person.deleted', 'data', herald_webhook_person(o))) INTO changes FROM old_rows o;
  ELSE
    IF NOT herald_webhooks_listening(ARRAY(SELECT DISTINCT workspace_id FROM new_rows)) THEN
      RETURN NULL;
    END IF;
    SELECT jsonb_agg(jsonb_build_object('workspace_id', n.workspace_id, 'event_type', t, 'data', herald_webhook_person(n))) INTO changes
    FROM new_rows n JOIN old_rows o ON o.id = n.id,
      LATERAL (
        SELECT 'person.updated' AS t
        WHERE (n.external_id, n.email, n.phone, n.first_name, n.last_name, n.avatar_url, n.timezone, n.locale, n.traits)
          IS DISTINCT FROM (o.external_id, o.email, o.phone, o.first_name, o.last_name, o.avatar_url, o.timezone, o.locale, o.traits)
        UNION ALL SELECT 'person.unsubscribed' WHERE n.status = 'unsubscribed' AND o.status <> 'unsubscribed'
        UNION ALL SELECT 'person.resubscribed' WHERE n.status = 'active' AND o.status = 'unsubscribed'
      ) k;
  END IF;
  IF changes IS NOT NULL THEN
    PERFORM herald_webhook_outbox(changes);
  END IF;
  RETURN NULL;
END $fn$;
CREATE TRIGGER people_webhooks_in AFTER INSERT ON people REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_webhook_people();
CREATE TRIGGER people_webhooks_again AFTER UPDATE ON people REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_webhook_people();
CREATE TRIGGER people_webhooks_out AFTER DELETE ON people REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_webhook_people();

-- Campaigns going live (active) and completing.
CREATE FUNCTION herald_webhook_campaigns() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  changes jsonb;
BEGIN
  SELECT jsonb_agg(jsonb_build_object('workspace_id', n.workspace_id,
           'event_type', CASE n.status WHEN 'active' THEN 'campaign.activated' ELSE 'campaign.completed' END,
           'data', jsonb_build_object('campaign_id', n.id, 'name', n.name, 'status', n.status, 'trigger_type', n.trigger_type, 'updated_at', herald_iso(n.updated_at))))
    INTO changes
  FROM new_rows n LEFT JOIN old_rows o ON o.id = n.id
  WHERE n.status IN ('active', 'completed') AND n.status IS DISTINCT FROM o.status
    AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.workspace_id = n.workspace_id AND e.enabled);
  IF changes IS NOT NULL THEN
    PERFORM herald_webhook_outbox(changes);
  END IF;
  RETURN NULL;
END $fn$;
CREATE TRIGGER campaigns_webhooks_again AFTER UPDATE ON campaigns REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_webhook_campaigns();

-- name: tracked links kept with their message; machine opens and clicks not counted unique
-- Herald's own tracking (docs/tracking.md): the targets of a message's wrapped links, in the
-- order their tokens number them, written with the message at send time. A click's redirect
-- reads its target here, never from the request.
ALTER TABLE messages ADD COLUMN links jsonb;
-- A message counts as opened (clicked) once it holds an `opened` (`clicked`) event that is not
-- `machine` (an image proxy's prefetch, a link scanner): those are kept in its events but left
-- out of the campaign's unique counts. Same shape as migration 441's, so its trigger is unchanged.
CREATE OR REPLACE FUNCTION herald_counted_messages(rows_of text, sign integer) RETURNS text
  LANGUAGE sql IMMUTABLE AS $fn$
  SELECT format($q$SELECT workspace_id, campaign_id, channel, status, %s AS n,
                       jsonb_path_exists(events, '$[*] ? (@.type == "opened" && !exists(@.machine))')::int AS opened,
                       jsonb_path_exists(events, '$[*] ? (@.type == "clicked" && !exists(@.machine))')::int AS clicked
                    FROM %I WHERE campaign_id IS NOT NULL AND NOT COALESCE(tags @> '["test"]'::jsonb, false)$q$, sign, rows_of)
$fn$;

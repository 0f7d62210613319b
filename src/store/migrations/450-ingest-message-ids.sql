-- name: messageId deduplication of ingest
-- A messageId accepted on /track (kind 'track', the event's id) or /identify (kind
-- 'identify'), per workspace, with the ids its first answer gave: a repeat within 7 days is
-- answered from here and writes nothing (eventlog/apply-events.ts, store/ingest-messages.ts).
-- A row older than 7 days counts as absent (a new message replaces it) and is purged
-- periodically. No foreign keys: like the other ingest tables (migration 13), nothing here
-- may lock a workspace's or a person's row.
CREATE TABLE ingest_message_ids (
  workspace_id uuid NOT NULL,
  kind text NOT NULL,
  message_id text NOT NULL,
  event_id uuid,
  person_id uuid,
  accepted_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, kind, message_id)
);
CREATE INDEX ingest_message_ids_expiry ON ingest_message_ids (accepted_at);

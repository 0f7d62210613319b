-- name: event log, events, counts, embedded analytics
-- The embedded Log: one row per append (a request's events), acknowledged once committed;
-- the sink deletes the rows it has written onward, in the same statement.
CREATE TABLE log_entries (
  seq bigserial PRIMARY KEY,
  topic text NOT NULL,
  payload jsonb NOT NULL,
  appended_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE events (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
  type text NOT NULL,
  parameters jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL,
  ingested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_by_person ON events (person_id, created_at DESC, id DESC);
CREATE INDEX events_by_type ON events (workspace_id, type, created_at DESC, id DESC);
-- Per-person event counts, for campaign conditions (performed_count_*, first_occurrence).
CREATE TABLE person_event_counts (
  person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
  type text NOT NULL,
  count bigint NOT NULL,
  first_at timestamptz NOT NULL,
  last_at timestamptz NOT NULL,
  PRIMARY KEY (person_id, type)
);
-- Where a merged-away person's events go when they reach the sink after the merge.
CREATE TABLE person_redirects (
  from_id uuid PRIMARY KEY,
  to_id uuid NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
-- The embedded analytics store: every event, kept when its person is deleted.
CREATE TABLE analytics_events (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL,
  person_id uuid NOT NULL,
  external_id text NOT NULL,
  type text NOT NULL,
  parameters jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  ingested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX analytics_events_by_type ON analytics_events (workspace_id, type, created_at);

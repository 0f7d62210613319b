-- name: provider events applied
-- Provider callbacks: a provider event seen before (its own id) is applied once.
CREATE TABLE provider_events (
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  provider text NOT NULL,
  event_id text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, provider, event_id)
);

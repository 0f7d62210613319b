-- name: the event debugger's index
-- GET /workspaces/{id}/events (store/events.ts latestEvents): a workspace's latest events
-- whatever their type, newest first. events_by_type leads with type, so without this the
-- debugger sorts every event of the workspace. The store's events table is read in both
-- modes (ClickHouse gets a copy), so one index serves both.
CREATE INDEX IF NOT EXISTS events_by_workspace_time ON events (workspace_id, created_at DESC, id DESC);

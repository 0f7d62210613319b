-- name: workspace analytics read deleted people's events by type
-- The analytics routes (store/analytics.ts) read a workspace's events of some types over a
-- range of days from events (events_by_type) and from analytics_events, which holds only the
-- events of deleted people: they are moved there on delete, never written there per event, so
-- this index costs ingest nothing (migration 011 dropped one the sink paid for per event).
CREATE INDEX IF NOT EXISTS analytics_events_by_type ON analytics_events (workspace_id, type, created_at);

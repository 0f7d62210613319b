-- name: the embedded analytics store: events, and analytics_events for deleted people only
-- Every event was written twice: to events, and a copy to analytics_events that nothing
-- read, so that it outlived its person's delete. The delete now moves a person's events
-- to analytics_events (store/people.ts), so the copies of the living go. Together the two
-- tables are the analytics store without ClickHouse, each event in exactly one of them.
DELETE FROM analytics_events a USING events e WHERE a.id = e.id;
CREATE VIEW embedded_analytics_events AS
  SELECT e.id, e.workspace_id, e.person_id, p.external_id, e.type, e.parameters, e.created_at, e.ingested_at
  FROM events e JOIN people p ON p.id = e.person_id
  UNION ALL
  SELECT id, workspace_id, person_id, external_id, type, parameters, created_at, ingested_at FROM analytics_events;

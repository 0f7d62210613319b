// Applies event records to the store in one statement: `events` (what the read routes and
// deletes use), the per-person counts, and the embedded analytics table (unless ClickHouse is
// the analytics store). The embedded Log runs it as its append (eventlog/event-log.ts); the
// JetStream Log's store sink runs it on what it fetched (eventlog/event-sink.ts).
//
// Applied exactly once: events already stored are skipped (ON CONFLICT) and only newly
// stored ones are counted, so a redelivered batch is harmless. Events of a person deleted
// meanwhile are dropped (their analytics copy stays); events of a person merged away follow
// the redirect. A count row created here names the first of its events in the records' order
// (first_event_id, for first_occurrence triggers).
import { prepared, type Prepared } from '../store/db.js';

const COLUMNS = '(id uuid, workspace_id uuid, person_id uuid, external_id text, type text, parameters jsonb, created_at timestamptz)';

function applySql(analytics: boolean): string {
  return `
WITH recs AS (
  SELECT * FROM ROWS FROM (jsonb_to_recordset($1::text::jsonb) AS ${COLUMNS}) WITH ORDINALITY AS r(id, workspace_id, person_id, external_id, type, parameters, created_at, ord)
), resolved AS MATERIALIZED (
  -- Scalar subqueries, so each is an index probe per record: as joins, the planner (which
  -- expects 100 records) hashed the whole people table for every batch. Materialized, since
  -- inlined the probes ran twice (once for the filter below, once for the value).
  SELECT recs.id, recs.workspace_id, recs.type, recs.parameters, recs.created_at,
    (SELECT p.id FROM people p WHERE p.id = COALESCE((SELECT rd.to_id FROM person_redirects rd WHERE rd.from_id = recs.person_id), recs.person_id)) AS person_id
  FROM recs
), stored AS (
  INSERT INTO events (id, workspace_id, person_id, type, parameters, created_at)
  SELECT r.id, r.workspace_id, r.person_id, r.type, r.parameters, r.created_at
  FROM resolved r WHERE r.person_id IS NOT NULL
  ON CONFLICT (id) DO NOTHING
  RETURNING id, person_id, type, created_at
), counted AS (
  -- In key order, so concurrent appends (replicas sharing a store) lock count rows in one order.
  INSERT INTO person_event_counts (person_id, type, count, first_at, last_at, first_event_id)
  SELECT s.person_id, s.type, count(*), min(s.created_at), max(s.created_at), (array_agg(s.id ORDER BY o.ord))[1]
  FROM stored s JOIN (SELECT DISTINCT ON (id) id, ord FROM recs ORDER BY id, ord) o USING (id)
  GROUP BY s.person_id, s.type ORDER BY s.person_id, s.type
  ON CONFLICT (person_id, type) DO UPDATE SET count = person_event_counts.count + EXCLUDED.count,
    first_at = LEAST(person_event_counts.first_at, EXCLUDED.first_at), last_at = GREATEST(person_event_counts.last_at, EXCLUDED.last_at)
)${analytics ? `, analytics AS (
  INSERT INTO analytics_events (id, workspace_id, person_id, external_id, type, parameters, created_at)
  SELECT id, workspace_id, person_id, external_id, type, parameters, created_at FROM recs
  ON CONFLICT (id) DO NOTHING
)` : ''}
SELECT 1`;
}

/** The statement applying `$1`, a JSON array of event records; `analytics`: also into the embedded analytics table. */
export const applyEvents = (analytics: boolean): Prepared => prepared(`apply-events-${analytics}`, applySql(analytics));

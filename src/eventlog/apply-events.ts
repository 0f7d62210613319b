// Applies event records to the store in one statement: `events` (what the read routes and
// deletes use) and the per-person counts. The embedded Log runs it as its append
// (eventlog/event-log.ts); the JetStream Log's store sink runs it on what it fetched
// (eventlog/event-sink.ts).
//
// Without ClickHouse the store is the analytics store: `events` for the living, and
// `analytics_events` for the events of deleted people (store/people.ts moves them there), so
// an event is written once, not once more as a copy. Events of a person deleted meanwhile are
// dropped from `events`, and written to `analytics_events` here (`analytics`).
//
// Applied exactly once: events already stored are skipped (ON CONFLICT) and only newly
// stored ones are counted, so a redelivered batch is harmless. Events of a person merged away
// follow the redirect. A count row created here names the first of its events in the records' order
// (first_event_id, for first_occurrence triggers).
//
// A record without a person_id names its person by external_id alone (the embedded Log's
// appends of people not in the actor's cache): the person is found, or created bare with the
// record's new_person_id, in this statement and its commit, so a new person costs no
// statement or commit of its own. Those records are the statement's rows: their ordinal in
// `$1`, their person, and whether this statement created it (for the first of its records).
import { prepared, type Prepared } from '../store/db.js';

const COLUMNS = '(id uuid, workspace_id uuid, person_id uuid, external_id text, type text, parameters jsonb, created_at timestamptz, new_person_id uuid)';

function applySql(analytics: boolean): string {
  return `
WITH recs AS (
  SELECT * FROM ROWS FROM (jsonb_to_recordset($1::text::jsonb) AS ${COLUMNS}) WITH ORDINALITY AS r(id, workspace_id, person_id, external_id, type, parameters, created_at, new_person_id, ord)
), found AS MATERIALIZED (
  -- Scalar subqueries, so each is an index probe per record: as joins, the planner (which
  -- expects 100 records) hashed the whole people table for every batch. Materialized, so the
  -- probes run once however often they are read below.
  SELECT recs.ord, CASE WHEN recs.person_id IS NOT NULL
    THEN (SELECT p.id FROM people p WHERE p.id = COALESCE((SELECT rd.to_id FROM person_redirects rd WHERE rd.from_id = recs.person_id), recs.person_id))
    ELSE (SELECT p.id FROM people p WHERE p.workspace_id = recs.workspace_id AND p.external_id = recs.external_id) END AS person_id
  FROM recs
), created AS (
  INSERT INTO people (id, workspace_id, external_id)
  SELECT DISTINCT ON (r.workspace_id, r.external_id) r.new_person_id, r.workspace_id, r.external_id
  FROM recs r JOIN found f USING (ord) WHERE r.person_id IS NULL AND f.person_id IS NULL
  ORDER BY r.workspace_id, r.external_id, r.ord
  -- Created by another transaction since this statement's snapshot (an identify): theirs is
  -- the person, and DO UPDATE (a no-op) is what returns its id.
  ON CONFLICT (workspace_id, external_id) DO UPDATE SET external_id = EXCLUDED.external_id
  RETURNING id, workspace_id, external_id
), resolved AS MATERIALIZED (
  SELECT recs.ord, recs.id, recs.workspace_id, recs.external_id, recs.type, recs.parameters, recs.created_at,
    recs.person_id AS given_person_id, recs.new_person_id, COALESCE(f.person_id, c.id) AS person_id
  FROM recs JOIN found f USING (ord)
  LEFT JOIN created c ON recs.person_id IS NULL AND f.person_id IS NULL AND c.workspace_id = recs.workspace_id AND c.external_id = recs.external_id
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
  SELECT id, workspace_id, given_person_id, external_id, type, parameters, created_at FROM resolved WHERE person_id IS NULL
  ON CONFLICT (id) DO NOTHING
)` : ''}
SELECT ord, person_id::text AS person_id, person_id = new_person_id AS created FROM resolved WHERE given_person_id IS NULL`;
}

/** The statement applying `$1`, a JSON array of event records; `analytics`: the store is the analytics store (no ClickHouse). Its rows are {@link PersonOfRecord}s. */
export const applyEvents = (analytics: boolean): Prepared => prepared(`apply-events-${analytics}`, applySql(analytics));

/** A row of the statement: the person of the record at `ord` (1-based) that named them by external_id. */
export interface PersonOfRecord {
  ord: string;
  person_id: string;
  created: boolean;
}

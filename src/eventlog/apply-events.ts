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
//
// Records carrying a message_id (a client's messageId; docs/ingest.md, messageId) go through a
// variant of the statement, so the records without one keep this one untouched: a message_id
// accepted in the last 7 days (`ingest_message_ids`), or repeated among the records, writes
// nothing and is answered with its first event; the others claim their message_id in the
// same commit as their event, so a crash cannot separate the two.
import { prepared, type Prepared } from '../store/db.js';
import { MESSAGE_ID_WINDOW } from '../store/ingest-messages.js';

const COLUMNS = '(id uuid, workspace_id uuid, person_id uuid, external_id text, type text, parameters jsonb, created_at timestamptz, new_person_id uuid)';

/** With message ids: the records that claim theirs (`recs`), those repeating one (`prior`, `firsts`). */
const DEDUP_RECS = `
WITH given AS (
  SELECT * FROM ROWS FROM (jsonb_to_recordset($1::text::jsonb) AS ${COLUMNS.slice(0, -1)}, message_id text)) WITH ORDINALITY AS r(id, workspace_id, person_id, external_id, type, parameters, created_at, new_person_id, message_id, ord)
), prior AS MATERIALIZED (
  -- Lateral with LIMIT, never flattened into a join (which could hash the whole table): an index probe each, as found below.
  SELECT g.ord, m.event_id, m.person_id FROM given g CROSS JOIN LATERAL (
    SELECT m.event_id, m.person_id FROM ingest_message_ids m
    WHERE m.workspace_id = g.workspace_id AND m.kind = 'track' AND m.message_id = g.message_id AND m.accepted_at > now() - ${MESSAGE_ID_WINDOW} LIMIT 1
  ) m
), firsts AS MATERIALIZED (
  SELECT DISTINCT ON (workspace_id, message_id) ord, workspace_id, message_id FROM given
  WHERE message_id IS NOT NULL AND ord NOT IN (SELECT ord FROM prior) ORDER BY workspace_id, message_id, ord
), recs AS MATERIALIZED (
  SELECT * FROM given WHERE message_id IS NULL OR ord IN (SELECT ord FROM firsts)
)`;

/**
 * With message ids: each claims its message_id (one older than the window is taken over), and
 * only a record whose claim it made is stored; `claimed` is the events that may be written.
 */
const DEDUP_CLAIM = `, claimed AS (
  INSERT INTO ingest_message_ids AS m (workspace_id, kind, message_id, event_id, person_id)
  SELECT workspace_id, 'track', message_id, id, person_id FROM resolved WHERE message_id IS NOT NULL
  ON CONFLICT (workspace_id, kind, message_id) DO UPDATE SET event_id = EXCLUDED.event_id, person_id = EXCLUDED.person_id, accepted_at = now()
    WHERE m.accepted_at <= now() - ${MESSAGE_ID_WINDOW}
  RETURNING event_id
)`;

/**
 * With message ids, a row for every record: a repeat names its first event (`event_id` and
 * what it stored); `raced`: its message_id was claimed by a transaction this one could not
 * see (answered 503, and its retry is a repeat).
 */
const DEDUP_ROWS = `
SELECT ord, person_id::text AS person_id, person_id = new_person_id AS created, NULL AS event_id, NULL AS type, NULL::jsonb AS parameters, NULL::timestamptz AS created_at, message_id IS NOT NULL AND id NOT IN (SELECT event_id FROM claimed) AS raced FROM resolved
UNION ALL
SELECT p.ord, p.person_id::text, false, p.event_id::text, e.type, e.parameters, e.created_at, false
FROM prior p LEFT JOIN LATERAL (SELECT type, parameters, created_at FROM events WHERE id = p.event_id LIMIT 1) e ON true
UNION ALL
SELECT g.ord, r.person_id::text, false, r.id::text, r.type, r.parameters, r.created_at, r.id NOT IN (SELECT event_id FROM claimed)
FROM given g JOIN firsts f ON f.workspace_id = g.workspace_id AND f.message_id = g.message_id AND f.ord <> g.ord JOIN resolved r ON r.ord = f.ord`;

function applySql(analytics: boolean, dedup: boolean): string {
  const kept = dedup ? ' AND (message_id IS NULL OR id IN (SELECT event_id FROM claimed))' : '';
  return `${dedup ? DEDUP_RECS : `
WITH recs AS (
  SELECT * FROM ROWS FROM (jsonb_to_recordset($1::text::jsonb) AS ${COLUMNS}) WITH ORDINALITY AS r(id, workspace_id, person_id, external_id, type, parameters, created_at, new_person_id, ord)
)`}, found AS MATERIALIZED (
  -- Scalar subqueries, so each is an index probe per record: as joins, the planner (which
  -- expects 100 records) hashed the whole people table for every batch. Materialized, so the
  -- probes run once however often they are read below. Each record's own fields come along,
  -- so nothing below joins the records to their probes: the planner knows nothing of these
  -- row sets, and a group of 5,300 records whose people were new got a nested loop of
  -- 28,000,000 comparisons there (10 s a statement).
  SELECT recs.*, CASE WHEN recs.person_id IS NOT NULL
    THEN (SELECT p.id FROM people p WHERE p.id = COALESCE((SELECT rd.to_id FROM person_redirects rd WHERE rd.from_id = recs.person_id), recs.person_id))
    ELSE (SELECT p.id FROM people p WHERE p.workspace_id = recs.workspace_id AND p.external_id = recs.external_id) END AS found_id
  FROM recs
), created AS (
  INSERT INTO people (id, workspace_id, external_id)
  SELECT DISTINCT ON (workspace_id, external_id) new_person_id, workspace_id, external_id
  FROM found WHERE person_id IS NULL AND found_id IS NULL
  ORDER BY workspace_id, external_id, ord
  -- Created by another transaction since this statement's snapshot (an identify): theirs is
  -- the person, and DO UPDATE (a no-op) is what returns its id.
  ON CONFLICT (workspace_id, external_id) DO UPDATE SET external_id = EXCLUDED.external_id
  RETURNING id, workspace_id, external_id
), created_ids AS MATERIALIZED (
  -- One JSON object of the people created, keyed by workspace and external_id: each record
  -- below looks its person up in it (a binary search), whatever the planner would join.
  SELECT jsonb_object_agg(workspace_id::text || ' ' || external_id, id) AS ids FROM created
), resolved AS MATERIALIZED (
  SELECT f.ord, f.id, f.workspace_id, f.external_id, f.type, f.parameters, f.created_at,
    f.person_id AS given_person_id, f.new_person_id${dedup ? ', f.message_id' : ''},
    COALESCE(f.found_id, CASE WHEN f.person_id IS NULL THEN ((SELECT ids FROM created_ids) ->> (f.workspace_id::text || ' ' || f.external_id))::uuid END) AS person_id
  FROM found f
)${dedup ? DEDUP_CLAIM : ''}, stored AS (
  INSERT INTO events (id, workspace_id, person_id, type, parameters, created_at)
  SELECT r.id, r.workspace_id, r.person_id, r.type, r.parameters, r.created_at
  FROM resolved r WHERE r.person_id IS NOT NULL${kept}
  ON CONFLICT (id) DO NOTHING
  RETURNING id
), stored_ids AS MATERIALIZED (
  SELECT jsonb_object_agg(id::text, true) AS ids FROM stored
), counted AS (
  -- In key order, so concurrent appends (replicas sharing a store) lock count rows in one order.
  -- The events this statement stored (a redelivered one is stored once, counted once), each
  -- once should the records repeat it, looked up as created_ids is.
  INSERT INTO person_event_counts (person_id, type, count, first_at, last_at, first_event_id)
  SELECT r.person_id, r.type, count(*), min(r.created_at), max(r.created_at), (array_agg(r.id ORDER BY r.ord))[1]
  FROM (SELECT DISTINCT ON (id) id, ord, person_id, type, created_at FROM resolved ORDER BY id, ord) r
  WHERE (SELECT ids FROM stored_ids) ? r.id::text
  GROUP BY r.person_id, r.type ORDER BY r.person_id, r.type
  ON CONFLICT (person_id, type) DO UPDATE SET count = person_event_counts.count + EXCLUDED.count,
    first_at = LEAST(person_event_counts.first_at, EXCLUDED.first_at), last_at = GREATEST(person_event_counts.last_at, EXCLUDED.last_at)
)${analytics ? `, analytics AS (
  INSERT INTO analytics_events (id, workspace_id, person_id, external_id, type, parameters, created_at)
  SELECT id, workspace_id, given_person_id, external_id, type, parameters, created_at FROM resolved WHERE person_id IS NULL${kept}
  ON CONFLICT (id) DO NOTHING
)` : ''}${dedup ? DEDUP_ROWS : `
SELECT ord, person_id::text AS person_id, person_id = new_person_id AS created FROM resolved WHERE given_person_id IS NULL`}`;
}

/**
 * The statement applying `$1`, a JSON array of event records; `analytics`: the store is the
 * analytics store (no ClickHouse); `dedup`: some records carry a message_id. Its rows are
 * {@link PersonOfRecord}s ({@link RecordOutcome}s with `dedup`).
 */
export const applyEvents = (analytics: boolean, dedup = false): Prepared => prepared(`apply-events-${analytics}${dedup ? '-dedup' : ''}`, applySql(analytics, dedup));

/** A row of the statement: the person of the record at `ord` (1-based) that named them by external_id. */
export interface PersonOfRecord {
  ord: string;
  person_id: string;
  created: boolean;
}

/** A row of the statement with message ids: one per record (a record with its person and no message_id: person_id null unless a repeat). */
export interface RecordOutcome extends PersonOfRecord {
  /** The first event of the message this record repeats, with what it stored (null fields: since deleted). */
  event_id: string | null;
  type: string | null;
  parameters: Record<string, unknown> | null;
  created_at: Date | null;
  raced: boolean;
}

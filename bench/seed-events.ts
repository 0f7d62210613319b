// `--seed-events N`: events stored before the load (not timed), for the read scenario. Through
// HTTP (track/batch) storing runs at ~20k events/s, 8 minutes for 10 M; this writes straight
// into the PostgreSQL Herald uses, set-based (`INSERT … SELECT` over `generate_series`, a
// million rows a statement), in the row shape Herald's apply statement writes
// (src/eventlog/apply-events.ts):
//
// - `people`: `--people` per workspace, external ids `p-0` …, as the resolver creates them
//   (id, workspace, external id; the rest defaults);
// - `events`: N, spread evenly over the last 30 days in time order (as they would have arrived),
//   each for a random workspace, person and bench event name, with the parameters `track` sends,
//   a v7 id of its created_at (Herald's ids are v7) and ingested_at = created_at;
// - `person_event_counts`: aggregated from the events (count, first and last, first event).
//
// Not seeded: `analytics_events` (the embedded analytics copy, which no read route reads; with
// ClickHouse it is not in PostgreSQL at all).
//
// All of it in one transaction, rolled back on failure. When `events` is empty (a run's own
// Herald) its secondary indexes are dropped first and rebuilt from their own definitions
// (pg_get_indexdef) after the rows are in, which a bulk load does in a fraction of the time that
// maintaining them row by row takes; otherwise the rows go in with the indexes in place. The
// foreign-key triggers are skipped (session_replication_role = replica) when the role may (the
// embedded server's is a superuser): the rows are consistent by construction. Then
// VACUUM (ANALYZE) of the three tables, as autovacuum would get to eventually, and a CHECKPOINT
// (when the role may), so that writing the seeded pages out does not overlap the measurement.
import pg from 'pg';
import { EVENT_NAMES, PLANS, SEED_SPAN_MS, SOURCES } from './scenarios.js';
import { round } from './stats.js';

/** Rows per INSERT statement. */
const CHUNK = 1_000_000;

export interface SeedResult {
  events: number;
  workspaces: number;
  people_per_workspace: number;
  /** People rows inserted (those already there are kept). */
  people_inserted: number;
  person_event_counts: number;
  /** created_at of the first and the last event. */
  from: string;
  to: string;
  /** Secondary indexes of `events` dropped before the load and rebuilt after it. */
  rebuilt_indexes: string[];
  /** Whether the foreign-key triggers were skipped (session_replication_role = replica). */
  fk_triggers_skipped: boolean;
  seconds: { people: number; events: number; indexes: number; counts: number; commit: number; vacuum_analyze: number; checkpoint: number; total: number };
  /** Whether the CHECKPOINT after the seeding ran (it needs a superuser or pg_checkpoint). */
  checkpointed: boolean;
  /** Sizes after the seeding (the whole tables, not only the seeded rows). */
  size_mb: { events: number; events_indexes: number; people: number; person_event_counts: number };
}

const since = (t: number) => round((Date.now() - t) / 1000, 1);

/**
 * A v7 UUID in SQL (RFC 9562: 48 bits of Unix milliseconds, version 7, 12 bits, variant, 62
 * bits) from SQL expressions: `ms` (bigint), `a` (below 4096) and `b` (below 2^60), which make
 * it unique. Herald's random bits are counters here: gen_random_uuid() alone cost 2.5 µs a row.
 */
const v7 = (ms: string, a: string, b: string) => `(lpad(to_hex(${ms}), 12, '0') || '7' || lpad(to_hex(${a}), 3, '0') || '8' || lpad(to_hex(${b}), 15, '0'))::uuid`;

/** Distinct parameter objects the events take in turn: building one per row cost 3 µs. */
const PARAMETER_SETS = 256;

/** Parameters shaped as `track` sends them (bench/scenarios.ts). */
function parameterSets(): string[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(Math.random() * xs.length)]!;
  return Array.from({ length: PARAMETER_SETS }, (_, seq) =>
    JSON.stringify({ source: pick(SOURCES), plan: pick(PLANS), amount: Math.floor(Math.random() * 10_000) / 100, screen: `screen-${Math.floor(Math.random() * 50)}`, seq }),
  );
}

/**
 * Seeds `events` events over `workspaceIds` × `people` people (see the file's comment), into the
 * database at `url`. `log` reports progress.
 */
export async function seedEvents(url: string, workspaceIds: string[], people: number, events: number, log: (msg: string) => void): Promise<SeedResult> {
  const t0 = Date.now();
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query("SET work_mem = '1GB'");
    await db.query("SET maintenance_work_mem = '1GB'");
    // Nothing here is acknowledged to anyone: the commit need not wait for the WAL flush.
    await db.query('SET synchronous_commit = off');
    const fkTriggersSkipped = await db.query('SET session_replication_role = replica').then(
      () => true,
      () => false,
    );
    const seconds = { people: 0, events: 0, indexes: 0, counts: 0, commit: 0, vacuum_analyze: 0, checkpoint: 0, total: 0 };
    await db.query('BEGIN');

    // Person `p-<i>` of the w-th workspace has id v7(now, w, i): the events compute their
    // person's id instead of looking it up. The workspaces are the run's own, so none of these
    // people exists yet; if one did, the INSERT fails (no event can then name a wrong id).
    let t = Date.now();
    const peopleMs = Date.now();
    let peopleInserted = 0;
    for (const [w, ws] of workspaceIds.entries()) {
      for (let lo = 0; lo < people; lo += CHUNK) {
        const r = await db.query(
          `INSERT INTO people (id, workspace_id, external_id)
           SELECT ${v7('$1::bigint', '$2::int', 'i')}, $3, 'p-' || i FROM generate_series($4::bigint, $5::bigint - 1) AS i`,
          [peopleMs, w, ws, lo, Math.min(people, lo + CHUNK)],
        );
        peopleInserted += r.rowCount ?? 0;
      }
    }
    seconds.people = since(t);
    log(`seeding: ${peopleInserted.toLocaleString('en-US')} people in ${seconds.people} s`);

    // A bulk load into an empty table: build its secondary indexes once, after the rows.
    const empty = (await db.query('SELECT NOT EXISTS (SELECT 1 FROM events) AS empty')).rows[0].empty as boolean;
    const indexes = empty
      ? (await db.query<{ name: string; def: string }>(`SELECT indexrelid::regclass::text AS name, pg_get_indexdef(indexrelid) AS def FROM pg_index WHERE indrelid = 'events'::regclass AND NOT indisprimary ORDER BY 1`)).rows
      : [];
    for (const ix of indexes) await db.query(`DROP INDEX ${ix.name}`);

    t = Date.now();
    const to = Date.now();
    const from = to - SEED_SPAN_MS;
    // Event k at from + k × step, to the millisecond as Herald's are (distinct up to 2.6e9
    // events in 30 days), so ids (v7 of that millisecond) rise with created_at; the heap and the
    // primary key fill in time order, as events arriving over the span would.
    const stepMs = events > 1 ? SEED_SPAN_MS / (events - 1) : 0;
    const params = parameterSets();
    for (let lo = 0; lo < events; lo += CHUNK) {
      const hi = Math.min(events, lo + CHUNK);
      await db.query(
        `INSERT INTO events (id, workspace_id, person_id, type, parameters, created_at, ingested_at)
         SELECT ${v7('e.ms', 'e.k % 4096', 'e.k')}, ($1::uuid[])[1 + e.w], ${v7('$2::bigint', 'e.w', 'e.i')}, e.type, e.parameters, e.at, e.at
         FROM (
           SELECT k, ms, timestamptz 'epoch' + ms * interval '1 millisecond' AS at,
             floor(random() * cardinality($1::uuid[]))::int AS w,
             floor(random() * $3::bigint)::bigint AS i,
             ($4::text[])[1 + floor(random() * cardinality($4::text[]))::int] AS type,
             ($5::jsonb[])[1 + (k % cardinality($5::jsonb[]))::int] AS parameters
           FROM (SELECT k, $6::bigint + floor(k * $7::float8)::bigint AS ms FROM generate_series($8::bigint, $9::bigint - 1) AS k) s
         ) e`,
        [workspaceIds, peopleMs, people, EVENT_NAMES, params, from, stepMs, lo, hi],
      );
      log(`seeding: ${hi.toLocaleString('en-US')} / ${events.toLocaleString('en-US')} events (${since(t)} s)`);
    }
    seconds.events = since(t);

    t = Date.now();
    for (const ix of indexes) await db.query(ix.def);
    seconds.indexes = since(t);
    if (indexes.length) log(`seeding: rebuilt ${indexes.map((i) => i.name).join(', ')} in ${seconds.indexes} s`);

    // The workspaces are the run's own: every event of theirs is a seeded one.
    t = Date.now();
    const counts = await db.query(
      `INSERT INTO person_event_counts (person_id, type, count, first_at, last_at, first_event_id)
       SELECT person_id, type, count(*), min(created_at), max(created_at), (array_agg(id ORDER BY created_at, id))[1]
       FROM events WHERE workspace_id = ANY ($1::uuid[]) GROUP BY person_id, type
       ON CONFLICT (person_id, type) DO NOTHING`,
      [workspaceIds],
    );
    seconds.counts = since(t);
    log(`seeding: ${(counts.rowCount ?? 0).toLocaleString('en-US')} person_event_counts rows in ${seconds.counts} s`);

    t = Date.now();
    await db.query('COMMIT');
    seconds.commit = since(t);
    t = Date.now();
    await db.query('VACUUM (ANALYZE) people, events, person_event_counts');
    seconds.vacuum_analyze = since(t);
    log(`seeding: VACUUM (ANALYZE) in ${seconds.vacuum_analyze} s`);
    // The seeded pages written out now, not by a checkpoint spread over the measured phase.
    t = Date.now();
    const checkpointed = await db.query('CHECKPOINT').then(
      () => true,
      () => false,
    );
    seconds.checkpoint = since(t);
    seconds.total = since(t0);

    const mb = async (sql: string) => round(Number((await db.query(sql)).rows[0].b) / 2 ** 20);
    return {
      events,
      workspaces: workspaceIds.length,
      people_per_workspace: people,
      people_inserted: peopleInserted,
      person_event_counts: counts.rowCount ?? 0,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      rebuilt_indexes: indexes.map((i) => i.name),
      fk_triggers_skipped: fkTriggersSkipped,
      seconds,
      checkpointed,
      size_mb: {
        events: await mb("SELECT pg_table_size('events') AS b"),
        events_indexes: await mb("SELECT pg_indexes_size('events') AS b"),
        people: await mb("SELECT pg_total_relation_size('people') AS b"),
        person_event_counts: await mb("SELECT pg_total_relation_size('person_event_counts') AS b"),
      },
    };
  } catch (err) {
    await db.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    await db.end();
  }
}

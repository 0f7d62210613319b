// Moves events from the Log into the store's `events` (what the read routes and deletes
// use), the per-person counts, and the embedded analytics table (unless ClickHouse is the
// analytics store: then a second JetStream consumer writes it). One statement writes a whole
// batch, so a batch is applied exactly once: events already stored are skipped (ON CONFLICT)
// and only newly stored ones are counted, which makes a redelivered batch harmless. Events of
// a person deleted meanwhile are dropped (their analytics copy stays); events of a person
// merged away follow the redirect.
//
// `recs` carries each record's Log position (seq, ord), so a count row created here names the
// first of its events in Log order (first_event_id, for first_occurrence triggers).
//
// Poison: a batch the store (or ClickHouse) refuses for what it carries rather than for an
// outage (store/db.ts `isDataError`, analytics/clickhouse.ts `isRefusedData`) is applied again
// in halves until each refused record is alone (poison.ts); that record goes to the
// `dead_letters` table (store/dead-letters.ts) and off the Log, and everything else flows. An
// outage keeps the Log as it is: retried with backoff, nothing set aside.
import { isDataError, prepared, type Db, type Queryable } from '../store/db.js';
import type { Notifications } from '../store/pg.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, type Consumer, type JsMsg } from '@nats-io/jetstream';
import { SINK_ACK_WAIT_MS, type StreamNames } from './jetstream.js';
import type { EventRecord } from '../domain/events.js';
import { logger } from '../logger.js';
import { isRefusedData, type AnalyticsStore } from '../analytics/clickhouse.js';
import { recordDeadLetters, type DeadLetter, type DeadLetterSink } from '../store/dead-letters.js';
import { isolatePoison } from './poison.js';

const COLUMNS = '(id uuid, workspace_id uuid, person_id uuid, external_id text, type text, parameters jsonb, created_at timestamptz)';
/** A JSON array of records as rows, with `ord` their position in it. */
const records = (json: string) => `ROWS FROM (jsonb_to_recordset(${json}) AS ${COLUMNS}) WITH ORDINALITY AS r(id, workspace_id, person_id, external_id, type, parameters, created_at, ord)`;

function applySql(source: string, analytics: boolean): string {
  return `
WITH ${source}, resolved AS (
  -- Scalar subqueries, so each is an index probe per record: as joins, the planner (which
  -- expects 100 records) hashed the whole people table for every batch.
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
  INSERT INTO person_event_counts (person_id, type, count, first_at, last_at, first_event_id)
  SELECT s.person_id, s.type, count(*), min(s.created_at), max(s.created_at), (array_agg(s.id ORDER BY o.seq, o.ord))[1]
  FROM stored s JOIN (SELECT DISTINCT ON (id) id, seq, ord FROM recs ORDER BY id, seq, ord) o USING (id) GROUP BY s.person_id, s.type
  ON CONFLICT (person_id, type) DO UPDATE SET count = person_event_counts.count + EXCLUDED.count,
    first_at = LEAST(person_event_counts.first_at, EXCLUDED.first_at), last_at = GREATEST(person_event_counts.last_at, EXCLUDED.last_at)
  RETURNING 1
)${analytics ? `, analytics AS (
  INSERT INTO analytics_events (id, workspace_id, person_id, external_id, type, parameters, created_at)
  SELECT id, workspace_id, person_id, external_id, type, parameters, created_at FROM recs
  ON CONFLICT (id) DO NOTHING
  RETURNING 1
)` : ''}
SELECT (SELECT count(*) FROM recs)::int AS events, (SELECT count(*) FROM counted)::int AS counted`;
}

const BATCH_ROWS = 200;
/** Embedded Log: take the oldest rows off `log_entries` in the same statement. */
const FROM_STORE_LOG = prepared('sink-store-log', applySql(`taken AS (
  DELETE FROM log_entries WHERE seq IN (
    SELECT seq FROM log_entries WHERE topic = 'events' ORDER BY seq LIMIT ${BATCH_ROWS} FOR UPDATE SKIP LOCKED
  ) RETURNING seq, payload
), recs AS (SELECT r.*, taken.seq FROM taken, ${records('taken.payload')})`, true));
/** JetStream (and the embedded Log's isolation pass): records passed as one JSON parameter. */
const fromParam = (analytics: boolean) => prepared(`sink-records-${analytics}`, applySql(`recs AS (SELECT r.*, 0::bigint AS seq FROM ${records('$1::text::jsonb')})`, analytics));
const FROM_PARAM_EMBEDDED = fromParam(true);
/**
 * The oldest entries of the embedded Log, locked for this transaction, each as the JSON texts
 * of its records (`records` null: the entry is not an array; `payload` is then its text).
 */
const TAKE_ENTRIES = `SELECT seq,
    CASE WHEN jsonb_typeof(payload) = 'array' THEN ARRAY(SELECT x::text FROM jsonb_array_elements(payload) WITH ORDINALITY AS e(x, o) ORDER BY o) END AS records,
    CASE WHEN jsonb_typeof(payload) = 'array' THEN NULL ELSE payload::text END AS payload
  FROM log_entries WHERE topic = 'events' ORDER BY seq LIMIT ${BATCH_ROWS} FOR UPDATE SKIP LOCKED`;

const NOT_A_LIST = new Error('not an array of event records');

/** Logs what was set aside (an operator reads the rows in `dead_letters`). */
function reportDeadLetters(sink: DeadLetterSink, letters: DeadLetter[]): void {
  if (letters.length === 0) return;
  logger.error('records set aside in dead_letters: refused for what they carry (everything else was applied)', {
    sink,
    count: letters.length,
    refs: letters.slice(0, 5).map((l) => l.ref),
    err: letters[0]!.error,
  });
}

/** Runs `fn` in a savepoint of `q`'s transaction, rolled back to when it fails. */
async function inSavepoint(q: Queryable, fn: () => Promise<unknown>): Promise<void> {
  await q.query('SAVEPOINT part');
  try {
    await fn();
  } catch (err) {
    await q.query('ROLLBACK TO SAVEPOINT part').catch(() => {});
    throw err;
  }
  await q.query('RELEASE SAVEPOINT part');
}

export interface Sink {
  start(): void;
  /** Drains what it can, then stops. */
  stop(): Promise<void>;
}

const FULL_BATCH_EVENTS = 500;
const FETCH_EXPIRES_MS = 1000;
const SMALL_BATCH_PAUSE_MS = 10;
const MAX_BACKOFF_MS = 5000;

/**
 * Runs `step` (which returns how many events it moved) until stopped. When the Log is empty it
 * awaits `idle()`, which returns when there may be work again (so an idle Herald costs nothing).
 */
function sinkLoop(name: string, step: () => Promise<number>, idle: () => Promise<void>, drain: () => Promise<void>): Sink {
  let stopped = false;
  let running: Promise<void> | undefined;
  // Stopping ends an idle wait at once (shutdown must not wait out the backstop).
  let stopNow!: () => void;
  const stopping = new Promise<void>((r) => (stopNow = r));
  const loop = async () => {
    let backoff = 50;
    while (!stopped) {
      try {
        const moved = await step();
        backoff = 50;
        if (moved >= FULL_BATCH_EVENTS) continue;
        // A small batch: let more gather before the next statement (each has a fixed cost
        // that would otherwise delay the requests' own writes to the store).
        if (moved > 0) await new Promise((r) => setTimeout(r, SMALL_BATCH_PAUSE_MS));
        else await Promise.race([idle(), stopping]);
      } catch (err) {
        // Nothing was taken off the log: retry with backoff until the store answers.
        logger.warn(`${name} failed; retrying`, { err, retryMs: backoff });
        await Promise.race([new Promise((r) => setTimeout(r, backoff)), stopping]);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  };
  return {
    start: () => void (running = loop()),
    async stop() {
      stopped = true;
      stopNow();
      await running;
      await drain();
    },
  };
}

/** How long the store sink sleeps without a notification: a backstop, should one be missed. */
const IDLE_BACKSTOP_MS = 5000;

/**
 * The embedded Log's isolation pass, after its one statement was refused: in one transaction,
 * lock the oldest entries, apply their records in halves (each part in a savepoint) until each
 * refused record is alone, record those in `dead_letters`, and delete the entries. Applied
 * exactly once like the one statement: nothing is taken off the Log unless it was applied or
 * set aside in the same commit. Returns how many records it handled.
 */
async function setAsideFromStoreLog(db: Db): Promise<number> {
  return db.tx(async (q) => {
    const entries = (await q.query<{ seq: number; records: string[] | null; payload: string | null }>(TAKE_ENTRIES)).rows;
    const letters: DeadLetter[] = [];
    const records: { ref: string; json: string }[] = [];
    for (const e of entries) {
      if (e.records) e.records.forEach((json, i) => records.push({ ref: `log_entries:${e.seq}:${i}`, json }));
      else letters.push({ sink: 'store-log', ref: `log_entries:${e.seq}`, payload: e.payload ?? 'null', error: NOT_A_LIST });
    }
    const apply = (part: typeof records) => inSavepoint(q, () => q.query(FROM_PARAM_EMBEDDED, [`[${part.map((r) => r.json).join(',')}]`]));
    for (const { item, err } of await isolatePoison(records, apply, isDataError)) letters.push({ sink: 'store-log', ref: item.ref, payload: item.json, error: err });
    await recordDeadLetters(q, letters);
    await q.query('DELETE FROM log_entries WHERE seq = ANY($1::bigint[])', [entries.map((e) => e.seq)]);
    reportDeadLetters('store-log', letters);
    return records.length;
  });
}

/** The sink of the embedded Log; it sleeps until an append's NOTIFY (store/pg.ts `listen`). */
export function storeLogSink(db: Db, appended: Notifications): Sink {
  const step = async () => {
    try {
      return (await db.query<{ events: number }>(FROM_STORE_LOG)).rows[0]!.events;
    } catch (err) {
      if (!isDataError(err)) throw err;
      return setAsideFromStoreLog(db);
    }
  };
  return sinkLoop('event sink', step, () => appended.wait(IDLE_BACKSTOP_MS), async () => {
    for (let i = 0; i < 1000; i++) if ((await step().catch(() => 0)) === 0) break;
    await appended.close();
  });
}

/** How often a sink tells JetStream it is still applying a batch (in-progress ack). */
const WORKING_EVERY_MS = Math.floor(SINK_ACK_WAIT_MS / 2.5);

interface ConsumerSink {
  label: string;
  sink: DeadLetterSink;
  consumer: string;
  /** Applies records; must make a redelivered batch harmless. */
  apply: (records: unknown[]) => Promise<unknown>;
  /** Whether `apply` failed for what the records carry (the batch is then halved), not for an outage. */
  isPoison: (err: unknown) => boolean;
}

/**
 * A sink on one durable consumer of the JetStream Log: fetch a batch, `apply` it, then
 * acknowledge it. Acknowledged only after `apply` succeeded, or after the records it refused
 * are committed to `dead_letters` (in `db`): a crash in between redelivers, which `apply` and
 * the dead-letter insert (one row per sink and stream position) make harmless. While `apply`
 * fails for an outage nothing is acknowledged; JetStream keeps the messages and the sink
 * retries with backoff.
 */
function jetStreamConsumerSink(o: ConsumerSink, db: Db, nc: NatsConnection, stream: string): Sink {
  const js = jetstream(nc);
  // Looked up once (each lookup is a request to the server), again after a failed step.
  let consumer: Consumer | undefined;
  const step = async () => {
    consumer ??= await js.consumers.get(stream, o.consumer);
    // A long poll: an empty Log answers after `expires`, so the loop needs no pause of its own.
    const msgs = await consumer.fetch({ max_messages: 200, expires: FETCH_EXPIRES_MS });
    const batch: JsMsg[] = [];
    for await (const m of msgs) {
      batch.push(m);
      if (batch.length >= 200) break;
    }
    if (batch.length === 0) return 0;
    // Not redelivered while this batch is applied, however long that takes (the store slow,
    // poison being isolated); a crash leaves them to be redelivered after ack_wait.
    const working = setInterval(() => {
      try {
        for (const m of batch) m.working();
      } catch {
        // The connection is closing: the batch is redelivered after ack_wait, harmlessly.
      }
    }, WORKING_EVERY_MS);
    let records: Unpacked[];
    try {
      const letters: DeadLetter[] = [];
      ({ records } = unpack(o.sink, stream, batch, letters));
      try {
        if (records.length > 0) await o.apply(records.map((r) => r.record));
      } catch (err) {
        if (!o.isPoison(err)) throw err;
        const refused = await isolatePoison(records, async (part) => void (await o.apply(part.map((r) => r.record))), o.isPoison, { err });
        for (const { item, err } of refused) letters.push({ sink: o.sink, ref: item.ref, payload: recordText(item), error: err });
      }
      await recordDeadLetters(db, letters);
      reportDeadLetters(o.sink, letters);
    } catch (err) {
      clearInterval(working);
      // Redeliver on the next fetch (after the loop's backoff), not only after ack_wait.
      for (const m of batch) m.nak();
      throw err;
    }
    clearInterval(working);
    for (const m of batch) m.ack();
    return records.length;
  };
  const guarded = () =>
    step().catch((err) => {
      consumer = undefined;
      throw err;
    });
  return sinkLoop(o.label, guarded, async () => {}, async () => {});
}

/** A record of a fetched message, with its place on the stream (`ref`). */
interface Unpacked {
  ref: string;
  record: unknown;
  msg: JsMsg;
}

/**
 * The records of `batch`, each with its place on the stream; a message that is not a JSON
 * array of records is set aside whole (added to `letters`).
 */
function unpack(sink: DeadLetterSink, stream: string, batch: JsMsg[], letters: DeadLetter[]): { records: Unpacked[] } {
  const records: Unpacked[] = [];
  for (const m of batch) {
    let parsed: unknown;
    try {
      parsed = m.json<unknown>();
    } catch (err) {
      letters.push({ sink, ref: `${stream}:${m.seq}`, payload: m.string(), error: err });
      continue;
    }
    if (!Array.isArray(parsed)) letters.push({ sink, ref: `${stream}:${m.seq}`, payload: m.string(), error: NOT_A_LIST });
    else parsed.forEach((record, i) => records.push({ ref: `${stream}:${m.seq}:${i}`, record, msg: m }));
  }
  return { records };
}

/** The record as JSON text; when it cannot be written again (nested too deeply), its whole message. */
function recordText(r: { record: unknown; msg: JsMsg }): string {
  try {
    return JSON.stringify(r.record);
  } catch {
    return r.msg.string();
  }
}

/** Records that cannot be serialized again (a RangeError: nested deeper than the serializer's stack). */
class UnserializableRecords extends Error {}

/** `records` as one JSON text, for a statement's parameter. */
function recordsJson(records: unknown[]): string {
  try {
    return JSON.stringify(records);
  } catch (err) {
    throw new UnserializableRecords(`event records that cannot be serialized: ${(err as Error).message}`, { cause: err });
  }
}

/** The store sink of the JetStream Log; it also fills the embedded analytics table unless ClickHouse does. */
export function jetStreamSink(db: Db, nc: NatsConnection, names: StreamNames, embeddedAnalytics: boolean): Sink {
  const sql = fromParam(embeddedAnalytics);
  const apply = (records: unknown[]) => db.query(sql, [recordsJson(records)]);
  const isPoison = (err: unknown) => isDataError(err) || err instanceof UnserializableRecords;
  return jetStreamConsumerSink({ label: 'jetstream sink', sink: 'jetstream-store', consumer: names.storeSink, apply, isPoison }, db, nc, names.stream);
}

/** The ClickHouse sink: its own consumer, so ClickHouse being down holds back nothing else. Its dead letters go to the store. */
export function clickHouseSink(analytics: AnalyticsStore, db: Db, nc: NatsConnection, names: StreamNames): Sink {
  const apply = (records: unknown[]) => analytics.write(records as EventRecord[]);
  return jetStreamConsumerSink({ label: 'clickhouse sink', sink: 'clickhouse', consumer: names.analyticsSink, apply, isPoison: isRefusedData }, db, nc, names.stream);
}

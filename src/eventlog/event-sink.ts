// The sinks of the JetStream Log: durable consumers that apply what they fetch to the store
// (eventlog/apply-events.ts) and, with CLICKHOUSE_URL, to ClickHouse. (The embedded Log
// needs none: its append writes the events where they are read.)
//
// Poison: a batch the store (or ClickHouse) refuses for what it carries rather than for an
// outage (store/db.ts `isDataError`, analytics/clickhouse.ts `isRefusedData`) is applied again
// in halves until each refused record is alone (poison.ts); that record goes to the
// `dead_letters` table (store/dead-letters.ts) and off the Log, and everything else flows. An
// outage keeps the Log as it is: retried with backoff, nothing set aside.
import { isDataError, type Db } from '../store/db.js';
import { applyEvents } from './apply-events.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, type Consumer, type JsMsg } from '@nats-io/jetstream';
import { MAX_MESSAGE_BYTES, SINK_ACK_WAIT_MS, SINK_FETCH_BYTES, type StreamNames } from './jetstream.js';
import type { EventRecord } from '../domain/events.js';
import { logger } from '../logger.js';
import { isRefusedData, type AnalyticsStore } from '../analytics/clickhouse.js';
import { recordDeadLetters, type DeadLetter, type DeadLetterSink } from '../store/dead-letters.js';
import { isolatePoison } from './poison.js';
import { groupBy } from '../util/group-by.js';
import { shardOf } from '../util/shard.js';
import { retry, type Backoff } from '../util/backoff.js';
import { countDeadLetters, countSinkBatch, sinkCaughtUp } from '../metrics/index.js';

const NOT_A_LIST = new Error('not an array of event records');

/** Logs what was set aside (an operator reads the rows in `dead_letters`). */
function reportDeadLetters(sink: DeadLetterSink, letters: DeadLetter[]): void {
  if (letters.length === 0) return;
  countDeadLetters(sink, letters.length);
  logger.error('records set aside in dead_letters: refused for what they carry (everything else was applied)', {
    sink,
    count: letters.length,
    refs: letters.slice(0, 5).map((l) => l.ref),
    err: letters[0]!.error,
  });
}

export interface Sink {
  start(): void;
  /** Finishes the batch in hand, then stops (the rest stays on the Log). */
  stop(): Promise<void>;
}

const FULL_BATCH_EVENTS = 500;
const FETCH_EXPIRES_MS = 1000;
const SMALL_BATCH_PAUSE_MS = 10;
/** An outage: tried again after 50 ms, doubling up to 5 s, until the store answers. */
const OUTAGE_BACKOFF: Backoff = { firstMs: 50, maxMs: 5000 };

/**
 * Runs `step` (which returns how many events it moved) until stopped. `step` waits for work
 * itself (a long poll of its consumer), so an idle Herald costs nothing.
 */
function sinkLoop(name: string, step: () => Promise<number>): Sink {
  let running: Promise<void> | undefined;
  // Stopping ends a backoff wait at once.
  const stopping = new AbortController();
  const loop = async () => {
    while (!stopping.signal.aborted) {
      // A failure took nothing off the log: the same step is tried again, the backoff starting
      // afresh after each success.
      const moved = await retry(step, {
        backoff: OUTAGE_BACKOFF,
        onRetry: (err, retryMs) => logger.warn(`${name} failed; retrying`, { err, retryMs }),
        signal: stopping.signal,
      }).catch((err: unknown) => {
        if (stopping.signal.aborted) return 0;
        throw err;
      });
      // A small batch: let more gather before the next statement (each has a fixed cost
      // that would otherwise delay the requests' own writes to the store).
      if (moved > 0 && moved < FULL_BATCH_EVENTS) await new Promise((r) => setTimeout(r, SMALL_BATCH_PAUSE_MS));
    }
  };
  return {
    start: () => void (running = loop()),
    async stop() {
      stopping.abort();
      await running;
    },
  };
}

const MAX_FETCH_MESSAGES = 200;
/** A sink's first fetch: as many of the largest messages as SINK_FETCH_BYTES holds. */
const FIRST_FETCH_MESSAGES = Math.floor(SINK_FETCH_BYTES / MAX_MESSAGE_BYTES);

/**
 * How many messages to fetch next: about SINK_FETCH_BYTES at the sizes of the batch just
 * taken, not empty (a message holds from one event to 512 KB of appends). A count, not the
 * fetch's `max_bytes`: nats.js ends such a fetch only once the bytes are used up, so a fetch of
 * small messages outlived the server's answer and failed on missed heartbeats. The bound holds
 * while sizes stay alike: small messages followed at once by full ones can make one fetch of up
 * to 200 × 512 KB.
 */
export function fetchSize(sizes: number[]): number {
  const bytes = sizes.reduce((n, size) => n + size, 0);
  return Math.max(1, Math.min(MAX_FETCH_MESSAGES, Math.floor((SINK_FETCH_BYTES * sizes.length) / Math.max(1, bytes))));
}

/** How often a sink tells JetStream it is still applying a batch (in-progress ack). */
const WORKING_EVERY_MS = Math.floor(SINK_ACK_WAIT_MS / 2.5);

const personOf = (record: unknown): string => {
  const id = (record as { person_id?: unknown } | null)?.person_id;
  return typeof id === 'string' ? id : '';
};

/**
 * `records` in at most `n` parts, each person's records in one part and in their order. Parts
 * share no person, so they can be applied at once without reordering anyone's events or
 * contending for a count row. (A merged-away person's late events follow a redirect in the
 * statement, so they may share a count row with another part: the statement locks count rows
 * in key order, so that only waits, and the row's first_event_id is then the first of the
 * parts to commit.)
 */
export function partsByPerson(records: unknown[], n: number): unknown[][] {
  return n <= 1 ? [records] : [...groupBy(records, (r) => shardOf(personOf(r), n)).values()];
}

/**
 * `applyPart` run on the parts of a batch (partsByPerson), up to `n` at once; settled once
 * every part has. A part that failed fails the batch, which is then retried or searched for
 * poison: the parts already applied are applied again harmlessly (both sinks skip what they
 * hold). An outage wins over poison: the batch is retried whole rather than searched.
 */
function inParts(n: number, applyPart: (part: unknown[]) => Promise<unknown>, isPoison: (err: unknown) => boolean): (records: unknown[]) => Promise<void> {
  return async (records) => {
    const applied = await Promise.allSettled(partsByPerson(records, n).map(applyPart));
    const failures = applied.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failures.length > 0) throw failures.find((err) => !isPoison(err)) ?? failures[0];
  };
}

interface ConsumerSink {
  label: string;
  sink: DeadLetterSink;
  consumer: string;
  /** Applies records; must make a redelivered batch harmless. */
  apply: (records: unknown[]) => Promise<unknown>;
  /** Whether `apply` failed for what the records carry (the batch is then halved), not for an outage. */
  isPoison: (err: unknown) => boolean;
  /** How many calls of `apply` a batch is split into, run at once (inParts). */
  parts: number;
}

/**
 * A sink on one durable consumer of the JetStream Log: fetch a batch, `apply` it (in `parts`
 * by person, at once), then acknowledge it. Acknowledged only after `apply` succeeded, or after the records it refused
 * are committed to `dead_letters` (in `db`): a crash in between redelivers, which `apply` and
 * the dead-letter insert (one row per sink and stream position) make harmless. While `apply`
 * fails for an outage nothing is acknowledged; JetStream keeps the messages and the sink
 * retries with backoff.
 */
function jetStreamConsumerSink(o: ConsumerSink, db: Db, nc: NatsConnection, stream: string): Sink {
  const apply = inParts(o.parts, o.apply, o.isPoison);
  const js = jetstream(nc);
  // Looked up once (each lookup is a request to the server), again after a failed step.
  let consumer: Consumer | undefined;
  let perFetch = FIRST_FETCH_MESSAGES;
  const step = async () => {
    consumer ??= await js.consumers.get(stream, o.consumer);
    // A long poll: an empty Log answers after `expires`, so the loop needs no pause of its own.
    const msgs = await consumer.fetch({ max_messages: perFetch, expires: FETCH_EXPIRES_MS });
    const batch: JsMsg[] = [];
    for await (const m of msgs) batch.push(m);
    if (batch.length === 0) {
      sinkCaughtUp(o.sink);
      return 0;
    }
    // An empty fetch (an idle Log) leaves the size as it was: a burst after the pause may be large.
    perFetch = fetchSize(batch.map((m) => m.data.length));
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
        if (records.length > 0) await apply(records.map((r) => r.record));
      } catch (err) {
        if (!o.isPoison(err)) throw err;
        const refused = await isolatePoison(records, async (part) => void (await apply(part.map((r) => r.record))), o.isPoison, { err });
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
    countSinkBatch(o.sink, records.length, batch[0]!.info.timestampNanos / 1e6, batch.at(-1)!.info.pending);
    return records.length;
  };
  const guarded = () =>
    step().catch((err) => {
      consumer = undefined;
      throw err;
    });
  return sinkLoop(o.label, guarded);
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
const hasMessageId = (r: unknown): boolean => typeof r === 'object' && r !== null && 'message_id' in r;

function recordsJson(records: unknown[]): string {
  try {
    return JSON.stringify(records);
  } catch (err) {
    throw new UnserializableRecords(`event records that cannot be serialized: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * The store sink of the JetStream Log (`embeddedAnalytics`: no ClickHouse, so the store is the
 * analytics store, apply-events.ts). A batch is applied as up to `statements` statements at
 * once, on `db`'s connections: one statement keeps one PostgreSQL backend busy at most, and
 * the sink fell behind the acknowledged rate with a second core idle.
 */
export function jetStreamSink(db: Db, nc: NatsConnection, names: StreamNames, embeddedAnalytics: boolean, statements: number): Sink {
  const sql = applyEvents(embeddedAnalytics);
  // Records with a message_id claim it with their event, so a repeat that outlived JetStream's duplicate window is not stored twice.
  const dedupSql = applyEvents(embeddedAnalytics, true);
  const isPoison = (err: unknown) => isDataError(err) || err instanceof UnserializableRecords;
  const apply = (records: unknown[]) => db.query(records.some(hasMessageId) ? dedupSql : sql, [recordsJson(records)]);
  return jetStreamConsumerSink({ label: 'jetstream sink', sink: 'jetstream-store', consumer: names.storeSink, apply, isPoison, parts: statements }, db, nc, names.stream);
}

/**
 * The ClickHouse sink: its own consumer, so ClickHouse being down holds back nothing else. Its
 * dead letters go to the store. Up to `statements` inserts (each with its existence check) at once.
 */
export function clickHouseSink(analytics: AnalyticsStore, db: Db, nc: NatsConnection, names: StreamNames, statements: number): Sink {
  const apply = (records: unknown[]) => analytics.write(records as EventRecord[]);
  return jetStreamConsumerSink({ label: 'clickhouse sink', sink: 'clickhouse', consumer: names.analyticsSink, apply, isPoison: isRefusedData, parts: statements }, db, nc, names.stream);
}

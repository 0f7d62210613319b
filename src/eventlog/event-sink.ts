// Moves events from the Log into the store's `events` (what the read routes and deletes
// use), the per-person counts, and the embedded analytics table (unless ClickHouse is the
// analytics store: then a second JetStream consumer writes it). One statement writes a whole
// batch, so a batch is applied exactly once: events already stored are skipped (ON CONFLICT)
// and only newly stored ones are counted, which makes a redelivered batch harmless. Events of
// a person deleted meanwhile are dropped (their analytics copy stays); events of a person
// merged away follow the redirect.
import type { Db } from '../store/db.js';
import type { Notifications } from '../store/pg.js';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, type Consumer } from '@nats-io/jetstream';
import type { StreamNames } from './jetstream.js';
import type { EventRecord } from '../domain/events.js';
import { logger } from '../logger.js';
import type { AnalyticsStore } from '../analytics/clickhouse.js';

const RECORD = 'r(id uuid, workspace_id uuid, person_id uuid, external_id text, type text, parameters jsonb, created_at timestamptz)';

function applySql(source: string, analytics: boolean): string {
  return `
WITH ${source}, resolved AS (
  SELECT recs.id, recs.workspace_id, COALESCE(rd.to_id, recs.person_id) AS person_id, recs.type, recs.parameters, recs.created_at
  FROM recs LEFT JOIN person_redirects rd ON rd.from_id = recs.person_id
), stored AS (
  INSERT INTO events (id, workspace_id, person_id, type, parameters, created_at)
  SELECT r.id, r.workspace_id, r.person_id, r.type, r.parameters, r.created_at
  FROM resolved r JOIN people p ON p.id = r.person_id
  ON CONFLICT (id) DO NOTHING
  RETURNING person_id, type, created_at
), counted AS (
  INSERT INTO person_event_counts (person_id, type, count, first_at, last_at)
  SELECT person_id, type, count(*), min(created_at), max(created_at) FROM stored GROUP BY person_id, type
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
const FROM_STORE_LOG = applySql(`taken AS (
  DELETE FROM log_entries WHERE seq IN (
    SELECT seq FROM log_entries WHERE topic = 'events' ORDER BY seq LIMIT ${BATCH_ROWS} FOR UPDATE SKIP LOCKED
  ) RETURNING payload
), recs AS (SELECT r.* FROM taken, jsonb_to_recordset(taken.payload) AS ${RECORD})`, true);
/** JetStream: the records of fetched messages, passed as one JSON parameter. */
const fromParam = (analytics: boolean) => applySql(`recs AS (SELECT r.* FROM jsonb_to_recordset($1::text::jsonb) AS ${RECORD})`, analytics);

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

/** The sink of the embedded Log; it sleeps until an append's NOTIFY (store/pg.ts `listen`). */
export function storeLogSink(db: Db, appended: Notifications): Sink {
  const step = async () => (await db.query<{ events: number }>(FROM_STORE_LOG)).rows[0]!.events;
  return sinkLoop('event sink', step, () => appended.wait(IDLE_BACKSTOP_MS), async () => {
    for (let i = 0; i < 1000; i++) if ((await step().catch(() => 0)) === 0) break;
    await appended.close();
  });
}

/**
 * A sink on one durable consumer of the JetStream Log: fetch a batch, `apply` it, then
 * acknowledge it. Acknowledged only after `apply` succeeded: a crash in between redelivers,
 * which `apply` must make harmless. While `apply` fails nothing is acknowledged; JetStream
 * keeps the messages and the sink retries with backoff.
 */
function jetStreamConsumerSink(label: string, nc: NatsConnection, stream: string, consumerName: string, apply: (records: EventRecord[]) => Promise<unknown>): Sink {
  const js = jetstream(nc);
  // Looked up once (each lookup is a request to the server), again after a failed step.
  let consumer: Consumer | undefined;
  const step = async () => {
    consumer ??= await js.consumers.get(stream, consumerName);
    // A long poll: an empty Log answers after `expires`, so the loop needs no pause of its own.
    const msgs = await consumer.fetch({ max_messages: 200, expires: FETCH_EXPIRES_MS });
    const batch = [];
    for await (const m of msgs) {
      batch.push(m);
      if (batch.length >= 200) break;
    }
    if (batch.length === 0) return 0;
    const records: EventRecord[] = batch.flatMap((m) => m.json<EventRecord[]>());
    try {
      await apply(records);
    } catch (err) {
      // Redeliver on the next fetch (after the loop's backoff), not only after ack_wait.
      for (const m of batch) m.nak();
      throw err;
    }
    for (const m of batch) m.ack();
    return records.length;
  };
  const guarded = () =>
    step().catch((err) => {
      consumer = undefined;
      throw err;
    });
  return sinkLoop(label, guarded, async () => {}, async () => {});
}

/** The store sink of the JetStream Log; it also fills the embedded analytics table unless ClickHouse does. */
export function jetStreamSink(db: Db, nc: NatsConnection, names: StreamNames, embeddedAnalytics: boolean): Sink {
  const sql = fromParam(embeddedAnalytics);
  return jetStreamConsumerSink('jetstream sink', nc, names.stream, names.storeSink, (records) => db.query(sql, [JSON.stringify(records)]));
}

/** The ClickHouse sink: its own consumer, so ClickHouse being down holds back nothing else. */
export function clickHouseSink(analytics: AnalyticsStore, nc: NatsConnection, names: StreamNames): Sink {
  return jetStreamConsumerSink('clickhouse sink', nc, names.stream, names.analyticsSink, (records) => analytics.write(records));
}

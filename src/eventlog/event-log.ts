// The Log: where facts (events now; push records, enrolments later) are appended, and
// acknowledged only once durable. A 2xx that depends on an append is sent after it resolves.
// Two implementations: the store's `log_entries` table (embedded default) and JetStream
// (eventlog/jetstream.ts, with NATS_URL).
import type { Db } from '../store/db.js';
import type { EventRecord } from '../domain/events.js';
import { logger } from '../logger.js';
import { Batcher } from '../util/batcher.js';


export interface Log {
  /** Resolves once `records` are durable; rejects with LogUnavailable when they are not. */
  appendEvents(records: EventRecord[]): Promise<void>;
  close(): Promise<void>;
}

export class LogUnavailable extends Error {}

/**
 * Group commit: appends arriving in the same tick, or while the previous write is in flight,
 * are written by one `write` call (one transaction or publish), then acknowledged together.
 * `maxInFlight` writes may overlap (JetStream pipelines publishes; the store gains nothing).
 */
export class GroupCommitLog implements Log {
  private readonly batcher: Batcher<{ records: EventRecord[]; done: (err?: Error) => void }>;

  constructor(write: (groups: EventRecord[][]) => Promise<void>, maxInFlight = 1) {
    this.batcher = new Batcher(async (batch) => {
      try {
        await write(batch.map((b) => b.records));
        for (const b of batch) b.done();
      } catch (err) {
        logger.warn('log append failed', { err });
        for (const b of batch) b.done(new LogUnavailable((err as Error).message));
      }
    }, maxInFlight);
  }

  appendEvents(records: EventRecord[]): Promise<void> {
    return new Promise((resolve, reject) => this.batcher.add({ records, done: (err) => (err ? reject(err) : resolve()) }));
  }

  async close(): Promise<void> {
    while (!this.batcher.idle) await new Promise((r) => setTimeout(r, 5));
  }
}

/** The channel an append NOTIFYs, waking the sink (eventlog/event-sink.ts). */
export const LOG_CHANNEL = 'herald_log';

/** The embedded Log: one `log_entries` row per append, all of a tick in one INSERT. */
export function storeLog(db: Db): Log {
  return new GroupCommitLog(async (groups) => {
    await db.query(
      `WITH appended AS (INSERT INTO log_entries (topic, payload) SELECT 'events', x FROM jsonb_array_elements($1::text::jsonb) AS x RETURNING 1)
       SELECT pg_notify('${LOG_CHANNEL}', '') WHERE EXISTS (SELECT 1 FROM appended)`,
      [JSON.stringify(groups)],
    );
  });
}

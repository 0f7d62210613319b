// The Log: where facts (events now; push records, enrolments later) are appended, and
// acknowledged only once durable. A 2xx that depends on an append is sent after it resolves.
// Two implementations: the store itself (embedded default and DATABASE_URL without NATS: the
// append writes the events where they are read) and JetStream (eventlog/jetstream.ts, with
// NATS_URL; its sinks then write the store).
import { isDataError, type Db } from '../store/db.js';
import { applyEvents } from './apply-events.js';
import type { EventRecord } from '../domain/events.js';
import { InvalidInput, type DomainError } from '../domain/errors.js';
import { logger } from '../logger.js';
import { Batcher } from '../util/batcher.js';
import { isolatePoison } from './poison.js';


export interface Log {
  /**
   * Resolves once `records` are durable. Rejects with LogUnavailable when they are not (an
   * outage: retry later), or with a DomainError when the Log refuses these records themselves
   * (e.g. a value the store cannot hold): nothing of them was appended, and the other appends
   * committed with them are not affected.
   */
  appendEvents(records: EventRecord[]): Promise<void>;
  close(): Promise<void>;
}

export class LogUnavailable extends Error {}

/** One append, serialized once: `json` is the JSON array text of `records`. */
export interface Group {
  records: EventRecord[];
  json: string;
}

/** Says whether a failed write was refused for what it carries (the answer to give), or null for an outage. */
export type Refusal = (err: unknown) => DomainError | null;

const unserializable = (err: unknown) =>
  new InvalidInput(`The events cannot be written to the Log: ${(err as Error).message}`, [{ field: 'body', message: 'cannot be serialized (nested too deeply?)' }]);

interface Pending {
  group: Group;
  done: (err?: Error) => void;
}

/**
 * Group commit: appends arriving in the same tick, or while the previous write is in flight,
 * are written by one `write` call (one transaction or publish), then acknowledged together.
 * `maxInFlight` writes may overlap (JetStream pipelines publishes; the store gains nothing).
 *
 * Isolation: a write that fails for an outage fails every append in it (LogUnavailable, 503).
 * One `refusal` recognizes as caused by what it carries is written again in halves until each
 * refused append is alone: that append alone is rejected (with the DomainError `refusal`
 * returns), the others are acknowledged. An append that cannot even be serialized is
 * rejected before it joins a group.
 */
export class GroupCommitLog implements Log {
  private readonly batcher: Batcher<Pending>;

  constructor(
    private readonly write: (groups: Group[]) => Promise<void>,
    maxInFlight = 1,
    private readonly refusal: Refusal = () => null,
  ) {
    this.batcher = new Batcher(async (batch) => {
      try {
        await this.writeAll(batch);
        for (const p of batch) p.done();
      } catch (err) {
        if (this.refusal(err)) await this.isolate(batch, err);
        else {
          logger.warn('log append failed', { err });
          for (const p of batch) p.done(new LogUnavailable((err as Error).message));
        }
      }
    }, maxInFlight);
  }

  private writeAll(batch: Pending[]): Promise<void> {
    return this.write(batch.map((p) => p.group));
  }

  /** `batch` failed with `first`, a refusal: write it again in halves until each refused append is alone. */
  private async isolate(batch: Pending[], first: unknown): Promise<void> {
    const settled = new Set<Pending>();
    try {
      const refused = await isolatePoison(
        batch,
        async (part) => {
          await this.writeAll(part);
          for (const p of part) {
            settled.add(p);
            p.done();
          }
        },
        (err) => this.refusal(err) !== null,
        { err: first },
      );
      for (const { item, err } of refused) {
        settled.add(item);
        item.done(this.refusal(err)!);
      }
      logger.warn('log append refused; the other appends of its group were written', { refused: refused.length, group: batch.length, err: refused[0]?.err });
    } catch (err) {
      // An outage while writing the halves: what was written is acknowledged, the rest is not.
      logger.warn('log append failed', { err });
      for (const p of batch) if (!settled.has(p)) p.done(new LogUnavailable((err as Error).message));
    }
  }

  appendEvents(records: EventRecord[]): Promise<void> {
    let json: string;
    try {
      json = JSON.stringify(records);
    } catch (err) {
      // A RangeError (a value nested deeper than the serializer's stack): this append only.
      return Promise.reject(unserializable(err));
    }
    return new Promise((resolve, reject) => this.batcher.add({ group: { records, json }, done: (err) => (err ? reject(err) : resolve()) }));
  }

  async close(): Promise<void> {
    while (!this.batcher.idle) await new Promise((r) => setTimeout(r, 5));
  }
}

/** A statement PostgreSQL refused for the values it carries (store/db.ts `isDataError`): 400, for that append only. */
const storeRefusal: Refusal = (err) => {
  if (!isDataError(err)) return null;
  const why = (err as Error).message;
  return new InvalidInput(`The store cannot hold these events: ${why}`, [{ field: 'body', message: `holds a value the store refuses (${why})` }]);
};

/** Without ClickHouse (which needs NATS), analytics copies live in the store too. */
const APPLY = applyEvents(true);

/**
 * The store's Log: the appends of a tick are applied to `events`, the counts and the
 * analytics table in one statement (group commit), so an event is readable when acknowledged
 * and is written once. It used to go to a `log_entries` queue first, which a sink then
 * applied: every event was written, read back and deleted once more (migration 12 applied
 * what such a queue still held).
 */
export function storeLog(db: Db): Log {
  return new GroupCommitLog(
    async (groups) => {
      // Each group's json is an array: their elements, joined, are the one array applied.
      await db.query(APPLY, [`[${groups.map((g) => g.json.slice(1, -1)).filter((inner) => inner !== '').join(',')}]`]);
    },
    1,
    storeRefusal,
  );
}

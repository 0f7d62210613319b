// The Log: where facts (events now; push records, enrolments later) are appended, and
// acknowledged only once durable. A 2xx that depends on an append is sent after it resolves.
import type { Db } from '../store/db.js';
import { log } from '../log.js';

export interface EventRecord {
  id: string;
  workspace_id: string;
  person_id: string;
  external_id: string;
  type: string;
  parameters: Record<string, unknown>;
  created_at: string;
}

export interface Log {
  /** Resolves once `records` are durable; rejects with LogUnavailable when they are not. */
  appendEvents(records: EventRecord[]): Promise<void>;
  close(): Promise<void>;
}

export class LogUnavailable extends Error {}

/**
 * The embedded Log: rows in the store's `log_entries`. Appends arriving in the same tick
 * share one INSERT (one transaction), then are acknowledged together (group commit).
 */
export class StoreLog implements Log {
  private pending: { records: EventRecord[]; done: (err?: Error) => void }[] = [];
  private scheduled = false;

  constructor(private readonly db: Db) {}

  appendEvents(records: EventRecord[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ records, done: (err) => (err ? reject(err) : resolve()) });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.scheduled = false;
    try {
      await this.db.query(
        `INSERT INTO log_entries (topic, payload) SELECT 'events', x FROM jsonb_array_elements($1::text::jsonb) AS x`,
        [JSON.stringify(batch.map((b) => b.records))],
      );
      for (const b of batch) b.done();
    } catch (err) {
      log.warn('log append failed', { err });
      for (const b of batch) b.done(new LogUnavailable((err as Error).message));
    }
  }

  async close(): Promise<void> {
    while (this.pending.length > 0 || this.scheduled) await new Promise((r) => setTimeout(r, 5));
  }
}

// Per-key usage statistics, counted in the front (which sees every authenticated request,
// including those refused for permission) and written to the store once a second in one
// statement, off the request path.
import type { Db } from '../store/db.js';
import { logger } from '../logger.js';

export class UsageRecorder {
  private counts = new Map<string, number>();
  private lastUsed = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db) {}

  record(keyId: string, route: string, now = Date.now()): void {
    const k = `${keyId}\0${new Date(now).toISOString().slice(0, 10)}\0${route}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
    this.lastUsed.set(keyId, now);
  }

  start(intervalMs = 1000): void {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  async flush(): Promise<void> {
    if (this.counts.size === 0) return;
    const counts = this.counts;
    const lastUsed = this.lastUsed;
    this.counts = new Map();
    this.lastUsed = new Map();
    const rows = [...counts].map(([k, requests]) => {
      const [key_id, day, route] = k.split('\0');
      return { key_id, day, route, requests };
    });
    const used = [...lastUsed].map(([id, t]) => ({ id, t: new Date(t).toISOString() }));
    try {
      await this.db.tx(async (q) => {
        await q.query(
          `INSERT INTO api_key_usage (key_id, day, route, requests)
           SELECT key_id, day, route, requests FROM jsonb_to_recordset($1::text::jsonb) AS x(key_id uuid, day date, route text, requests bigint)
           ON CONFLICT (key_id, day, route) DO UPDATE SET requests = api_key_usage.requests + EXCLUDED.requests`,
          [JSON.stringify(rows)],
        );
        await q.query(
          `UPDATE api_keys k SET last_used_at = x.t FROM jsonb_to_recordset($1::text::jsonb) AS x(id uuid, t timestamptz)
           WHERE k.id = x.id AND (k.last_used_at IS NULL OR k.last_used_at < x.t)`,
          [JSON.stringify(used)],
        );
      });
    } catch (err) {
      // Keep the counts for the next flush; the map is bounded by keys × routes × days.
      for (const [k, n] of counts) this.counts.set(k, (this.counts.get(k) ?? 0) + n);
      for (const [id, t] of lastUsed) if ((this.lastUsed.get(id) ?? 0) < t) this.lastUsed.set(id, t);
      logger.warn('usage flush failed; will retry', { err });
    }
  }
}

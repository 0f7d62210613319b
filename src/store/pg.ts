import pg from 'pg';
import type { Db, Prepared, Queryable, QueryResult, Row } from './db.js';

// int8 (count(*), bigint columns) as a JS number; Herald's counters stay
// far below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));

/**
 * How often, in ms, a connection plans its prepared statements again. A connection keeps each
 * prepared statement's generic plan until something invalidates it, and the plan is costed on
 * the tables as they were when it was made: made while a table was nearly empty (a fresh
 * install, the first seconds of a load), it keeps a sequential scan of that table after the
 * table has grown a hundredfold, until an autovacuum ANALYZE happens to invalidate it, up to a
 * minute later (autovacuum_naptime). Identify's update scanned the whole people table that way,
 * 8.5 ms a statement at 8,000 people. `DISCARD PLANS` on a connection that has gone this long
 * without makes its statements plan again, on the tables' present size, at their next run; it
 * keeps the connection (a new one would cost a backend start and a password exchange).
 */
const REPLAN_MS = 5_000;

export function openPostgres(url: string, max: number, replanMs = REPLAN_MS): Db {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000 });
  const plannedAt = new WeakMap<pg.PoolClient, number>();
  pool.on('acquire', (client) => {
    const now = Date.now();
    const at = plannedAt.get(client);
    if (at !== undefined && now - at < replanMs) return;
    plannedAt.set(client, now);
    // A client runs its queries in order: this goes before the one the client was taken for.
    // A failure here fails that one too, which hands the client back to be removed.
    if (at !== undefined) client.query('DISCARD PLANS').catch(() => {});
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const run = async <T>(c: pg.Pool | pg.PoolClient, sql: string | Prepared, params?: unknown[]): Promise<QueryResult<T>> => {
    const r = typeof sql === 'string' ? await c.query(sql, params as unknown[]) : await c.query({ name: sql.name, text: sql.text, values: params as unknown[] });
    return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
  };
  return {
    query: <T = Row>(sql: string | Prepared, params?: unknown[]) => run<T>(pool, sql, params),
    exec: async (sql) => void (await pool.query(sql)),
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn({
          query: <U = Row>(sql: string | Prepared, params?: unknown[]) => run<U>(client, sql, params),
          exec: async (sql) => void (await client.query(sql)),
        });
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export interface Subscription {
  close(): Promise<void>;
}

/**
 * LISTENs on `channel` with a connection of its own, reconnecting 1 s after an error, and
 * hands each notification's payload to `on.notification`. `on.listening` is called each time
 * the LISTEN is in place, the first time included: notifications sent while the connection
 * was down are lost (PostgreSQL keeps none for absent listeners), so a caller that must not
 * miss any resynchronises there.
 */
export function subscribe(url: string, channel: string, on: { notification(payload: string): void; listening(): void }): Subscription {
  let client: pg.Client | null = null;
  let closed = false;
  const retry = () => {
    if (!closed) setTimeout(() => void connect(), 1000).unref();
  };
  const connect = async () => {
    if (closed) return;
    const c = new pg.Client({ connectionString: url });
    c.on('notification', (m) => {
      if (m.channel === channel) on.notification(m.payload ?? '');
    });
    c.on('error', () => {
      if (client === c) client = null;
      c.end().catch(() => {});
      retry();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      if (closed) {
        await c.end().catch(() => {});
        return;
      }
      client = c;
      on.listening();
    } catch {
      c.end().catch(() => {});
      retry();
    }
  };
  void connect();
  return {
    async close() {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}

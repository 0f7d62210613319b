import pg from 'pg';
import type { Db, Prepared, Queryable, QueryResult, Row } from './db.js';

// int8 (count(*), bigint columns) as a JS number; Herald's counters stay
// far below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));

export function openPostgres(url: string, max: number): Db {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000 });
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

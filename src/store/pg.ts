import pg from 'pg';
import type { Db, Queryable, QueryResult, Row } from './db.js';

// int8 (count(*), bigint columns) as a JS number, matching PGlite; Herald's counters stay
// far below 2^53.
pg.types.setTypeParser(20, (v: string) => Number(v));

export function openPostgres(url: string, max: number): Db {
  const pool = new pg.Pool({ connectionString: url, max, idleTimeoutMillis: 30_000 });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const run = async <T>(c: pg.Pool | pg.PoolClient, sql: string, params?: unknown[]): Promise<QueryResult<T>> => {
    const r = await c.query(sql, params as unknown[]);
    return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
  };
  return {
    query: <T = Row>(sql: string, params?: unknown[]) => run<T>(pool, sql, params),
    exec: async (sql) => void (await pool.query(sql)),
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn({
          query: <U = Row>(sql: string, params?: unknown[]) => run<U>(client, sql, params),
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

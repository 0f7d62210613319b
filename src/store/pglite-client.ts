import type { MessagePort } from 'node:worker_threads';
import { DbError, type Db, type Queryable, type QueryResult, type Row } from './db.js';
import type { StoreReply, StoreRequest } from './pglite-protocol.js';

type Pending = { resolve: (r: StoreReply & { ok: true }) => void; reject: (e: Error) => void };
type Request = StoreRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** A Db over a MessagePort to the store thread (workers/store.ts), which owns PGlite. */
export function pgliteClient(port: MessagePort): Db {
  let nextId = 1;
  let closed = false;
  const pending = new Map<number, Pending>();
  port.on('message', (reply: StoreReply) => {
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (reply.ok) p.resolve(reply);
    else p.reject(new DbError(reply.message, reply.code));
  });
  const failAll = () => {
    closed = true;
    for (const p of pending.values()) p.reject(new DbError('store thread is gone', undefined));
    pending.clear();
  };
  port.on('close', failAll);

  const send = (req: Request): Promise<StoreReply & { ok: true }> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new DbError('store thread is gone', undefined));
      const id = nextId++;
      pending.set(id, { resolve, reject });
      port.postMessage({ ...req, id });
    });

  const query = async <T = Row>(sql: string, params?: unknown[], tx?: number): Promise<QueryResult<T>> => {
    const r = await send({ op: 'query', sql, params, tx });
    return { rows: r.rows as T[], rowCount: r.rowCount };
  };

  const exec = async (sql: string, tx?: number): Promise<void> => void (await send({ op: 'exec', sql, tx }));

  return {
    query: (sql, params) => query(sql, params),
    exec: (sql) => exec(sql),
    async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
      const { tx } = await send({ op: 'begin' });
      let out: T;
      try {
        out = await fn({ query: (sql, params) => query(sql, params, tx), exec: (sql) => exec(sql, tx) });
      } catch (err) {
        await send({ op: 'end', tx: tx!, commit: false }).catch(() => {});
        throw err;
      }
      await send({ op: 'end', tx: tx!, commit: true });
      return out;
    },
    async close() {
      failAll();
      port.close();
    },
  };
}

// A transaction that must end by a deadline: the request it serves is answered 503 then, and a
// 503 says nothing was recorded, so work still running at that moment must not commit later.
import type { Prepared, Queryable, Row } from './db.js';
import { Unavailable } from '../domain/errors.js';

/** SQLSTATE of a statement cancelled, here by its statement_timeout. */
const QUERY_CANCELED = '57014';

/**
 * `q` (a transaction's) with every statement ending by `deadline` (ms since the epoch): each
 * is given what is left as its statement_timeout (the server cancels it then, waits for locks
 * included), and none starts past it. Past it, the statement throws `Unavailable(message)`,
 * which fails the transaction: rolled back, nothing of it recorded.
 */
export function withDeadline(q: Queryable, deadline: number, message: string): Queryable {
  const run = async <R>(statement: () => Promise<R>): Promise<R> => {
    const left = Math.floor(deadline - Date.now());
    if (left <= 0) throw new Unavailable(message);
    // Local to the transaction: the pooled connection goes back without it.
    await q.query(`SELECT set_config('statement_timeout', $1, true)`, [String(left)]);
    try {
      return await statement();
    } catch (err) {
      throw (err as { code?: string })?.code === QUERY_CANCELED ? new Unavailable(message, err) : err;
    }
  };
  return {
    query: <T = Row>(sql: string | Prepared, params?: unknown[]) => run(() => q.query<T>(sql, params)),
    exec: (sql) => run(() => q.exec(sql)),
  };
}

// The one SQL interface every thread uses. Two implementations: Postgres through `pg`
// (store/pg.ts) and PGlite living in the store thread, reached over a MessagePort
// (store/pglite-client.ts). SQL is written once, in the dialect both accept.

export type Row = Record<string, unknown>;

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

export interface Queryable {
  query<T = Row>(sql: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  /** Runs fn inside one transaction: committed when fn resolves, rolled back when it throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A database error carrying the SQLSTATE code (e.g. 23505 for a unique violation). */
export class DbError extends Error {
  constructor(message: string, readonly code: string | undefined) {
    super(message);
  }
}

export const UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(err: unknown): boolean {
  return err instanceof DbError ? err.code === UNIQUE_VIOLATION : (err as { code?: string })?.code === UNIQUE_VIOLATION;
}

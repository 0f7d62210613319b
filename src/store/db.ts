// The one SQL interface every thread uses, implemented over `pg` pools (store/pg.ts) on the
// embedded or an external PostgreSQL alike.

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

const UNIQUE_VIOLATION = '23505';

/** A database error (pg's DatabaseError) carrying the SQLSTATE code for a unique violation. */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string })?.code === UNIQUE_VIOLATION;
}

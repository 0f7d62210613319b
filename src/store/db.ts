// The one SQL interface every thread uses, implemented over `pg` pools (store/pg.ts) on the
// embedded or an external PostgreSQL alike.

export type Row = Record<string, unknown>;

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

/**
 * A statement each connection parses and plans once, then runs by `name`: for the hot
 * statements of ingest, where planning a large CTE costs as much as running it. Only for
 * fixed texts (one prepared statement per name and connection).
 */
export interface Prepared {
  name: string;
  text: string;
}

export const prepared = (name: string, text: string): Prepared => ({ name, text });

export interface Queryable {
  query<T = Row>(sql: string | Prepared, params?: unknown[]): Promise<QueryResult<T>>;
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

/**
 * SQLSTATE classes of a statement refused for the values it was given, which trying again
 * cannot change: 21 cardinality violation, 22 data exception (a timestamp out of range, U+0000
 * in jsonb, malformed input), 23 integrity constraint violation, 54 program limit exceeded (a
 * value nested too deeply, a key too long to index). Everything else, a lost connection (no
 * SQLSTATE), 08 connection exception, 53 insufficient resources, 57 operator intervention, 40
 * a deadlock, and 42 (a syntax error or a missing table: a bug or an unmigrated schema, which
 * every message would hit alike), counts as an outage: retried, nothing set aside.
 */
const DATA_ERROR_CLASSES = new Set(['21', '22', '23', '54']);

export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && DATA_ERROR_CLASSES.has(code.slice(0, 2));
}

/**
 * SQL string literals of one of src/domain's enumerations, by value: `${s.waiting}` is `'waiting'`
 * in a statement's text, and stops compiling when the tuple loses that value, so a state or
 * status is spelled once (the values are the tuple's own: no quoting is needed).
 */
export function sqlLiterals<T extends string>(values: readonly T[]): { readonly [K in T]: string } {
  return Object.fromEntries(values.map((v) => [v, `'${v}'`])) as { [K in T]: string };
}

/**
 * SQL true when `expr` starts with the text parameter `param` (`$n`): a range in byte order
 * (COLLATE "C"), which an index on `(expr COLLATE "C")` serves whatever the database's collation.
 */
export const startsWith = (expr: string, param: string): string => `${expr} COLLATE "C" >= ${param} AND ${expr} COLLATE "C" < ${param} || chr(1114111)`;

// JSON Schemas are written in the subset OpenAPI 3.0 accepts (`nullable` instead of type
// arrays, no `const`, no `$id`), so ajv validates with the same objects the OpenAPI
// document publishes. The route table (src/routes.ts) imports the schemas; they import
// nothing of it: what both need lives here.
import type { ErrorCode } from '../src/domain/errors.js';

export type Schema = Record<string, unknown>;

/**
 * How a route words a schema failure: the first rule whose `at` prefixes the failing instance
 * path (and whose `keyword` matches, if given) applies. With `code`, the failure is answered
 * as that documented error (e.g. BATCH_TOO_LARGE) in the route's error shape; without, it stays
 * a schema failure whose detail for that field reads `message`.
 */
export interface SchemaRefusal {
  at: string;
  keyword?: string;
  code?: ErrorCode;
  message?: string;
}

/** A UUID as Herald stores it (any case); `format: uuid` alone would also pass a `urn:uuid:` prefix, which PostgreSQL refuses. */
export const uuid = { type: 'string', format: 'uuid', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' } as const;

export const nonEmptyString = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength }) as const;

const messageId = { ...nonEmptyString(100), description: 'A repeat within 7 days is answered as the first, with `duplicate: true`, and changes nothing' } as const;
/** The client's deduplication key and its aliases (README, messageId). */
export const messageIds = { messageId, message_id: messageId, messageID: messageId } as const;

/** An object schema; its type keeps what FromSchema reads (properties, required, nullable). */
export const object = <const P extends Record<string, Schema>, const R extends readonly (keyof P & string)[] = [], const E extends Schema = Record<never, never>>(
  properties: P,
  required: R = [] as unknown as R,
  extra: E = {} as E,
) =>
  ({
    type: 'object',
    properties,
    ...(required.length ? { required } : {}),
    ...extra,
  }) as { type: 'object'; properties: P; required: R } & E;

/**
 * The largest integer a query parameter takes (PostgreSQL `integer`, 2^31 - 1): larger is a
 * 400, so no out-of-range integer reaches the store.
 */
const QUERY_INT_MAX = 2_147_483_647;

/** A list route's `limit`: never negative; above the route's maximum (but within QUERY_INT_MAX) silently reduced by the handler. */
export const queryLimit = (dflt: number) => ({
  type: 'integer',
  minimum: 0,
  maximum: QUERY_INT_MAX,
  default: dflt,
  description: "Above the route's maximum: silently reduced to it",
}) as const;

/** Pagination of list routes: `limit` (see queryLimit) and `offset`, both 0..2^31 - 1. */
export const pagination = (dflt: number) => ({
  limit: queryLimit(dflt),
  offset: { type: 'integer', minimum: 0, maximum: QUERY_INT_MAX, default: 0 },
}) as const;

/**
 * Every timestamp a request carries: the one definition is domain/time.ts, registered as the
 * ajv format `timestamp` (handlers/validation.ts).
 */
export const timestamp = {
  type: 'string',
  format: 'timestamp',
  description: 'RFC 3339 date-time naming an instant from 1970-01-01T00:00:00Z to 2106-02-07T06:28:15.999Z once its offset is applied (what PostgreSQL timestamptz and ClickHouse DateTime both hold); no leap second (:60)',
  example: '2024-05-06T07:08:09.010Z',
} as const;

/**
 * Paging back through a newest-first list (the dashboard's events, a campaign's messages): the
 * rows created before `before`; with `before_id` (the id of the last row shown, whose created_at
 * `before` is), also the rest of that millisecond, so a page ending inside a batch that shares
 * one timestamp loses none of it.
 */
export const pageBack = {
  before: { ...timestamp, description: 'Only rows created before this instant: the created_at of the last one shown, for the next page' },
  before_id: { ...uuid, description: 'With before: the id of the last one shown; the rows of the same created_at after it (ids descending) are included' },
} as const;

/**
 * The value a request schema accepts, as a TypeScript type: what a handler's `ctx.body` and
 * `ctx.query` are (src/handlers/context.ts). Reads the keywords Herald's request schemas use
 * (type, enum, nullable, properties, required, items; a property with a `default` is always
 * there, since ajv fills it in); a schema it cannot read is `unknown`.
 */
export type FromSchema<S> = S extends { nullable: true } ? Value<S> | null : Value<S>;
type Value<S> = S extends { enum: readonly (infer E)[] }
  ? E
  : S extends { type: 'string' }
    ? string
    : S extends { type: 'integer' | 'number' }
      ? number
      : S extends { type: 'boolean' }
        ? boolean
        : S extends { type: 'array'; items: infer I }
          ? FromSchema<I>[]
          : S extends { type: 'object'; properties: infer P }
            ? Properties<P, S extends { required: readonly (infer R)[] } ? R : never>
            : S extends { type: 'object' }
              ? Record<string, unknown>
              : unknown;
type Present<P, K extends keyof P, R> = K extends R ? true : P[K] extends { default: unknown } ? true : false;
type Properties<P, R> = { [K in keyof P as Present<P, K, R> extends true ? K : never]: FromSchema<P[K]> } & {
  [K in keyof P as Present<P, K, R> extends true ? never : K]?: FromSchema<P[K]>;
};

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
export const uuid: Schema = { type: 'string', format: 'uuid', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' };

export const nonEmptyString = (maxLength: number): Schema => ({ type: 'string', minLength: 1, maxLength });

export const object = (properties: Record<string, Schema>, required: string[] = [], extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
  ...extra,
});

/**
 * The largest integer a query parameter takes (PostgreSQL `integer`, 2^31 - 1): larger is a
 * 400, so no out-of-range integer reaches the store.
 */
const QUERY_INT_MAX = 2_147_483_647;

/** A list route's `limit`: never negative; above the route's maximum (but within QUERY_INT_MAX) silently reduced by the handler. */
export const queryLimit = (dflt: number): Schema => ({
  type: 'integer',
  minimum: 0,
  maximum: QUERY_INT_MAX,
  default: dflt,
  description: "Above the route's maximum: silently reduced to it",
});

/** Pagination of list routes: `limit` (see queryLimit) and `offset`, both 0..2^31 - 1. */
export const pagination = (dflt: number): Record<string, Schema> => ({
  limit: queryLimit(dflt),
  offset: { type: 'integer', minimum: 0, maximum: QUERY_INT_MAX, default: 0 },
});

/**
 * Every timestamp a request carries: the one definition is domain/time.ts, registered as the
 * ajv format `timestamp` (handlers/validation.ts).
 */
export const timestamp: Schema = {
  type: 'string',
  format: 'timestamp',
  description: 'RFC 3339 date-time naming an instant from 1970-01-01T00:00:00Z to 2106-02-07T06:28:15.999Z once its offset is applied (what PostgreSQL timestamptz and ClickHouse DateTime both hold); no leap second (:60)',
  example: '2024-05-06T07:08:09.010Z',
};

// JSON Schemas are written in the subset OpenAPI 3.0 accepts (`nullable` instead of type
// arrays, no `const`, no `$id`), so ajv validates with the same objects the OpenAPI
// document publishes.
export type Schema = Record<string, unknown>;

export const nonEmptyString = (maxLength: number): Schema => ({ type: 'string', minLength: 1, maxLength });

export const object = (properties: Record<string, Schema>, required: string[] = [], extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
  ...extra,
});

/** Pagination of list routes: `limit` silently capped at `max` by the handler, never negative. */
export const pagination = (dflt: number): Record<string, Schema> => ({
  limit: { type: 'integer', minimum: 0, default: dflt },
  offset: { type: 'integer', minimum: 0, default: 0 },
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

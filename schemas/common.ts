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

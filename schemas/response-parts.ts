// The building blocks of the response schemas: each resource's module (schemas/people.ts, …)
// describes what its routes answer with these, and schemas/responses.ts adds what every route
// shares and publishes them. Same subset as the request schemas (schemas/common.ts): OpenAPI 3.0
// (`nullable: true`, no type arrays, no `const`, no `$id`). Shapes that are closed say
// `additionalProperties: false`.
import type { ErrorCode } from '../src/domain/errors.js';
import type { Schema } from './common.js';

export interface ResponseDoc {
  description: string;
  /** The JSON body; absent when the response has no body (204). */
  schema?: Schema;
  /** The body's media type when it is not JSON (the schema then describes that text). */
  mediaType?: string;
  /** Response headers worth documenting, name → description. */
  headers?: Record<string, string>;
}

/** Status code (as text, e.g. "201") → response. */
export type Responses = Record<string, ResponseDoc>;

export const str: Schema = { type: 'string' };
export const strings: Schema = { type: 'array', items: str };
export const nullableStr: Schema = { type: 'string', nullable: true };
/** A UUID as Herald writes it (a request's UUID is schemas/common.ts `uuid`). */
export const uuidText: Schema = { type: 'string', format: 'uuid' };
export const count: Schema = { type: 'integer', minimum: 0 };
export const freeObject: Schema = { type: 'object', additionalProperties: true };
export const emptyObject: Schema = { type: 'object', additionalProperties: false, maxProperties: 0 };
export const success: Schema = { type: 'boolean', enum: [true] };
export const failure: Schema = { type: 'boolean', enum: [false] };
/** ISO 8601 UTC with milliseconds (README, Request bodies), as every timestamp is answered. */
export const isoTime: Schema = { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' };
export const nullableIsoTime: Schema = { ...isoTime, nullable: true };
export const enumOf = (...values: (string | number | boolean)[]): Schema => ({ type: typeof values[0] === 'number' ? 'integer' : typeof values[0], enum: values });
/** On an ingest answer whose messageId was accepted before (README, messageId). */
export const duplicate: Schema = { ...enumOf(true), description: 'Present when the messageId was accepted before: the first answer\'s ids; nothing was changed now' };

/** An object with exactly these properties; all required unless `required` says otherwise. */
export function closed(properties: Record<string, Schema>, required: string[] = Object.keys(properties), extra: Schema = {}): Schema {
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false, ...extra };
}

export const ok = (description: string, properties: Record<string, Schema>, required?: string[]): ResponseDoc => ({
  description,
  schema: closed({ success, ...properties }, required ? ['success', ...required] : undefined),
});

/** Errors a handler throws beyond the common ones: status → codes and when; `mediaType`: a page of that type (its text), not an error body (404 only). */
export type HandlerErrors = Partial<Record<400 | 403 | 404 | 409 | 422 | 500 | 503, { codes: ErrorCode[]; why: string; mediaType?: string }>>;

export interface RouteResponses {
  /** The 2xx answers. */
  success: Responses;
  errors?: HandlerErrors;
  /** Key routes: when the handler also answers the `Bad Request` shape beyond schema and JSON failures. */
  badRequest?: string;
  /** Session routes: what `details` of a 400 holds, when more than the field list or `{}`. */
  details400?: SessionDetails;
}

/** What `details` of a session route's 400 holds: `{}`, the problems found, or also a refused permission list. */
export type SessionDetails = 'none' | 'fields' | 'permissions';

/** A success whose body is `{success, message}`. */
export const message = (description: string): ResponseDoc => ok(description, { message: str });

// What the routes of several resources' modules share.
export const personNotFound: HandlerErrors[404] = { codes: ['PERSON_NOT_FOUND'], why: 'No person with this userId in the workspace' };
export const dashboardPersonNotFound: HandlerErrors[404] = { codes: ['PERSON_NOT_FOUND'], why: 'No person with this UUID in the workspace' };
export const PUSH = '/workspaces/{workspaceId}/push';

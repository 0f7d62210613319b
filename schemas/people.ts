import { PERSON_STATUSES } from '../src/domain/people.js';
import { device } from './devices.js';
import { messageIds, nonEmptyString, object, pagination, timestamp, type Schema, type SchemaRefusal } from './common.js';
import { closed, count, dashboardPersonNotFound, duplicate, enumOf, failure, freeObject, isoTime, message, nullableIsoTime, nullableStr, ok, personNotFound, str, success, uuidText, type HandlerErrors, type ResponseDoc, type RouteResponses } from './response-parts.js';

const userId = nonEmptyString(255);
// '' clears the stored email (README, Request bodies), so the empty string is allowed beside an address.
const email = { type: 'string', maxLength: 254, anyOf: [{ format: 'email' }, { maxLength: 0 }] } as const;

/** identify, POST /people, /people/upsert and each entry of /people/batch. */
export const identify = object({
  userId,
  user_id: userId,
  external_id: userId,
  email,
  phone: { type: 'string', maxLength: 50 },
  anonymousId: { type: 'string', maxLength: 36 },
  traits: { type: 'object' },
  timestamp,
  ...messageIds,
});

export const personUpdate = object({ traits: { type: 'object' } }, ['traits']);

/** The documented exact message (README, Errors) for a long anonymousId, and a failed identify. */
export const identifyRefusals: readonly SchemaRefusal[] = [
  { at: '/anonymousId', keyword: 'maxLength', code: 'VALIDATION_ERROR', message: 'Anonymous ID must be 36 characters or less' },
];

/** The external id in the path of a route that creates the person (device registration) is a userId. */
export const userIdPath = object({ id: userId }, ['id']);

// Entries are checked one by one (a bad entry fails only itself), so any item is accepted here;
// more than 1,000 is BATCH_TOO_LARGE, and events belong to /track/batch.
export const peopleBatch = object(
  {
    identify: { type: 'array', items: {}, maxItems: 1000 },
    track: { not: {}, description: 'Refused: events go to POST /track/batch' },
  },
  ['identify'],
);

export const peopleBatchRefusals: readonly SchemaRefusal[] = [
  { at: '/track', code: 'VALIDATION_ERROR', message: 'People batch takes only `identify` operations; send events to POST /track/batch' },
];

export const peopleList = object(pagination(50));

export const peopleSearch = object({
  ...pagination(50),
  q: { type: 'string', maxLength: 255 },
  search: { type: 'string', maxLength: 255 },
  status: { type: 'string', enum: [...PERSON_STATUSES] },
});

export const dashboardPeopleList = object({
  ...pagination(50),
  status: { type: 'string', enum: [...PERSON_STATUSES] },
  search: { type: 'string', maxLength: 255 },
});

export const consent = object(
  {
    status: { type: 'string', enum: [...PERSON_STATUSES] },
    unsubscribe_reason: { type: 'string', maxLength: 255 },
  },
  ['status'],
);

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

const personStatus = enumOf(...PERSON_STATUSES);

/** The person on the key surface (GET, lists, full echoes, batch `data`). */
export const keyPerson = closed(
  {
    id: uuidText,
    workspace_id: uuidText,
    userId: str,
    email: nullableStr,
    phone: nullableStr,
    traits: freeObject,
    status: personStatus,
    unsubscribed_at: { ...isoTime, description: 'Omitted unless set' },
    unsubscribe_reason: { type: 'string', description: 'Omitted unless set' },
    created_at: isoTime,
    updated_at: isoTime,
  },
  ['id', 'workspace_id', 'userId', 'email', 'phone', 'traits', 'status', 'created_at', 'updated_at'],
);

/** The echo for a key without `people:read`. */
export const trimmedPerson = closed({ id: uuidText, workspace_id: uuidText, userId: str });

/** The person on the dashboard surface (README, Request bodies). */
export const dashboardPerson = closed({
  id: uuidText,
  workspace_id: uuidText,
  external_id: str,
  email: nullableStr,
  phone: nullableStr,
  first_name: nullableStr,
  last_name: nullableStr,
  avatar_url: nullableStr,
  timezone: nullableStr,
  locale: nullableStr,
  status: personStatus,
  unsubscribed_at: nullableIsoTime,
  unsubscribe_reason: nullableStr,
  attributes: freeObject,
  created_at: isoTime,
  updated_at: isoTime,
  first_seen_at: isoTime,
  last_seen_at: isoTime,
});

const personEcho: Schema = { anyOf: [keyPerson, trimmedPerson], description: 'The full person for a key holding `people:read` (or `*`), else `{id, workspace_id, userId}`' };
const identifyErrors: HandlerErrors = {
  400: { codes: ['VALIDATION_ERROR', 'IDENTIFIER_CONFLICT', 'INVALID_TRAITS'], why: '`anonymousId` over 36 characters (VALIDATION_ERROR), disagreeing identifier aliases, trait rules' },
};
const identifyBadRequest = 'no identifier (`userId`, `user_id` or `external_id`)';
const personPage = (description: string, item: Schema): ResponseDoc => ok(description, { people: { type: 'array', items: item }, total: count, limit: count, offset: count });

export const peopleResponses: Record<string, RouteResponses> = {
  'POST /identify': {
    success: { 200: ok('The person, created or merged into', { person: personEcho, duplicate }, ['person']) },
    errors: identifyErrors,
    badRequest: identifyBadRequest,
  },
  'POST /people': {
    success: { 201: ok('The person, created or merged into', { person: personEcho, duplicate }, ['person']) },
    errors: identifyErrors,
    badRequest: identifyBadRequest,
  },
  'POST /people/upsert': {
    success: { 201: ok('The person, created or merged into', { person: personEcho, duplicate }, ['person']) },
    errors: identifyErrors,
    badRequest: identifyBadRequest,
  },
  'POST /people/batch': {
    success: {
      200: ok('One result per entry, in order; a failed entry fails alone', {
        results: {
          type: 'array',
          items: {
            anyOf: [
              closed({ type: enumOf('identify'), index: count, success, data: keyPerson, duplicate }, ['type', 'index', 'success', 'data']),
              closed({ type: enumOf('identify'), index: count, success: failure, error: str }),
            ],
          },
        },
        total: count,
      }),
    },
    errors: { 400: { codes: ['VALIDATION_ERROR', 'BATCH_TOO_LARGE'], why: 'A `track` array (VALIDATION_ERROR), more than 1,000 entries' } },
  },
  'GET /people': { success: { 200: personPage('A page of people, oldest first', keyPerson) } },
  'GET /people/search': { success: { 200: personPage('A page of matching people, oldest first', keyPerson) } },
  'GET /people/{id}': {
    success: { 200: ok('The person', { person: keyPerson }) },
    errors: { 404: personNotFound },
  },
  'PUT /people/{id}': {
    success: { 200: message('Traits merged') },
    errors: { 400: { codes: ['INVALID_TRAITS'], why: 'Trait rules' }, 404: personNotFound },
  },
  'DELETE /people/{id}': {
    success: { 200: message('The person, their events and devices are deleted') },
    errors: { 404: personNotFound },
  },
  'GET /workspaces/{workspaceId}/people': { success: { 200: personPage('A page of people, oldest first', dashboardPerson) } },
  'GET /workspaces/{workspaceId}/people/stats': {
    success: { 200: ok('People statistics', { total: count, active: count, unsubscribed: count, bounced: count, suppressed: count, recent: { ...count, description: 'Created in the last 7 days' } }) },
  },
  'GET /workspaces/{workspaceId}/people/{personId}': {
    success: { 200: ok('The person and their devices, most recently used first', { data: closed({ person: dashboardPerson, devices: { type: 'array', items: device } }) }) },
    errors: { 404: dashboardPersonNotFound },
  },
  'PATCH /workspaces/{workspaceId}/people/{personId}': {
    success: { 200: ok('The person with the new consent state', { data: closed({ person: dashboardPerson }) }) },
    errors: { 404: dashboardPersonNotFound },
  },
};

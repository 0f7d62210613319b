import { PERSON_STATUSES } from '../src/domain/people.js';
import { nonEmptyString, object, pagination, timestamp, type Schema, type SchemaRefusal } from './common.js';

const userId = nonEmptyString(255);
// '' clears the stored email (INTERFACE 2.2.6), so the empty string is allowed beside an address.
const email: Schema = { type: 'string', maxLength: 254, anyOf: [{ format: 'email' }, { maxLength: 0 }] };

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
});

export const personUpdate = object({ traits: { type: 'object' } }, ['traits']);

/** INTERFACE 4.1 owes an exact message for a long anonymousId, and a failed identify. */
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

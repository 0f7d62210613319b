import { nonEmptyString, object, pagination, type Schema } from './common.js';

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
  // Its 36-character limit is checked by the handler, which owes the exact message of INTERFACE 4.1.
  anonymousId: { type: 'string', description: 'At most 36 characters' },
  traits: { type: 'object' },
  timestamp: { type: 'string', format: 'date-time' },
});

export const personUpdate = object({ traits: { type: 'object' } }, ['traits']);

// Entries are checked one by one (a bad entry fails only itself), so any item is accepted here.
export const peopleBatch = object({ identify: { type: 'array', items: {} } }, ['identify']);

export const peopleList = object(pagination(50));

export const peopleSearch = object({
  ...pagination(50),
  q: { type: 'string', maxLength: 255 },
  search: { type: 'string', maxLength: 255 },
  status: { type: 'string', enum: ['active', 'unsubscribed', 'bounced', 'suppressed'] },
});

export const dashboardPeopleList = object({
  ...pagination(50),
  status: { type: 'string', enum: ['active', 'unsubscribed', 'bounced', 'suppressed'] },
  search: { type: 'string', maxLength: 255 },
});

export const consent = object(
  {
    status: { type: 'string', enum: ['active', 'unsubscribed', 'bounced', 'suppressed'] },
    unsubscribe_reason: { type: 'string', maxLength: 255 },
  },
  ['status'],
);

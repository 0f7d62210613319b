import { nonEmptyString, object, queryLimit, timestamp } from './common.js';

const userId = nonEmptyString(255);

/** POST /track and each entry of /track/batch. */
export const track = object(
  {
    event: nonEmptyString(255),
    external_id: userId,
    userId,
    user_id: userId,
    parameters: { type: 'object' },
    properties: { type: 'object', description: 'Alias of parameters' },
    timestamp,
  },
  ['event'],
);

// Entries are checked one by one (a bad entry fails only itself); more than 100 is BATCH_TOO_LARGE.
export const trackBatch = object({ events: { type: 'array', items: {}, maxItems: 100 } }, ['events']);

const limit = queryLimit(50);

export const personEvents = object({ limit });

export const eventSearch = object(
  { event: nonEmptyString(255), since: timestamp, limit },
  ['event'],
);

/** GET /workspaces/{id}/events, the event debugger: events created before `before`. */
export const workspaceEvents = object({ limit, before: timestamp });

import { messageIds, nonEmptyString, object, pageBack, queryLimit, timestamp, type Schema } from './common.js';
import { closed, count, dashboardPersonNotFound, duplicate, enumOf, failure, freeObject, isoTime, ok, personNotFound, str, uuidText, type RouteResponses } from './response-parts.js';

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
    ...messageIds,
  },
  ['event'],
);

// Entries are checked one by one (a bad entry fails only itself); more than 100 is BATCH_TOO_LARGE.
export const trackBatch = object({ events: { type: 'array', items: {}, maxItems: 100 } }, ['events']);

const limit = queryLimit(50);

export const personEvents = object({ limit });

/** Only the events of this exact name (the dashboard's search). */
const name = { ...nonEmptyString(255), description: 'Only the events of this name (exact)' };

/** GET /workspaces/{id}/people/{personId}/events: the key route's, a name to search by, and paging back. */
export const dashboardPersonEvents = object({ limit, name, ...pageBack });

export const eventSearch = object(
  { event: nonEmptyString(255), since: timestamp, limit },
  ['event'],
);

/** GET /workspaces/{id}/events, the event debugger: paging back as above. */
export const workspaceEvents = object({ limit, ...pageBack, name });

/** GET /workspaces/{workspaceId}/event-names */
export const eventNamesQuery = object({ limit: queryLimit(100) });

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

const eventFields = { id: uuidText, type: str, parameters: freeObject, created_at: isoTime };
/** A stored event as GET /people/{id}/events returns it. */
export const storedEvent = closed(eventFields);
/** GET /events/search adds the person's external id (README, Request bodies). */
export const searchedEvent = closed({ ...eventFields, external_id: str });
/** The dashboard events route adds the person's UUID (README, Request bodies). */
export const dashboardEvent = closed({ ...eventFields, person_id: uuidText });
/** The event debugger's: both of the person's ids (README, Dashboard). */
export const workspaceEvent = closed({ ...eventFields, person_id: uuidText, external_id: str });

const trackStatus: Schema = { ...enumOf('processed', 'accepted_with_warnings'), description: '`accepted_with_warnings`: stored, but a campaign trigger failed on it (see `warnings`)' };
const triggerWarnings: Schema = { type: 'array', items: str, description: 'Present with `accepted_with_warnings`: what failed after the event was stored' };
const trackResult = closed(
  { index: count, event_id: uuidText, person_id: uuidText, event: str, status: trackStatus, warnings: triggerWarnings, person_created: { ...enumOf(true), description: 'Present when this event created the person' }, duplicate },
  ['index', 'event_id', 'person_id', 'event', 'status'],
);
const trackBatchFields = { processed: count, total: count, results: { type: 'array', items: trackResult, description: 'The events stored' } };

export const eventResponses: Record<string, RouteResponses> = {
  'POST /track': {
    success: {
      201: ok('The event is durable on the Log', {
        data: closed(
          {
            event_id: uuidText,
            person_id: uuidText,
            event: str,
            parameters: freeObject,
            timestamp: isoTime,
            processed_at: isoTime,
            status: trackStatus,
            warnings: triggerWarnings,
            person_created: { ...enumOf(true), description: 'Present when the external_id was unknown and a person was created' },
            duplicate,
          },
          ['event_id', 'person_id', 'event', 'parameters', 'timestamp', 'processed_at', 'status'],
        ),
      }),
    },
    errors: { 400: { codes: ['IDENTIFIER_CONFLICT'], why: 'Disagreeing identifier aliases' } },
    badRequest: "no identifier, a `timestamp` outside 1970-01-01T00:00:00Z..2106-02-07T06:28:15.999Z or naming no real instant (a leap second), `parameters` nested deeper than 10 levels, or events the Log's store refuses or cannot serialize (nothing recorded)",
  },
  'POST /track/batch': {
    success: {
      201: ok('Every event is durable on the Log', trackBatchFields),
      207: {
        description: 'Some entries failed; the others are durable on the Log',
        schema: closed({ success: failure, ...trackBatchFields, errors: { type: 'array', minItems: 1, items: closed({ index: count, error: str }) } }),
      },
    },
    errors: { 400: { codes: ['BATCH_TOO_LARGE'], why: 'More than 100 events' } },
    badRequest: "events the Log's store refuses or cannot serialize (nothing recorded)",
  },
  'GET /people/{id}/events': {
    success: { 200: ok('The newest events of the person', { person_id: { type: 'string', description: 'The external id, echoed' }, events: { type: 'array', items: storedEvent }, total: count }) },
    errors: { 404: personNotFound },
  },
  'GET /events/search': {
    success: { 200: ok('The newest events of that name', { events: { type: 'array', items: searchedEvent }, total: count, limit: count }) },
  },
  'GET /workspaces/{workspaceId}/people/{personId}/events': {
    success: { 200: ok('The newest events of the person', { person_id: uuidText, events: { type: 'array', items: dashboardEvent }, total: count }) },
    errors: { 404: dashboardPersonNotFound },
  },
  'GET /workspaces/{workspaceId}/event-names': {
    success: { 200: ok('The event names the workspace has seen, in name order', { names: { type: 'array', items: closed({ name: str, last_seen_at: isoTime }) }, total: { ...count, description: 'Names in this answer' }, limit: count }) },
  },
  'GET /workspaces/{workspaceId}/events': {
    success: { 200: ok("The workspace's latest events, newest first", { events: { type: 'array', items: workspaceEvent }, total: count, limit: count }) },
  },
};

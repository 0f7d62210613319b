// Workspace analytics (docs/analytics.md): daily counts of an event and funnels.
import { nonEmptyString, object } from './common.js';
import { closed, count, enumOf, ok, str, type RouteResponses } from './response-parts.js';

const date = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'A UTC day, YYYY-MM-DD (1970-01-01 to 2106-02-07)' } as const;
const range = {
  from: { ...date, description: 'First UTC day, YYYY-MM-DD' },
  to: { ...date, description: 'Last UTC day, YYYY-MM-DD, included; at most 366 days from `from`, counting both' },
} as const;
const eventName = { ...nonEmptyString(255), description: 'An event name: a standard one (signed_up, logged_in, logged_out, purchase_completed, subscription_started, subscription_cancelled) or any other' } as const;

/** GET /workspaces/{id}/analytics/events */
export const dailyQuery = object({ event: eventName, ...range }, ['event', 'from', 'to']);

/** POST /workspaces/{id}/analytics/funnel */
export const funnelBody = object(
  {
    steps: { type: 'array', items: eventName, minItems: 2, maxItems: 5, description: 'The events in order, 2 to 5' },
    ...range,
    window: { type: 'string', maxLength: 10, description: 'How long after step 1 the last step may come: a duration like 30m, 12h or 7d, at most 90d' },
  },
  ['steps', 'from', 'to', 'window'],
  { additionalProperties: false },
);

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

const counts = { count, people: { ...count, description: 'Distinct people' } };
const dateText = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' };
const timedOut = { codes: ['SERVICE_UNAVAILABLE' as const], why: 'The query ran past its time limit (10 s), or ClickHouse did not answer' };
const badRange = 'a date that names no day from 1970-01-01 to 2106-02-07, `to` before `from`, or a range over 366 days';

export const analyticsResponses: Record<string, RouteResponses> = {
  'GET /workspaces/{workspaceId}/analytics/events': {
    success: {
      200: ok('Counts per UTC day of the range (every day, zeros included) and over the whole range', {
        event: str,
        from: dateText,
        to: dateText,
        standard: { ...enumOf(true, false), description: 'Whether the event is one of the standard events' },
        days: { type: 'array', items: closed({ date: dateText, ...counts }) },
        total: closed({ count, people: { ...count, description: 'Distinct people over the range (not the sum of the days)' } }),
      }),
    },
    errors: { 503: timedOut },
    badRequest: badRange,
  },
  'POST /workspaces/{workspaceId}/analytics/funnel': {
    success: {
      200: ok('People per step: each person from their first step-1 event in the range, each step after the one before and within the window of step 1', {
        from: dateText,
        to: dateText,
        window: str,
        steps: { type: 'array', items: closed({ event: str, people: count }) },
      }),
    },
    errors: { 503: timedOut },
    badRequest: `${badRange}, or a window that is not a duration up to 90d`,
  },
};

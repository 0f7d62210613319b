// Request and response schemas of a campaign's analytics routes (docs/campaign-analytics.md).
import { object, pageBack, queryLimit, timestamp } from './common.js';
import { campaignNotFound } from './campaigns.js';
import { closed, count, enumOf, isoTime, ok, str, type RouteResponses } from './response-parts.js';

const ANALYTICS = '/workspaces/{workspaceId}/campaigns/{campaignId}/analytics';

/** GET …/analytics/timeseries */
export const timeseriesQuery = object({
  bucket: { type: 'string', enum: ['hour', 'day'], default: 'day', description: 'The bucket width (UTC)' },
  from: { ...timestamp, description: 'Start of the range (inclusive); default: `to` less 7 days (hour) or 30 days (day)' },
  to: { ...timestamp, description: 'End of the range (exclusive); default: now. At most 744 hours or 366 days after `from`' },
});

/** GET …/analytics/links */
export const linksQuery = object({ limit: queryLimit(20) });

/** GET …/analytics/export: a page of the CSV, paged back like the messages route. */
export const exportQuery = object({ limit: queryLimit(10_000), ...pageBack });

const capped = { type: 'boolean', description: 'The read stopped at its bound of the newest 200,000 messages: older ones are not counted' } as const;

export const campaignAnalyticsResponses: Record<string, RouteResponses> = {
  [`GET ${ANALYTICS}/timeseries`]: {
    success: {
      200: ok("Sends, opens and clicks per bucket of the range, from the campaign's messages created in it (test sends, machine opens and clicks left out)", {
        bucket: enumOf('hour', 'day'),
        from: isoTime,
        to: isoTime,
        points: { type: 'array', items: closed({ at: isoTime, sent: count, opened: count, clicked: count }) },
        capped,
      }),
    },
    errors: { 400: { codes: [], why: 'A range over 744 hours (hour) or 366 days (day), or `to` not after `from` (VALIDATION_ERROR naming the field)' }, 404: campaignNotFound },
  },
  [`GET ${ANALYTICS}/links`]: {
    success: {
      200: ok("The links clicked most in the campaign's messages: clicks (every one recorded) and unique_clicks (messages with a person's click)", {
        links: { type: 'array', items: closed({ url: str, clicks: count, unique_clicks: count }) },
        total: { ...count, description: 'Distinct URLs clicked' },
        limit: count,
        capped,
      }),
    },
    errors: { 404: campaignNotFound },
  },
  [`GET ${ANALYTICS}/export`]: {
    success: {
      200: {
        description: 'A page of the CSV export, newest first: message_id, external_id, channel, status, sent_at, delivered, opened, clicked, error (test sends left out)',
        schema: str,
        mediaType: 'text/csv',
        headers: { Link: 'The next page (`<…?before=…&before_id=…>; rel="next"`), absent on the last', 'Content-Disposition': 'attachment; filename="campaign-<id>.csv"' },
      },
    },
    errors: { 404: campaignNotFound },
  },
};

// A campaign's analytics page (docs/campaign-analytics.md): sends, opens and clicks over time,
// clicks per link, and the CSV export of its messages. Each read walks the campaign's messages
// along messages_by_campaign_time (migration 410), newest first, and stops after a fixed number
// of them, so its work is bounded however large the campaign; the dashboard's test sends (tagged
// `test`) are left out, as from the stats.
import type { Queryable } from './db.js';
import { pageBackTerm, type PageBack } from './page-back.js';
import type { Bucket } from '../domain/analytics-range.js';

/** The most messages one timeseries or links read walks; an answer that reached it says `capped`. */
export const MESSAGES_SCANNED_MAX = 200_000;

const NOT_TEST = `NOT COALESCE(m.tags @> '["test"]'::jsonb, false)`;
/** A tracked event that a machine made (an image proxy's open, a link scanner's click): not a person's. */
const BY_PERSON = `e.value->'machine' IS DISTINCT FROM 'true'::jsonb`;


interface TimeseriesPoint {
  at: Date;
  sent: number;
  opened: number;
  clicked: number;
}

/**
 * The campaign's messages created in [$3, $4) (newest first, at most $6), counted per `$5`
 * bucket (UTC): sends by sent_at, opens and clicks by their event's `at`, each within the
 * range. Every bucket of the range is answered, empty ones as zeros.
 */
export const TIMESERIES = `WITH m AS MATERIALIZED (
    SELECT m.sent_at, m.events FROM messages m
    WHERE m.workspace_id = $1 AND m.campaign_id = $2::text AND m.campaign_id IS NOT NULL AND m.created_at >= $3::timestamptz AND m.created_at < $4::timestamptz AND ${NOT_TEST}
    ORDER BY m.created_at DESC, m.id DESC LIMIT $6
  ), facts AS (
    SELECT date_trunc($5, m.sent_at, 'UTC') AS b, 1 AS sent, 0 AS opened, 0 AS clicked FROM m WHERE m.sent_at >= $3::timestamptz AND m.sent_at < $4::timestamptz
    UNION ALL
    SELECT date_trunc($5, (e.value->>'at')::timestamptz, 'UTC'), 0, (e.value->>'type' = 'opened')::int, (e.value->>'type' = 'clicked')::int
    FROM m, jsonb_array_elements(m.events) e
    WHERE e.value->>'type' IN ('opened', 'clicked') AND ${BY_PERSON} AND (e.value->>'at')::timestamptz >= $3::timestamptz AND (e.value->>'at')::timestamptz < $4::timestamptz
  )
  SELECT s.b AS at, COALESCE(sum(f.sent), 0)::int AS sent, COALESCE(sum(f.opened), 0)::int AS opened, COALESCE(sum(f.clicked), 0)::int AS clicked,
         (SELECT count(*) FROM m)::int AS scanned
  FROM generate_series(date_trunc($5, $3::timestamptz, 'UTC'), $4::timestamptz - interval '1 microsecond', ('1 ' || $5)::interval) AS s(b)
  LEFT JOIN facts f ON f.b = s.b
  GROUP BY s.b ORDER BY s.b`;

export async function campaignTimeseries(
  q: Queryable, workspaceId: string, campaignId: string, from: string, to: string, bucket: Bucket,
): Promise<{ points: TimeseriesPoint[]; capped: boolean }> {
  const r = await q.query<TimeseriesPoint & { scanned: number }>(TIMESERIES, [workspaceId, campaignId, from, to, bucket, MESSAGES_SCANNED_MAX]);
  return { points: r.rows.map(({ scanned: _, ...p }) => p), capped: (r.rows[0]?.scanned ?? 0) >= MESSAGES_SCANNED_MAX };
}

interface LinkClicks {
  url: string;
  clicks: number;
  /** Messages with a person's click on the link (machine clicks left out). */
  unique_clicks: number;
}

/** The campaign's latest $3 messages' `clicked` events by their URL: the top $4 by clicks, and how many URLs there were. */
export const LINKS = `WITH m AS MATERIALIZED (
    SELECT m.id, m.events FROM messages m
    WHERE m.workspace_id = $1 AND m.campaign_id = $2::text AND m.campaign_id IS NOT NULL AND ${NOT_TEST}
    ORDER BY m.created_at DESC, m.id DESC LIMIT $3
  ), links AS (
    SELECT e.value->'details'->>'url' AS url, count(*)::int AS clicks, count(DISTINCT m.id) FILTER (WHERE ${BY_PERSON})::int AS unique_clicks
    FROM m, jsonb_array_elements(m.events) e
    WHERE e.value->>'type' = 'clicked' AND e.value->'details'->>'url' IS NOT NULL
    GROUP BY 1
  )
  SELECT (SELECT count(*) FROM m)::int AS scanned, (SELECT count(*) FROM links)::int AS urls,
         COALESCE((SELECT json_agg(l) FROM (SELECT * FROM links ORDER BY clicks DESC, url LIMIT $4) l), '[]') AS top`;

export async function campaignLinks(q: Queryable, workspaceId: string, campaignId: string, limit: number): Promise<{ links: LinkClicks[]; urls: number; capped: boolean }> {
  const r = await q.query<{ scanned: number; urls: number; top: LinkClicks[] }>(LINKS, [workspaceId, campaignId, MESSAGES_SCANNED_MAX, limit]);
  const row = r.rows[0]!;
  return { links: row.top, urls: row.urls, capped: row.scanned >= MESSAGES_SCANNED_MAX };
}

/** A row of the CSV export. */
interface ExportRow {
  id: string;
  created_at: Date;
  external_id: string;
  channel: string;
  status: string;
  sent_at: Date | null;
  delivered: boolean;
  opened: boolean;
  clicked: boolean;
  error: string | null;
}

/** A page of the campaign's messages for the CSV export, newest first (`before` pages back), along messages_by_campaign_time. */
export function exportPageQuery(workspaceId: string, campaignId: string, before: PageBack | null, limit: number): { text: string; values: unknown[] } {
  const values: unknown[] = [workspaceId, campaignId, limit];
  const text = `SELECT m.id, m.created_at, m.external_id, m.channel, m.status, m.sent_at, m.status IN ('delivered', 'complained') AS delivered,
      m.events @> '[{"type":"opened"}]' AS opened, m.events @> '[{"type":"clicked"}]' AS clicked, m.error
    FROM messages m
    WHERE m.workspace_id = $1 AND m.campaign_id = $2::text AND m.campaign_id IS NOT NULL AND ${NOT_TEST}${pageBackTerm('m', 'messages', 'workspace_id = $1', before, values)}
    ORDER BY m.created_at DESC, m.id DESC LIMIT $3`;
  return { text, values };
}

export async function campaignExportPage(q: Queryable, workspaceId: string, campaignId: string, before: PageBack | null, limit: number): Promise<ExportRow[]> {
  const { text, values } = exportPageQuery(workspaceId, campaignId, before, limit);
  return (await q.query<ExportRow>(text, values)).rows;
}

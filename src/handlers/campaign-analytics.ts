// A campaign's analytics page (docs/campaign-analytics.md): sends, opens and clicks over time,
// the most clicked links, and the CSV export of its messages, a bounded page per request. The
// funnel, the rates and the per-channel and per-node figures are the campaign's stats
// (GET /campaigns/{campaignId}). Every read is of the path's workspace, whose member the
// pipeline has checked; another workspace's campaign is 404.
import type { Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { loadCampaign } from './campaigns.js';
import { pageBack } from './page-back.js';
import { analyticsRange } from '../domain/analytics-range.js';
import { csvRow } from '../domain/csv-export.js';
import { iso } from '../domain/time.js';
import { campaignExportPage, campaignLinks, campaignTimeseries } from '../store/campaign-analytics.js';

/** `limit` above these is silently reduced. */
const LINKS_MAX = 100;
const EXPORT_MAX = 10_000;

const EXPORT_COLUMNS = ['message_id', 'external_id', 'channel', 'status', 'sent_at', 'delivered', 'opened', 'clicked', 'error'];

const timeseries: Handler<'GET /workspaces/{workspaceId}/campaigns/{campaignId}/analytics/timeseries'> = async (ctx) => {
  const { bucket } = ctx.query;
  const range = analyticsRange(bucket, ctx.query.from, ctx.query.to, Date.now());
  const campaign = await loadCampaign(ctx.db, ctx);
  const r = await campaignTimeseries(ctx.db, ctx.workspaceId, campaign.id, range.from, range.to, bucket);
  const points = r.points.map((p) => ({ at: iso(p.at), sent: p.sent, opened: p.opened, clicked: p.clicked }));
  return json(200, { success: true, bucket, ...range, points, capped: r.capped });
};

const links: Handler<'GET /workspaces/{workspaceId}/campaigns/{campaignId}/analytics/links'> = async (ctx) => {
  const campaign = await loadCampaign(ctx.db, ctx);
  const limit = Math.min(ctx.query.limit, LINKS_MAX);
  const r = await campaignLinks(ctx.db, ctx.workspaceId, campaign.id, limit);
  return json(200, { success: true, links: r.links, total: r.urls, limit, capped: r.capped });
};

/** A page of the CSV (with its header row), and a `Link` to the next when the page is full. */
const exportCsv: Handler<'GET /workspaces/{workspaceId}/campaigns/{campaignId}/analytics/export'> = async (ctx) => {
  const campaign = await loadCampaign(ctx.db, ctx);
  const limit = Math.min(ctx.query.limit, EXPORT_MAX);
  const rows = limit === 0 ? [] : await campaignExportPage(ctx.db, ctx.workspaceId, campaign.id, pageBack(ctx.query), limit);
  let body = csvRow(EXPORT_COLUMNS);
  for (const m of rows) body += csvRow([m.id, m.external_id, m.channel, m.status, iso(m.sent_at), m.delivered, m.opened, m.clicked, m.error]);
  const last = rows.length === limit ? rows.at(-1) : undefined;
  const next = last && `<?${new URLSearchParams({ limit: String(limit), before: iso(last.created_at)!, before_id: last.id })}>; rel="next"`;
  return {
    status: 200,
    body,
    headers: { 'Content-Type': 'text/csv; charset=utf-8', 'Content-Disposition': `attachment; filename="campaign-${campaign.id}.csv"`, ...(next ? { Link: next } : {}) },
  };
};

export const campaignAnalyticsHandlers = {
  'GET /workspaces/{workspaceId}/campaigns/{campaignId}/analytics/timeseries': timeseries,
  'GET /workspaces/{workspaceId}/campaigns/{campaignId}/analytics/links': links,
  'GET /workspaces/{workspaceId}/campaigns/{campaignId}/analytics/export': exportCsv,
} satisfies Handlers;

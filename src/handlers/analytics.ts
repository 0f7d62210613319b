// Workspace analytics (docs/analytics.md): daily counts of an event and funnels, read from the
// analytics store (ClickHouse with CLICKHOUSE_URL, else PostgreSQL), for a dashboard session
// or an API key with events:read; the workspace is the path's, a key's own only.
import type { Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { dayRange, STANDARD_EVENTS, windowMs } from '../domain/analytics.js';

/** Each query is cancelled after this long (or at the request's deadline, if sooner). */
const QUERY_TIMEOUT_MS = 10_000;
const deadlineOf = (deadline: number) => Math.min(deadline, Date.now() + QUERY_TIMEOUT_MS);

const daily: Handler<'GET /workspaces/{workspaceId}/analytics/events'> = async (ctx) => {
  const { event, from, to } = ctx.query;
  const range = dayRange(from, to);
  const answer = await ctx.analytics.daily(ctx.workspaceId, { event, range }, deadlineOf(ctx.deadline));
  return json(200, { success: true, event, from, to, standard: (STANDARD_EVENTS as readonly string[]).includes(event), ...answer });
};

const funnel: Handler<'POST /workspaces/{workspaceId}/analytics/funnel'> = async (ctx) => {
  const { steps, from, to, window } = ctx.body;
  const range = dayRange(from, to);
  const people = await ctx.analytics.funnel(ctx.workspaceId, { steps, range, window, windowMs: windowMs(window) }, deadlineOf(ctx.deadline));
  return json(200, { success: true, from, to, window, steps: steps.map((event, i) => ({ event, people: people[i] ?? 0 })) });
};

export const analyticsHandlers = {
  'GET /workspaces/{workspaceId}/analytics/events': daily,
  'POST /workspaces/{workspaceId}/analytics/funnel': funnel,
} satisfies Handlers;

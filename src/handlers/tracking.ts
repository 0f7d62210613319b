// Herald's own opens and clicks (docs/tracking.md), outside /api/v1, no credential, under the
// ip-public budget. `GET /t/c/{token}` answers 302 to the link's target as stored with the
// message at send time (the token names the message and the link's index, under a MAC; the
// request carries no URL, so there is no open redirect), `GET /t/o/{token}` a 1×1 GIF. A token
// Herald did not make, or whose message is gone: 404, nothing recorded.
//
// Recording costs no statement of its own: the open or click is appended to the Log as the
// person's event (`message_opened`, `message_clicked`; group-committed with the other appends)
// and added to the message's events by a batch writer (one statement per workspace of a batch,
// whatever arrived meanwhile). What the redirect reads of a message is fixed once written, so
// it is cached, for 5 s only: the person's event names them by external id, and the Log would
// create a person deleted meanwhile again (bare), so a deletion must reach the redirect soon. A
// failure to record never keeps a person from their link.
import type { Handler, Handlers, PathCtx } from './context.js';
import type { Reply } from './reply.js';
import { NOT_FOUND } from './unsubscribe.js';
import { readClickToken, readOpenToken, type TrackedLink } from '../channels/tracking-links.js';
import { addEngagement, trackedMessage, type EngagementEvent, type TrackedMessage } from '../store/engagement.js';
import type { Db } from '../store/index.js';
import { isMachine } from '../domain/tracking.js';
import { Batcher } from '../util/batcher.js';
import { groupBy } from '../util/group-by.js';
import { newId } from '../ids.js';
import { logger } from '../logger.js';

/** A transparent 1×1 GIF. */
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const PIXEL: Reply = { status: 200, bytes: GIF, headers: { 'Content-Type': 'image/gif', 'Cache-Control': 'no-store, private', 'Referrer-Policy': 'no-referrer' } };

// ---- What the redirect reads, cached per actor thread ---------------------------------------

const CACHE_MS = 5_000;
const CACHE_MAX = 50_000;
/** Messages by workspace and id, oldest first (a Map keeps insertion order). */
const cache = new Map<string, { m: TrackedMessage; until: number }>();

async function messageOf(db: Db, link: TrackedLink): Promise<TrackedMessage | undefined> {
  const key = `${link.workspaceId} ${link.messageId}`;
  const hit = cache.get(key);
  const now = Date.now();
  if (hit && hit.until > now) return hit.m;
  const m = await trackedMessage(db, link.workspaceId, link.messageId);
  cache.delete(key);
  // A message not sent has no tracked links yet: nothing to keep.
  if (m && m.sent_at !== null) {
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, { m, until: now + CACHE_MS });
  }
  return m;
}

// ---- Writing, in batches ----------------------------------------------------------------------

interface Pending {
  workspaceId: string;
  event: EngagementEvent;
  settle: (err?: unknown) => void;
}

/** One writer per store (one per actor thread). */
const writers = new WeakMap<Db, Batcher<Pending>>();
function writerOf(db: Db): Batcher<Pending> {
  let w = writers.get(db);
  if (!w) {
    w = new Batcher<Pending>(async (items) => {
      for (const [workspaceId, of] of groupBy(items, (p) => p.workspaceId)) {
        try {
          await addEngagement(db, workspaceId, of.map((p) => p.event));
          for (const p of of) p.settle();
        } catch (err) {
          for (const p of of) p.settle(err);
        }
      }
    }, 2);
    writers.set(db, w);
  }
  return w;
}

/** Records an open or a click: the person's event in the Log, the message's event in its row; a person's (not a machine's) may trigger campaigns. */
async function record(ctx: PathCtx<'token'>, link: TrackedLink, m: TrackedMessage, type: 'opened' | 'clicked', details: Record<string, unknown>): Promise<void> {
  const now = Date.now();
  const machine = isMachine(now, m.sent_at, ctx.headers['user-agent']?.[0]);
  const at = new Date(now).toISOString();
  const event = { messageId: link.messageId, type, at, machine, details };
  try {
    const [appended] = await Promise.all([
      ctx.events.appendEvents([
        { id: newId(), workspace_id: link.workspaceId, external_id: m.external_id, type: `message_${type}`, parameters: { message_id: link.messageId, campaign_id: m.campaign_id, channel: m.channel, machine, ...details }, created_at: at },
      ]),
      new Promise<void>((resolve, reject) => writerOf(ctx.db).add({ workspaceId: link.workspaceId, event, settle: (err) => (err ? reject(err) : resolve()) })),
    ]);
    if (!machine) ctx.defer(async () => void (await ctx.eventTriggers.fire(link.workspaceId, appended.map((a) => a.record))));
  } catch (err) {
    logger.warn('tracking: an engagement could not be recorded', { type, workspaceId: link.workspaceId, messageId: link.messageId, err });
  }
}

const click: Handler<'GET /t/c/{token}'> = async (ctx) => {
  const link = readClickToken(ctx.messaging.unsubscribeKey, ctx.params.token);
  const m = link && (await messageOf(ctx.db, link));
  const url = m?.links?.[link!.index];
  if (!link || !m || url === undefined) return NOT_FOUND;
  await record(ctx, link, m, 'clicked', { url, link: link.index });
  return { status: 302, headers: { Location: url, 'Cache-Control': 'no-store, private', 'Referrer-Policy': 'no-referrer' } };
};

const open: Handler<'GET /t/o/{token}'> = async (ctx) => {
  const link = readOpenToken(ctx.messaging.unsubscribeKey, ctx.params.token);
  const m = link && (await messageOf(ctx.db, link));
  if (!link || !m) return NOT_FOUND;
  await record(ctx, link, m, 'opened', {});
  return PIXEL;
};

export const trackingHandlers = {
  'GET /t/c/{token}': click,
  'GET /t/o/{token}': open,
} satisfies Handlers;

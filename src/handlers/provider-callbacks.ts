// Provider callbacks (docs/channels.md; docs/ingest.md), outside /api/v1, no credential: each request
// is verified with the provider's own signature over the raw bytes before anything in it is
// read (Mailgun's signature travels inside its JSON, so that alone is parsed first). Missing,
// bad, stale or replayed signature → 401, nothing recorded; no workspace or channel → 404;
// malformed, or holding text the store cannot keep → 400, nothing recorded.
//
// The workspace's tenant controls these bodies (its own keys sign them), so what one costs is
// bounded: no statement per event (channels/callbacks.ts), a workspace's
// callbacks are applied one at a time with a short line behind, sharing a few of the actor's store
// connections with the other workspaces' in turn, and each runs within the request's deadline: a
// 503 is answered only when nothing was recorded.
import type { Ctx, Handler, Handlers, PathCtx } from './context.js';
import { errorReply, json, type Reply } from './reply.js';
import { isUuid, newId } from '../ids.js';
import { rememberToken, withDeadline, type Queryable } from '../store/index.js';
import { applyProviderEvents, type Applied, type ProviderEvent } from '../channels/callbacks.js';
import { FRESH_SECONDS, type CallbackRequest } from '../channels/callback-text.js';
import { EMAIL_CALLBACKS } from '../channels/email/callbacks.js';
import { applyInbound, inboundMessage, rememberInbound, statusEvents, twilioForm } from '../channels/sms/callbacks.js';
import { loadEmailSettings } from '../channels/email/settings.js';
import { loadSmsSettings, smsCallbackUrls } from '../channels/sms/settings.js';
import type { StoredSettings } from '../store/channel-settings.js';
import { TurnQueue, TurnRefused } from '../util/turn-queue.js';
import { cpuStep } from '../util/cpu-steps.js';

const flat = (status: number, error: string): Reply => json(status, { error });
const UNAUTHORIZED = flat(401, 'Missing or bad signature');
const NOT_CONFIGURED = flat(404, 'No such workspace, or its channel is not configured');
const MALFORMED = flat(400, 'Malformed callback body');

/** The request as the providers' signature checks read it. */
const signed = (ctx: Ctx): CallbackRequest => ({ raw: ctx.raw!, header: (name) => ctx.headers[name.toLowerCase()]?.[0] });

/** The workspace's settings of a channel, when the path names a workspace and they are stored and readable. */
async function channel<T>(ctx: PathCtx<'workspaceId'>, load: (q: Queryable, deps: { settings: Ctx['messaging'] }, ws: string) => Promise<StoredSettings<T> | null>): Promise<T | undefined> {
  const ws = ctx.params.workspaceId;
  if (!isUuid(ws)) return undefined;
  const stored = await load(ctx.db, { settings: ctx.messaging }, ws);
  return stored?.readable ? stored.settings : undefined;
}

// ---- Applying, in the workspace's turn and within the request's deadline --------------------

/**
 * The actor's callbacks (one queue per actor thread, as this module is loaded once per thread):
 * each workspace's one at a time, with at most CALLBACK_LINE more waiting (beyond that: 503 at
 * once), and at most CALLBACK_SLOTS of all workspaces' at once, so that other requests always
 * find store connections (HERALD_PG_POOL_SIZE, default 4).
 */
const CALLBACK_SLOTS = 2;
const CALLBACK_LINE = 4;
const turns = new TurnQueue<string>({ slots: CALLBACK_SLOTS, linePerKey: CALLBACK_LINE });
/** A callback's work ends this long before the front gives up on it, so that its answer is the one given. */
const ANSWER_MARGIN_MS = 1_000;

const NOTHING_RECORDED = 'The callback could not be applied in time; nothing was recorded. Retry shortly.';

/** A transaction whose statements end before the request's deadline, or fail it (rolled back). */
type Tx = <T>(fn: (q: Queryable) => Promise<T>) => Promise<T>;

/**
 * Runs `work` in the workspace's turn, with transactions bounded by the request's deadline.
 * Refused (the workspace's line is full) or out of time: a 503 reply, nothing recorded.
 */
async function inTurn(ctx: PathCtx<'workspaceId'>, work: (tx: Tx) => Promise<Reply>): Promise<Reply> {
  const deadline = ctx.deadline - ANSWER_MARGIN_MS;
  const tx: Tx = (fn) => ctx.db.tx((q) => fn(withDeadline(q, deadline, NOTHING_RECORDED)));
  try {
    return await turns.run(ctx.params.workspaceId, deadline, () => work(tx));
  } catch (err) {
    if (!(err instanceof TurnRefused)) throw err;
    return err.why === 'line_full' ? LINE_FULL : errorReply('flat', 'SERVICE_UNAVAILABLE', NOTHING_RECORDED);
  }
}

const LINE_FULL = errorReply('flat', 'SERVICE_UNAVAILABLE', `This workspace already has ${CALLBACK_LINE} provider callbacks waiting; nothing was recorded. Retry shortly.`);
/** A callback that could not wait for its turn is refused before its body is verified or read (that would be work for nothing). */
const lineFull = (ctx: PathCtx<'workspaceId'>) => turns.lineFull(ctx.params.workspaceId);

/**
 * Applies the events `read` finds in the body (undefined: malformed), in the workspace's turn: a
 * SendGrid batch is a megabyte of JSON, so a workspace's are read one at a time, and only once
 * let in. A Mailgun token is remembered first: a replayed one is refused, nothing applied.
 */
function record(ctx: PathCtx<'workspaceId'>, read: () => ProviderEvent[] | undefined, token?: { token: string; timestamp: number }): Promise<Reply> {
  const ws = ctx.params.workspaceId;
  const answer = (fates: Applied[]) => {
    const counts = { applied: 0, duplicates: 0, unmatched: 0 };
    for (const { fate } of fates) counts[fate === 'applied' ? 'applied' : fate === 'duplicate' ? 'duplicates' : 'unmatched']++;
    return json(200, { success: true, ...counts });
  };
  return inTurn(ctx, async (tx) => {
    const events = await cpuStep(read);
    if (!events) return MALFORMED;
    if (events.length === 0 && !token) return answer([]);
    let touched: string[] = [];
    const reply = await tx(async (q) => {
      // Kept while its timestamp could be fresh, and as long again: the database's clock may not be Herald's.
      if (token && !(await rememberToken(q, ws, token.token, token.timestamp + 2 * FRESH_SECONDS))) return UNAUTHORIZED;
      const applied = await applyProviderEvents(q, ws, events);
      touched = applied.touched;
      return answer(applied.fates);
    });
    // A bounce or complaint changes what a segment's reachability reads.
    await ctx.segments.touched(ws, touched);
    return reply;
  });
}

// ---- Email ------------------------------------------------------------------------------

const email: Handler<'POST /webhooks/email/{workspaceId}'> = async (ctx) => {
  const hooks = (await channel(ctx, loadEmailSettings))?.webhooks;
  if (!hooks) return NOT_CONFIGURED;
  if (lineFull(ctx)) return LINE_FULL;
  const provider = EMAIL_CALLBACKS[hooks.provider];
  const req = signed(ctx);
  const verified = await provider.verify(hooks, req);
  if (!verified) return UNAUTHORIZED;
  return record(ctx, () => provider.parse(req, verified), verified.token);
};

// ---- SMS (Twilio) ----------------------------------------------------------------------

const status: Handler<'POST /webhooks/sms/{workspaceId}/status'> = async (ctx) => {
  const sms = await channel(ctx, loadSmsSettings);
  if (!sms) return NOT_CONFIGURED;
  if (lineFull(ctx)) return LINE_FULL;
  const form = await cpuStep(() => twilioForm(signed(ctx), sms, smsCallbackUrls(ctx.messaging.publicUrl, ctx.params.workspaceId).status));
  if (!form) return UNAUTHORIZED;
  if (form === 'unstorable') return MALFORMED;
  const events = statusEvents(form);
  return events ? record(ctx, () => events) : MALFORMED;
};

const TWIML: Reply = { status: 200, body: '<?xml version="1.0" encoding="UTF-8"?><Response/>', headers: { 'Content-Type': 'text/xml' } };

const inbound: Handler<'POST /webhooks/sms/{workspaceId}/inbound'> = async (ctx) => {
  const sms = await channel(ctx, loadSmsSettings);
  if (!sms) return NOT_CONFIGURED;
  if (lineFull(ctx)) return LINE_FULL;
  const form = await cpuStep(() => twilioForm(signed(ctx), sms, smsCallbackUrls(ctx.messaging.publicUrl, ctx.params.workspaceId).inbound));
  if (!form) return UNAUTHORIZED;
  if (form === 'unstorable') return MALFORMED;
  const m = inboundMessage(form, sms);
  if (!m) return MALFORMED;
  const ws = ctx.params.workspaceId;
  // The MessageSid is remembered once the message is applied: one refused, or not applied for an
  // outage, is applied when Twilio sends it again.
  return inTurn(ctx, async (tx) => {
    // Any text but STOP or START is the person's event (it can trigger campaigns).
    const person = await tx((q) => applyInbound(q, ws, m));
    if (person) {
      // The event is durable in the Log, not in this transaction: its id is remembered once it is
      // (without the deadline: an append made is then never made again).
      const appended = await ctx.events.appendEvents([{ id: newId(), workspace_id: ws, external_id: person.external_id, type: 'sms_received', parameters: { body: m.body, from: m.from }, created_at: new Date().toISOString() }]);
      await rememberInbound(ctx.db, ws, m);
      await ctx.eventTriggers.fire(ws, appended.map((a) => a.record));
    }
    return TWIML;
  });
};

export const providerCallbackHandlers = {
  'POST /webhooks/email/{workspaceId}': email,
  'POST /webhooks/sms/{workspaceId}/status': status,
  'POST /webhooks/sms/{workspaceId}/inbound': inbound,
} satisfies Handlers;

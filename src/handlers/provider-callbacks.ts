// Provider callbacks (docs/channels.md; docs/ingest.md), outside /api/v1, no credential: each request
// is verified with the provider's own signature over the raw bytes before anything in it is
// read (Mailgun's signature travels inside its JSON, so that alone is parsed first). Missing,
// bad, stale or replayed signature → 401, nothing recorded; no workspace or channel → 404;
// malformed, or holding text the store cannot keep → 400, nothing recorded.
//
// The workspace's tenant controls these bodies (its own keys sign them), so what one costs is
// bounded: no statement per event (messaging/provider-events.ts), a workspace's
// callbacks are applied one at a time with a short line behind, sharing a few of the actor's store
// connections with the other workspaces' in turn, and each runs within the request's deadline: a
// 503 is answered only when nothing was recorded.
import { createHmac, createPublicKey, createVerify, timingSafeEqual, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Ctx, Handler, Handlers, PathCtx } from './context.js';
import { errorReply, json, type Reply } from './reply.js';
import { isUuid, newId } from '../ids.js';
import { loadMessageChannel, personByPhone, rememberToken, suppressAddress, withDeadline, type EmailChannel, type Queryable, type SmsChannel } from '../store/index.js';
import { applyProviderEvents, messageIdIn, type Applied, type ProviderEvent } from '../messaging/provider-events.js';
import { callbackUrls } from '../messaging/settings.js';
import { e164, storedForms } from '../sms/phone.js';
import type { AddressChannel, ProviderEventKind } from '../domain/messages.js';
import { isUnstorable, unstorableText } from '../domain/storable-text.js';
import { TurnQueue, TurnRefused } from '../util/turn-queue.js';
import { cpuStep } from '../util/cpu-steps.js';

const flat = (status: number, error: string): Reply => json(status, { error });
const UNAUTHORIZED = flat(401, 'Missing or bad signature');
const NOT_CONFIGURED = flat(404, 'No such workspace, or its channel is not configured');
const MALFORMED = flat(400, 'Malformed callback body');

const header = (ctx: Ctx, name: string) => ctx.headers[name.toLowerCase()]?.[0];
const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** A signed timestamp (seconds) is accepted this far from now, either way, as Mailgun advises. */
const FRESH_SECONDS = 300;
/** Seconds since the epoch, within FRESH_SECONDS of now; undefined otherwise. */
function freshTimestamp(text: unknown): number | undefined {
  if (typeof text !== 'string' || !/^[0-9]{1,12}$/.test(text)) return undefined;
  const seconds = Number(text);
  return Math.abs(Date.now() / 1000 - seconds) <= FRESH_SECONDS ? seconds : undefined;
}

/** Provider ids are kept in an index: longer ones are not a provider's. */
const MAX_ID = 255;
const idText = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= MAX_ID ? v : undefined);
/** A detail kept on the message (a click's URL, a bounce's reason): text, cut to a bounded length. */
const detail = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v.slice(0, 2_048) : undefined);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function channel<C extends AddressChannel>(ctx: PathCtx<'workspaceId'>, c: C) {
  const ws = ctx.params.workspaceId;
  if (!isUuid(ws)) return undefined;
  const stored = await loadMessageChannel(ctx.db, ctx.messaging.secrets, ws, c);
  return stored?.readable ? stored.settings : undefined;
}

/** The JSON body, and whether every string in it can be stored; undefined when it is not JSON. */
function parseJson(raw: Uint8Array): { body: unknown; storable: boolean } | undefined {
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  try {
    const body: unknown = JSON.parse(text);
    return { body, storable: unstorableText(text, body) === null };
  } catch {
    return undefined;
  }
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
    return tx(async (q) => {
      // Kept while its timestamp could be fresh, and as long again: the database's clock may not be Herald's.
      if (token && !(await rememberToken(q, ws, token.token, token.timestamp + 2 * FRESH_SECONDS))) return UNAUTHORIZED;
      return answer(await applyProviderEvents(q, ws, events));
    });
  });
}

// ---- Email ------------------------------------------------------------------------------

/** The workspaces' SendGrid verification keys, parsed (a key is parsed once, not per callback). */
const sendgridKeys = new LRUCache<string, KeyObject>({ max: 1_000 });

/** Bytes of a body hashed in one step: a megabyte's hashing is many short steps, not one long one. */
const HASHED_PER_STEP = 64 * 1024;

async function sendgridVerified(key: string, ctx: Ctx): Promise<boolean> {
  const signature = header(ctx, 'X-Twilio-Email-Event-Webhook-Signature');
  const timestamp = header(ctx, 'X-Twilio-Email-Event-Webhook-Timestamp');
  if (!signature || freshTimestamp(timestamp) === undefined) return false;
  try {
    let publicKey = sendgridKeys.get(key);
    if (!publicKey) sendgridKeys.set(key, (publicKey = key.includes('-----BEGIN') ? createPublicKey(key) : createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' })));
    const verifier = createVerify('sha256').update(timestamp!);
    const raw = ctx.raw!;
    for (let at = 0; at < raw.length; at += HASHED_PER_STEP) await cpuStep(() => verifier.update(raw.subarray(at, at + HASHED_PER_STEP)));
    return verifier.verify(publicKey, signature, 'base64');
  } catch {
    return false;
  }
}

const SENDGRID: Record<string, ProviderEventKind> = { delivered: 'delivered', deferred: 'deferred', spamreport: 'complaint', open: 'opened', click: 'clicked' };

/** The batch's events Herald applies (others, e.g. `processed`, are left out); undefined when it is not a batch of event objects. */
function sendgridEvents(body: unknown): ProviderEvent[] | undefined {
  if (!Array.isArray(body) || !body.every(isObject)) return undefined;
  const events: ProviderEvent[] = [];
  for (const e of body) {
    const type = String(e.event ?? '');
    const kind: ProviderEventKind | undefined = type === 'bounce' ? (e.type === 'blocked' ? 'soft_bounce' : 'hard_bounce') : type === 'dropped' ? undefined : SENDGRID[type];
    if (!kind || e.sg_event_id === undefined) continue;
    const eventId = idText(e.sg_event_id);
    if (!eventId) return undefined;
    const url = detail(e.url);
    const reason = detail(e.reason);
    events.push({ provider: 'sendgrid', eventId, messageId: messageIdIn(e['smtp-id']), kind, details: { ...(url ? { url } : {}), ...(reason ? { reason } : {}) } });
  }
  return events;
}

/** Mailgun's signature block, verified and fresh: its token and timestamp; undefined otherwise. */
function mailgunSignature(key: string, body: unknown): { token: string; timestamp: number } | undefined {
  const s = isObject(body) && isObject(body.signature) ? body.signature : undefined;
  const timestamp = freshTimestamp(s?.timestamp);
  const token = idText(s?.token);
  if (timestamp === undefined || !token || typeof s!.signature !== 'string') return undefined;
  return sameText(createHmac('sha256', key).update(String(s!.timestamp) + token).digest('hex'), s!.signature) ? { token, timestamp } : undefined;
}

/** The event Herald applies, null when there is none to apply (another kind), undefined when malformed. */
function mailgunEvent(body: Record<string, unknown>): ProviderEvent | null | undefined {
  const d = body['event-data'];
  if (!isObject(d)) return undefined;
  const type = String(d.event ?? '');
  const kind: ProviderEventKind | undefined =
    type === 'failed' ? (d.severity === 'permanent' ? 'hard_bounce' : 'soft_bounce') : ({ delivered: 'delivered', complained: 'complaint', opened: 'opened', clicked: 'clicked' } as Record<string, ProviderEventKind>)[type];
  if (!kind) return null;
  const eventId = idText(d.id);
  if (!eventId) return undefined;
  const headers = isObject(d.message) && isObject(d.message.headers) ? d.message.headers : undefined;
  const url = detail(d.url);
  return { provider: 'mailgun', eventId, messageId: messageIdIn(headers?.['message-id']), kind, details: url ? { url } : {} };
}

function postmarkVerified(hooks: NonNullable<EmailChannel['webhooks']>, ctx: Ctx): boolean {
  const auth = header(ctx, 'Authorization') ?? '';
  if (!auth.startsWith('Basic ')) return false;
  return sameText(Buffer.from(auth.slice(6), 'base64').toString(), `${hooks.username ?? ''}:${hooks.password ?? ''}`);
}

/** The event Herald applies, null when there is none to apply (another record type), undefined when malformed. */
function postmarkEvent(b: unknown): ProviderEvent | null | undefined {
  if (!isObject(b) || typeof b.RecordType !== 'string') return undefined;
  const kind: ProviderEventKind | undefined =
    b.RecordType === 'Bounce' ? (b.Type === 'HardBounce' ? 'hard_bounce' : 'soft_bounce') : ({ Delivery: 'delivered', SpamComplaint: 'complaint', Open: 'opened', Click: 'clicked' } as Record<string, ProviderEventKind>)[b.RecordType];
  if (!kind) return null;
  if (b.Headers !== undefined && !(Array.isArray(b.Headers) && b.Headers.every((h) => isObject(h) && typeof h.Name === 'string'))) return undefined;
  const eventId = idText(String(b.ID ?? `${b.RecordType}:${String(b.MessageID)}:${String(b.ReceivedAt ?? b.DeliveredAt ?? b.BouncedAt ?? '')}`));
  if (!eventId) return undefined;
  const headers = (b.Headers ?? []) as { Name: string; Value?: unknown }[];
  const messageId = messageIdIn(headers.find((h) => h.Name.toLowerCase() === 'message-id')?.Value) ?? messageIdIn(b.MessageID);
  const url = detail(b.OriginalLink);
  return { provider: 'postmark', eventId, messageId, kind, details: url ? { url } : {} };
}

const email: Handler<'POST /webhooks/email/{workspaceId}'> = async (ctx) => {
  const hooks = (await channel(ctx, 'email'))?.webhooks;
  if (!hooks) return NOT_CONFIGURED;
  if (lineFull(ctx)) return LINE_FULL;
  if (hooks.provider === 'sendgrid') {
    if (!(await sendgridVerified(hooks.verification_key ?? '', ctx))) return UNAUTHORIZED;
    return record(ctx, () => {
      const parsed = parseJson(ctx.raw!);
      return parsed?.storable ? sendgridEvents(parsed.body) : undefined;
    });
  }
  if (hooks.provider === 'postmark') {
    if (!postmarkVerified(hooks, ctx)) return UNAUTHORIZED;
    const parsed = parseJson(ctx.raw!);
    const event = parsed?.storable ? postmarkEvent(parsed.body) : undefined;
    return event === undefined ? MALFORMED : record(ctx, () => (event ? [event] : []));
  }
  // Mailgun's signature is in the body: none readable is none at all.
  const parsed = await cpuStep(() => parseJson(ctx.raw!));
  const signed = parsed && mailgunSignature(hooks.signing_key ?? '', parsed.body);
  if (!signed) return UNAUTHORIZED;
  const event = parsed.storable ? mailgunEvent(parsed.body as Record<string, unknown>) : undefined;
  // The token is spent whatever the event: the signature does not cover it.
  return event === undefined ? MALFORMED : record(ctx, () => (event ? [event] : []), signed);
};

// ---- SMS (Twilio) ----------------------------------------------------------------------

/**
 * X-Twilio-Signature: base64 HMAC-SHA1, keyed with the auth token, of the URL and each form field
 * name + value, sorted by name. The form, verified; 'unstorable' when a name or value holds text
 * the store cannot keep.
 */
function twilioForm(ctx: Ctx, sms: SmsChannel, url: string): Record<string, string> | 'unstorable' | undefined {
  const signature = header(ctx, 'X-Twilio-Signature');
  if (!signature) return undefined;
  const form = [...new URLSearchParams(Buffer.from(ctx.raw!).toString('utf8'))];
  const signed = url + [...form].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => k + v).join('');
  const expected = createHmac('sha1', sms.twilio.auth_token).update(signed).digest('base64');
  if (!sameText(expected, signature)) return undefined;
  return form.some(([k, v]) => isUnstorable(k) || isUnstorable(v)) ? 'unstorable' : Object.fromEntries(form);
}

const status: Handler<'POST /webhooks/sms/{workspaceId}/status'> = async (ctx) => {
  const sms = await channel(ctx, 'sms');
  if (!sms) return NOT_CONFIGURED;
  if (lineFull(ctx)) return LINE_FULL;
  const form = await cpuStep(() => twilioForm(ctx, sms, callbackUrls(ctx.messaging, ctx.params.workspaceId).smsStatus));
  if (!form) return UNAUTHORIZED;
  if (form === 'unstorable') return MALFORMED;
  const sid = idText(form.MessageSid ?? form.SmsSid);
  const state = form.MessageStatus ?? form.SmsStatus;
  if (!sid || !state || state.length > 64) return MALFORMED;
  const kind: ProviderEventKind | undefined = state === 'delivered' ? 'delivered' : state === 'undelivered' || state === 'failed' ? 'failed' : undefined;
  if (!kind) return record(ctx, () => []);
  const errorCode = form.ErrorCode ? Number(form.ErrorCode) : undefined;
  return record(ctx, () => [{ provider: 'twilio', eventId: `${sid}:${state}`, providerMessageId: sid, kind, details: { status: state, ...(errorCode ? { error_code: errorCode } : {}) }, ...(errorCode ? { errorCode } : {}) }]);
};

const STOP = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const START = new Set(['START', 'UNSTOP', 'YES']);
const TWIML: Reply = { status: 200, body: '<?xml version="1.0" encoding="UTF-8"?><Response/>', headers: { 'Content-Type': 'text/xml' } };

const inbound: Handler<'POST /webhooks/sms/{workspaceId}/inbound'> = async (ctx) => {
  const sms = await channel(ctx, 'sms');
  if (!sms) return NOT_CONFIGURED;
  if (lineFull(ctx)) return LINE_FULL;
  const form = await cpuStep(() => twilioForm(ctx, sms, callbackUrls(ctx.messaging, ctx.params.workspaceId).smsInbound));
  if (!form) return UNAUTHORIZED;
  if (form === 'unstorable') return MALFORMED;
  const from = e164(form.From, sms.default_country);
  const sid = idText(form.MessageSid);
  if (!from || form.Body === undefined || !sid) return MALFORMED;
  const ws = ctx.params.workspaceId;
  const word = form.Body.trim().toUpperCase();
  const remember = (q: Queryable) => q.query(`INSERT INTO provider_events (workspace_id, provider, event_id) VALUES ($1, 'twilio', $2) ON CONFLICT DO NOTHING`, [ws, sid]);
  // The MessageSid is remembered once the message is applied: one refused, or not applied for an
  // outage, is applied when Twilio sends it again.
  return inTurn(ctx, async (tx) => {
    const person = await tx(async (q) => {
      if ((await q.query(`SELECT 1 FROM provider_events WHERE workspace_id = $1 AND provider = 'twilio' AND event_id = $2`, [ws, sid])).rowCount > 0) return undefined;
      if (STOP.has(word)) await suppressAddress(q, ws, 'sms', from, 'opt_out', `inbound ${word}`);
      else if (START.has(word)) await q.query(`DELETE FROM address_suppressions WHERE workspace_id = $1 AND channel = 'sms' AND address = $2 AND suppression_type = 'opt_out'`, [ws, from]);
      else {
        // Any other text is the person's event (it can trigger campaigns), for whoever has that
        // number. People keep their phone as they gave it: any spelling of it matches (an index lookup).
        const found = await personByPhone(q, ws, storedForms(from));
        if (found) return found;
      }
      await remember(q);
      return undefined;
    });
    if (person) {
      // The event is durable in the Log, not in this transaction: its id is remembered once it is
      // (without the deadline: an append made is then never made again).
      const appended = await ctx.events.appendEvents([{ id: newId(), workspace_id: ws, external_id: person.external_id, type: 'sms_received', parameters: { body: form.Body, from }, created_at: new Date().toISOString() }]);
      await remember(ctx.db);
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

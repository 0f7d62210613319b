// Provider callbacks (DECISIONS §13, INTERFACE 6.2), outside /api/v1, no credential: each request
// is verified with the provider's own signature over the raw bytes before anything in it is
// read (Mailgun's signature travels inside its JSON, so that alone is parsed first). Missing or
// bad signature → 401, nothing recorded; no workspace or channel → 404; malformed → 400.
import { createHmac, createPublicKey, timingSafeEqual, verify } from 'node:crypto';
import type { Ctx, Handler, Handlers } from './context.js';
import { json, type Reply } from './reply.js';
import { isUuid, newId } from '../ids.js';
import { loadMessageChannel, personByPhone, suppressAddress, type EmailChannel, type SmsChannel } from '../store/index.js';
import { applyProviderEvents, messageIdIn, type ProviderEvent } from '../messaging/provider-events.js';
import { callbackUrls } from '../messaging/settings.js';
import { e164, storedForms } from '../sms/phone.js';
import type { AddressChannel, ProviderEventKind } from '../domain/messages.js';

const flat = (status: number, error: string): Reply => json(status, { error });
const UNAUTHORIZED = flat(401, 'Missing or bad signature');
const NOT_CONFIGURED = flat(404, 'No such workspace, or its channel is not configured');
const MALFORMED = flat(400, 'Malformed callback body');

const header = (ctx: Ctx, name: string) => ctx.headers[name.toLowerCase()]?.[0];
const sameText = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

async function channel<C extends AddressChannel>(ctx: Ctx, c: C) {
  const ws = ctx.params.workspaceId!;
  if (!isUuid(ws)) return undefined;
  const stored = await loadMessageChannel(ctx.db, ctx.messaging.secrets, ws, c);
  return stored?.readable ? stored.settings : undefined;
}

function parseJson(raw: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(raw).toString('utf8'));
  } catch {
    return undefined;
  }
}

async function applyAll(ctx: Ctx, events: ProviderEvent[]): Promise<Reply> {
  const counts = { applied: 0, duplicates: 0, unmatched: 0 };
  const fates = await ctx.db.tx((q) => applyProviderEvents(q, ctx.params.workspaceId!, events));
  for (const { fate } of fates) counts[fate === 'applied' ? 'applied' : fate === 'duplicate' ? 'duplicates' : 'unmatched']++;
  return json(200, { success: true, ...counts });
}

// ---- Email ------------------------------------------------------------------------------

function sendgridVerified(key: string, ctx: Ctx): boolean {
  const signature = header(ctx, 'X-Twilio-Email-Event-Webhook-Signature');
  const timestamp = header(ctx, 'X-Twilio-Email-Event-Webhook-Timestamp');
  if (!signature || !timestamp) return false;
  try {
    const publicKey = key.includes('-----BEGIN') ? createPublicKey(key) : createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' });
    return verify('sha256', Buffer.concat([Buffer.from(timestamp), ctx.raw!]), publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

const SENDGRID: Record<string, ProviderEventKind> = { delivered: 'delivered', deferred: 'deferred', spamreport: 'complaint', open: 'opened', click: 'clicked' };

function sendgridEvents(body: unknown): ProviderEvent[] | undefined {
  if (!Array.isArray(body)) return undefined;
  return body.flatMap((e: Record<string, unknown>): ProviderEvent[] => {
    const type = String(e.event ?? '');
    const kind: ProviderEventKind | undefined = type === 'bounce' ? (e.type === 'blocked' ? 'soft_bounce' : 'hard_bounce') : type === 'dropped' ? undefined : SENDGRID[type];
    if (!kind || typeof e.sg_event_id !== 'string') return [];
    return [{ provider: 'sendgrid', eventId: e.sg_event_id, messageId: messageIdIn(e['smtp-id']), kind, details: { ...(e.url ? { url: e.url } : {}), ...(e.reason ? { reason: e.reason } : {}) } }];
  });
}

function mailgunEvent(key: string, body: unknown): ProviderEvent | 'unauthorized' | undefined {
  const b = body as { signature?: { timestamp?: string; token?: string; signature?: string }; 'event-data'?: Record<string, unknown> } | undefined;
  const s = b?.signature;
  if (!s?.timestamp || !s.token || !s.signature) return 'unauthorized';
  if (!sameText(createHmac('sha256', key).update(s.timestamp + s.token).digest('hex'), s.signature)) return 'unauthorized';
  const d = b?.['event-data'];
  if (!d || typeof d.id !== 'string') return undefined;
  const type = String(d.event ?? '');
  const kind: ProviderEventKind | undefined =
    type === 'failed' ? (d.severity === 'permanent' ? 'hard_bounce' : 'soft_bounce') : ({ delivered: 'delivered', complained: 'complaint', opened: 'opened', clicked: 'clicked' } as Record<string, ProviderEventKind>)[type];
  const headers = (d.message as { headers?: Record<string, unknown> } | undefined)?.headers;
  return kind && { provider: 'mailgun', eventId: d.id, messageId: messageIdIn(headers?.['message-id']), kind, details: d.url ? { url: d.url } : {} };
}

function postmarkVerified(hooks: NonNullable<EmailChannel['webhooks']>, ctx: Ctx): boolean {
  const auth = header(ctx, 'Authorization') ?? '';
  if (!auth.startsWith('Basic ')) return false;
  return sameText(Buffer.from(auth.slice(6), 'base64').toString(), `${hooks.username ?? ''}:${hooks.password ?? ''}`);
}

function postmarkEvent(body: unknown): ProviderEvent | undefined {
  const b = body as Record<string, unknown> | undefined;
  if (!b || typeof b.RecordType !== 'string') return undefined;
  const kind: ProviderEventKind | undefined =
    b.RecordType === 'Bounce' ? (b.Type === 'HardBounce' ? 'hard_bounce' : 'soft_bounce') : ({ Delivery: 'delivered', SpamComplaint: 'complaint', Open: 'opened', Click: 'clicked' } as Record<string, ProviderEventKind>)[b.RecordType];
  const id = String(b.ID ?? `${b.RecordType}:${String(b.MessageID)}:${String(b.ReceivedAt ?? b.DeliveredAt ?? b.BouncedAt ?? '')}`);
  const headers = Array.isArray(b.Headers) ? (b.Headers as { Name: string; Value: string }[]) : [];
  const messageId = messageIdIn(headers.find((h) => h.Name.toLowerCase() === 'message-id')?.Value) ?? messageIdIn(b.MessageID);
  return kind && { provider: 'postmark', eventId: id, messageId, kind, details: b.OriginalLink ? { url: b.OriginalLink } : {} };
}

const email: Handler = async (ctx) => {
  const hooks = (await channel(ctx, 'email'))?.webhooks;
  if (!hooks) return NOT_CONFIGURED;
  if (hooks.provider === 'sendgrid') {
    if (!sendgridVerified(hooks.verification_key ?? '', ctx)) return UNAUTHORIZED;
    const events = sendgridEvents(parseJson(ctx.raw!));
    return events ? applyAll(ctx, events) : MALFORMED;
  }
  if (hooks.provider === 'postmark') {
    if (!postmarkVerified(hooks, ctx)) return UNAUTHORIZED;
    const body = parseJson(ctx.raw!);
    if (!body) return MALFORMED;
    const event = postmarkEvent(body);
    return applyAll(ctx, event ? [event] : []);
  }
  const body = parseJson(ctx.raw!);
  if (!body) return UNAUTHORIZED; // Mailgun's signature is in the body: none readable is none at all
  const event = mailgunEvent(hooks.signing_key ?? '', body);
  if (event === 'unauthorized') return UNAUTHORIZED;
  return applyAll(ctx, event ? [event] : []);
};

// ---- SMS (Twilio) ----------------------------------------------------------------------

/** X-Twilio-Signature: base64 HMAC-SHA1, keyed with the auth token, of the URL and each form field name + value, sorted by name. */
function twilioForm(ctx: Ctx, sms: SmsChannel, url: string): Record<string, string> | undefined {
  const signature = header(ctx, 'X-Twilio-Signature');
  if (!signature) return undefined;
  const form = [...new URLSearchParams(Buffer.from(ctx.raw!).toString('utf8'))];
  const signed = url + [...form].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => k + v).join('');
  const expected = createHmac('sha1', sms.twilio.auth_token).update(signed).digest('base64');
  return sameText(expected, signature) ? Object.fromEntries(form) : undefined;
}

const status: Handler = async (ctx) => {
  const sms = await channel(ctx, 'sms');
  if (!sms) return NOT_CONFIGURED;
  const form = twilioForm(ctx, sms, callbackUrls(ctx.messaging, ctx.params.workspaceId!).smsStatus);
  if (!form) return UNAUTHORIZED;
  const sid = form.MessageSid ?? form.SmsSid;
  const state = form.MessageStatus ?? form.SmsStatus;
  if (!sid || !state) return MALFORMED;
  const kind: ProviderEventKind | undefined = state === 'delivered' ? 'delivered' : state === 'undelivered' || state === 'failed' ? 'failed' : undefined;
  if (!kind) return applyAll(ctx, []);
  const errorCode = form.ErrorCode ? Number(form.ErrorCode) : undefined;
  return applyAll(ctx, [{ provider: 'twilio', eventId: `${sid}:${state}`, providerMessageId: sid, kind, details: { status: state, ...(errorCode ? { error_code: errorCode } : {}) }, ...(errorCode ? { errorCode } : {}) }]);
};

const STOP = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const START = new Set(['START', 'UNSTOP', 'YES']);
const TWIML: Reply = { status: 200, body: '<?xml version="1.0" encoding="UTF-8"?><Response/>', headers: { 'Content-Type': 'text/xml' } };

const inbound: Handler = async (ctx) => {
  const sms = await channel(ctx, 'sms');
  if (!sms) return NOT_CONFIGURED;
  const form = twilioForm(ctx, sms, callbackUrls(ctx.messaging, ctx.params.workspaceId!).smsInbound);
  if (!form) return UNAUTHORIZED;
  const from = e164(form.From, sms.default_country);
  if (!from || form.Body === undefined || !form.MessageSid) return MALFORMED;
  const ws = ctx.params.workspaceId!;
  const word = form.Body.trim().toUpperCase();
  const person = await ctx.db.tx(async (q) => {
    const first = await q.query(`INSERT INTO provider_events (workspace_id, provider, event_id) VALUES ($1, 'twilio', $2) ON CONFLICT DO NOTHING`, [ws, form.MessageSid]);
    if (first.rowCount === 0) return undefined;
    if (STOP.has(word)) return void (await suppressAddress(q, ws, 'sms', from, 'opt_out', `inbound ${word}`));
    if (START.has(word)) return void (await q.query(`DELETE FROM address_suppressions WHERE workspace_id = $1 AND channel = 'sms' AND address = $2 AND suppression_type = 'opt_out'`, [ws, from]));
    // People keep their phone as they gave it: any spelling of the number matches (an index lookup).
    return personByPhone(q, ws, storedForms(from));
  });
  // Any other text is the person's event (it can trigger campaigns), for whoever has that number.
  if (person) {
    const appended = await ctx.events.appendEvents([{ id: newId(), workspace_id: ws, external_id: person.external_id, type: 'sms_received', parameters: { body: form.Body, from }, created_at: new Date().toISOString() }]);
    await ctx.eventTriggers.fire(ws, appended.map((a) => a.record));
  }
  return TWIML;
};

export const providerCallbackHandlers = {
  'POST /webhooks/email/{workspaceId}': email,
  'POST /webhooks/sms/{workspaceId}/status': status,
  'POST /webhooks/sms/{workspaceId}/inbound': inbound,
} satisfies Handlers;

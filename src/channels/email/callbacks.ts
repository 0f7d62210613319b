// The email providers' callbacks (docs/channels.md, Callbacks), each provider's signature check
// and event parsing side by side: SendGrid (ECDSA over timestamp + raw body), Mailgun (HMAC of
// its timestamp and token, inside the JSON; the token is spent once by the caller), Postmark
// (basic auth). The events go to the callback applier (channels/callbacks.ts).
import { createHmac, createPublicKey, createVerify, type KeyObject } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { EmailChannel } from './settings.js';
import type { ProviderEventKind } from '../../domain/messages.js';
import { cpuStep } from '../../util/cpu-steps.js';
import { messageIdIn, type ProviderEvent } from '../callbacks.js';
import { detail, freshTimestamp, idText, isObject, parseJson, sameText, type CallbackRequest } from '../callback-text.js';

type Hooks = NonNullable<EmailChannel['webhooks']>;

/** A verified callback: for Mailgun, its parsed body and the token to spend once. */
interface Verified {
  parsed?: ReturnType<typeof parseJson>;
  token?: { token: string; timestamp: number };
}

export interface EmailCallbackProvider {
  /** Whether the request is signed with the workspace's settings (and fresh); undefined: 401. */
  verify(hooks: Hooks, req: CallbackRequest): Promise<Verified | undefined>;
  /** The events Herald applies (others left out); undefined: malformed (400). */
  parse(req: CallbackRequest, verified: Verified): ProviderEvent[] | undefined;
}

/** The workspaces' SendGrid verification keys, parsed (a key is parsed once, not per callback). */
const sendgridKeys = new LRUCache<string, KeyObject>({ max: 1_000 });

/** Bytes of a body hashed in one step: a megabyte's hashing is many short steps, not one long one. */
const HASHED_PER_STEP = 64 * 1024;

const SENDGRID: Record<string, ProviderEventKind> = { delivered: 'delivered', deferred: 'deferred', spamreport: 'complaint', open: 'opened', click: 'clicked' };

const sendgrid: EmailCallbackProvider = {
  async verify(hooks, req) {
    const key = hooks.verification_key ?? '';
    const signature = req.header('X-Twilio-Email-Event-Webhook-Signature');
    const timestamp = req.header('X-Twilio-Email-Event-Webhook-Timestamp');
    if (!signature || timestamp === undefined || freshTimestamp(timestamp) === undefined) return undefined;
    try {
      let publicKey = sendgridKeys.get(key);
      if (!publicKey) sendgridKeys.set(key, (publicKey = key.includes('-----BEGIN') ? createPublicKey(key) : createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' })));
      const verifier = createVerify('sha256').update(timestamp);
      const raw = req.raw;
      for (let at = 0; at < raw.length; at += HASHED_PER_STEP) await cpuStep(() => verifier.update(raw.subarray(at, at + HASHED_PER_STEP)));
      return verifier.verify(publicKey, signature, 'base64') ? {} : undefined;
    } catch {
      return undefined;
    }
  },
  /** The batch's events Herald applies (others, e.g. `processed`, are left out); undefined when it is not a batch of event objects. */
  parse(req) {
    const parsed = parseJson(req.raw);
    const body = parsed?.storable ? parsed.body : undefined;
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
  },
};

const mailgun: EmailCallbackProvider = {
  /** Mailgun's signature is in the body: none readable is none at all. */
  async verify(hooks, req) {
    const parsed = await cpuStep(() => parseJson(req.raw));
    const body = parsed?.body;
    const s = isObject(body) && isObject(body.signature) ? body.signature : undefined;
    const timestamp = freshTimestamp(s?.timestamp);
    const token = idText(s?.token);
    if (!s || timestamp === undefined || !token || typeof s.signature !== 'string') return undefined;
    const expected = createHmac('sha256', hooks.signing_key ?? '').update(String(s.timestamp) + token).digest('hex');
    // The token is spent whatever the event: the signature does not cover it.
    return sameText(expected, s.signature) ? { parsed, token: { token, timestamp } } : undefined;
  },
  parse(_req, { parsed }) {
    if (!parsed?.storable || !isObject(parsed.body)) return undefined;
    const d = parsed.body['event-data'];
    if (!isObject(d)) return undefined;
    const type = String(d.event ?? '');
    const kind: ProviderEventKind | undefined =
      type === 'failed' ? (d.severity === 'permanent' ? 'hard_bounce' : 'soft_bounce') : ({ delivered: 'delivered', complained: 'complaint', opened: 'opened', clicked: 'clicked' } as Record<string, ProviderEventKind>)[type];
    if (!kind) return [];
    const eventId = idText(d.id);
    if (!eventId) return undefined;
    const headers = isObject(d.message) && isObject(d.message.headers) ? d.message.headers : undefined;
    const url = detail(d.url);
    return [{ provider: 'mailgun', eventId, messageId: messageIdIn(headers?.['message-id']), kind, details: url ? { url } : {} }];
  },
};

const postmark: EmailCallbackProvider = {
  async verify(hooks, req) {
    const auth = req.header('Authorization') ?? '';
    if (!auth.startsWith('Basic ')) return undefined;
    return sameText(Buffer.from(auth.slice(6), 'base64').toString(), `${hooks.username ?? ''}:${hooks.password ?? ''}`) ? {} : undefined;
  },
  parse(req) {
    const parsed = parseJson(req.raw);
    const b = parsed?.storable ? parsed.body : undefined;
    if (!isObject(b) || typeof b.RecordType !== 'string') return undefined;
    const kind: ProviderEventKind | undefined =
      b.RecordType === 'Bounce' ? (b.Type === 'HardBounce' ? 'hard_bounce' : 'soft_bounce') : ({ Delivery: 'delivered', SpamComplaint: 'complaint', Open: 'opened', Click: 'clicked' } as Record<string, ProviderEventKind>)[b.RecordType];
    if (!kind) return [];
    if (b.Headers !== undefined && !(Array.isArray(b.Headers) && b.Headers.every((h) => isObject(h) && typeof h.Name === 'string'))) return undefined;
    const eventId = idText(String(b.ID ?? `${b.RecordType}:${String(b.MessageID)}:${String(b.ReceivedAt ?? b.DeliveredAt ?? b.BouncedAt ?? '')}`));
    if (!eventId) return undefined;
    const headers = (b.Headers ?? []) as { Name: string; Value?: unknown }[];
    const messageId = messageIdIn(headers.find((h) => h.Name.toLowerCase() === 'message-id')?.Value) ?? messageIdIn(b.MessageID);
    const url = detail(b.OriginalLink);
    return [{ provider: 'postmark', eventId, messageId, kind, details: url ? { url } : {} }];
  },
};

export const EMAIL_CALLBACKS: Readonly<Record<Hooks['provider'], EmailCallbackProvider>> = { sendgrid, mailgun, postmark };

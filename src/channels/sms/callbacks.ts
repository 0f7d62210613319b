// Twilio's callbacks (docs/channels.md, Callbacks): X-Twilio-Signature checked over the URL and
// the form, then the status callback's event (for the callback applier, channels/callbacks.ts)
// or the inbound message (STOP and START words, else the person's `sms_received` event).
import { createHmac } from 'node:crypto';
import type { SmsChannel } from '../../store/message-channels.js';
import type { ProviderEventKind } from '../../domain/messages.js';
import { isUnstorable } from '../../domain/storable-text.js';
import type { ProviderEvent } from '../callbacks.js';
import { idText, sameText, type CallbackRequest } from '../callback-text.js';
import { e164 } from './phone.js';

/**
 * X-Twilio-Signature: base64 HMAC-SHA1, keyed with the auth token, of the URL and each form field
 * name + value, sorted by name. The form, verified (undefined: 401); 'unstorable' when a name or
 * value holds text the store cannot keep.
 */
export function twilioForm(req: CallbackRequest, sms: SmsChannel, url: string): Record<string, string> | 'unstorable' | undefined {
  const signature = req.header('X-Twilio-Signature');
  if (!signature) return undefined;
  const form = [...new URLSearchParams(Buffer.from(req.raw).toString('utf8'))];
  const signed = url + [...form].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => k + v).join('');
  const expected = createHmac('sha1', sms.twilio.auth_token).update(signed).digest('base64');
  if (!sameText(expected, signature)) return undefined;
  return form.some(([k, v]) => isUnstorable(k) || isUnstorable(v)) ? 'unstorable' : Object.fromEntries(form);
}

/** A status callback's event: none for a state Herald does not apply (`sent`, `queued`…); undefined: malformed. */
export function statusEvents(form: Record<string, string>): ProviderEvent[] | undefined {
  const sid = idText(form.MessageSid ?? form.SmsSid);
  const state = form.MessageStatus ?? form.SmsStatus;
  if (!sid || !state || state.length > 64) return undefined;
  const kind: ProviderEventKind | undefined = state === 'delivered' ? 'delivered' : state === 'undelivered' || state === 'failed' ? 'failed' : undefined;
  if (!kind) return [];
  const errorCode = form.ErrorCode ? Number(form.ErrorCode) : undefined;
  return [{ provider: 'twilio', eventId: `${sid}:${state}`, providerMessageId: sid, kind, details: { status: state, ...(errorCode ? { error_code: errorCode } : {}) }, ...(errorCode ? { errorCode } : {}) }];
}

const STOP = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const START = new Set(['START', 'UNSTOP', 'YES']);

/** An inbound message: the sender in E.164, its id, its text, and what its word does (`stop`, `start`, or nothing: a message); undefined: malformed. */
export function inboundMessage(form: Record<string, string>, sms: SmsChannel): { from: string; sid: string; body: string; word: string; does?: 'stop' | 'start' } | undefined {
  const from = e164(form.From, sms.default_country);
  const sid = idText(form.MessageSid);
  if (!from || form.Body === undefined || !sid) return undefined;
  const word = form.Body.trim().toUpperCase();
  const does = STOP.has(word) ? 'stop' : START.has(word) ? 'start' : undefined;
  return { from, sid, body: form.Body, word, ...(does ? { does } : {}) };
}

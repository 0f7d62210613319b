// Twilio's callbacks (docs/channels.md, Callbacks): X-Twilio-Signature checked over the URL and
// the form, then the status callback's event (for the callback applier, channels/callbacks.ts)
// or the inbound message (STOP and START words, else the person's `sms_received` event).
import { createHmac } from 'node:crypto';
import type { Queryable } from '../../store/db.js';
import type { SmsChannel } from './settings.js';
import { liftAddressSuppression, suppressAddress } from '../../store/address-suppressions.js';
import { personByPhone } from '../../store/people.js';
import { providerEventSeen, rememberProviderEvent } from '../../store/provider-events.js';
import type { ProviderEventKind } from '../../domain/messages.js';
import { isUnstorable } from '../../domain/storable-text.js';
import type { ProviderEvent } from '../callbacks.js';
import { idText, sameText, type CallbackRequest } from '../callback-text.js';
import { e164, storedForms } from './phone.js';

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

export interface Inbound {
  /** The sender, in E.164. */
  from: string;
  sid: string;
  body: string;
}

/** An inbound message; undefined: malformed. */
export function inboundMessage(form: Record<string, string>, sms: SmsChannel): Inbound | undefined {
  const from = e164(form.From, sms.default_country);
  const sid = idText(form.MessageSid);
  if (!from || form.Body === undefined || !sid) return undefined;
  return { from, sid, body: form.Body };
}

/**
 * Applies an inbound message once, in the caller's transaction: STOP… suppresses the number
 * (`opt_out`), START… lifts that, any other text answers the person whose phone it is (whose
 * `sms_received` event the caller appends, then remembers the message: rememberInbound). The
 * message is remembered here otherwise; one seen before does nothing.
 */
export async function applyInbound(q: Queryable, workspaceId: string, m: Inbound): Promise<{ external_id: string } | undefined> {
  if (await providerEventSeen(q, workspaceId, 'twilio', m.sid)) return undefined;
  const word = m.body.trim().toUpperCase();
  if (STOP.has(word)) await suppressAddress(q, workspaceId, 'sms', m.from, 'opt_out', `inbound ${word}`);
  else if (START.has(word)) await liftAddressSuppression(q, workspaceId, 'sms', m.from, 'opt_out');
  else {
    // People keep their phone as they gave it: any spelling of it matches (an index lookup).
    const found = await personByPhone(q, workspaceId, storedForms(m.from));
    if (found) return found;
  }
  await rememberInbound(q, workspaceId, m);
  return undefined;
}

export const rememberInbound = (q: Queryable, workspaceId: string, m: Inbound) => rememberProviderEvent(q, workspaceId, 'twilio', m.sid);

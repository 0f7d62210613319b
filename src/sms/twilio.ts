// Twilio's Messages API (DECISIONS §13): `POST {endpoint}/2010-04-01/Accounts/{sid}/Messages.json`,
// form-encoded, basic auth with the account sid and auth token, `StatusCallback` set so status
// callbacks come back. HERALD_TWILIO_ENDPOINT replaces the host for tests and private gateways.
import type { SmsChannel } from '../store/message-channels.js';

/** What a send came to. `suppress`: the number is dead (21211, 21614) or opted out (21610). */
export type TwilioOutcome =
  | { status: 'sent'; sid: string }
  | { status: 'failed'; error: string; code?: number; retryable: boolean; retryAfterMs?: number; suppress?: 'invalid_address' | 'opt_out' };

const SUPPRESS: Record<number, 'invalid_address' | 'opt_out'> = { 21211: 'invalid_address', 21614: 'invalid_address', 21610: 'opt_out' };

/** Twilio's error answer `{code, message, status}` classified; 429 and 5xx are retryable (after Retry-After seconds when given). */
export function classifyTwilio(status: number, body: { code?: number; message?: string } | undefined, retryAfter: string | null): TwilioOutcome {
  const code = body?.code;
  const error = `twilio ${status}${code ? ` ${code}` : ''}: ${body?.message ?? 'no message'}`;
  const suppress = code === undefined ? undefined : SUPPRESS[code];
  const after = retryAfter !== null && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : undefined;
  return { status: 'failed', error, ...(code !== undefined ? { code } : {}), retryable: status === 429 || status >= 500, ...(after !== undefined ? { retryAfterMs: after } : {}), ...(suppress ? { suppress } : {}) };
}

export async function sendTwilio(endpoint: string, channel: SmsChannel, to: string, body: string, statusCallback: string): Promise<TwilioOutcome> {
  const { account_sid: sid, auth_token: token, from, messaging_service_sid: service } = channel.twilio;
  const form = new URLSearchParams({ To: to, Body: body, StatusCallback: statusCallback, ...(service ? { MessagingServiceSid: service } : { From: from! }) });
  try {
    const r = await fetch(`${endpoint}/2010-04-01/Accounts/${encodeURIComponent(sid)}/Messages.json`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${sid}:${token}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      signal: AbortSignal.timeout(30_000),
    });
    const answer = (await r.json().catch(() => undefined)) as { sid?: string; code?: number; message?: string } | undefined;
    if (r.ok && answer?.sid) return { status: 'sent', sid: answer.sid };
    return classifyTwilio(r.status, answer, r.headers.get('retry-after'));
  } catch (err) {
    return { status: 'failed', error: `twilio: ${(err as Error).message}`, retryable: true };
  }
}

// Twilio's Messages API (docs/channels.md): `POST {endpoint}/2010-04-01/Accounts/{sid}/Messages.json`,
// form-encoded, basic auth with the account sid and auth token, `StatusCallback` set so status
// callbacks come back. HERALD_TWILIO_ENDPOINT replaces the host for tests and private gateways.
import http from 'node:http';
import https from 'node:https';
import type { SmsChannel } from './settings.js';

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

/** No answer for this long fails the send (retryable). */
const TIMEOUT_MS = 30_000;

/**
 * Kept-alive connections to the endpoint, per thread. node:http rather than fetch: a fan-out's
 * sends are CPU-bound on the actor thread, and fetch's streams, Request/Response objects and
 * abort signals were a sixth of that thread's time and much of its garbage (profile of
 * sms-fanout, issue 25).
 */
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

interface Answer {
  status: number;
  retryAfter: string | null;
  text: string;
}

function post(url: URL, headers: Record<string, string>, body: string): Promise<Answer> {
  const tls = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (tls ? https : http).request(url, { method: 'POST', agent: tls ? agents.https : agents.http, headers: { ...headers, 'content-length': Buffer.byteLength(body) }, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const after = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, retryAfter: typeof after === 'string' ? after : null, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}

export async function sendTwilio(endpoint: string, channel: SmsChannel, to: string, body: string, statusCallback: string): Promise<TwilioOutcome> {
  const { account_sid: sid, auth_token: token, from, messaging_service_sid: service } = channel.twilio;
  const form = new URLSearchParams({ To: to, Body: body, StatusCallback: statusCallback, ...(service ? { MessagingServiceSid: service } : { From: from! }) });
  try {
    const r = await post(
      new URL(`${endpoint}/2010-04-01/Accounts/${encodeURIComponent(sid)}/Messages.json`),
      { authorization: `Basic ${Buffer.from(`${sid}:${token}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      form.toString(),
    );
    let answer: { sid?: string; code?: number; message?: string } | undefined;
    try {
      answer = JSON.parse(r.text) as typeof answer;
    } catch {
      answer = undefined;
    }
    if (r.status >= 200 && r.status < 300 && answer?.sid) return { status: 'sent', sid: answer.sid };
    return classifyTwilio(r.status, answer, r.retryAfter);
  } catch (err) {
    return { status: 'failed', error: `twilio: ${(err as Error).message}`, retryable: true };
  }
}

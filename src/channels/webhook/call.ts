// One call of a webhook node (docs/channels.md, "The webhook channel"): signed with the
// workspace's node secret (Standard Webhooks headers, the same webhook-id on each retry), sent
// through the bounded request (the destination rule at connect time, a 15 s deadline, what is
// read back capped), and its answer classified into the outcome every channel shares: a 2xx is
// `sent`; 408, 429, 5xx and no answer may pass and are retried (channels/retry.ts); any other
// status, a refused destination or an answer too large is final.
import { boundedRequest, OutboundFailure } from '../../net/bounded-request.js';
import type { OutboundPolicy } from '../../net/destinations.js';
import { parseRetryAfter } from '../../domain/push-outcome.js';
import { webhookHeaders } from '../../domain/standard-webhooks.js';
import type { SendAnswer } from '../channel.js';

/** The whole exchange of one attempt: connect, TLS, answer. */
const CALL_DEADLINE_MS = 15_000;
/** What is read of an answer at most (past it the attempt fails), and what the record keeps of it. */
const MAX_ANSWER_BYTES = 64 * 1024;
const KEPT_ANSWER_BYTES = 1024;

const FAILURE_TEXT: Readonly<Record<OutboundFailure['kind'], string>> = {
  unreachable: 'unreachable: the connection failed',
  timed_out: 'timed out: no complete answer within 15 s',
  too_large: 'answer too large (over 64 kB)',
  refused: 'refused: the URL resolves to a private or loopback address (HERALD_ALLOWED_PRIVATE_HOSTS)',
};

export interface Call {
  url: URL;
  method: string;
  headers: Readonly<Record<string, string>>;
  body: string;
  /** The webhook-id: the message's, the same on every attempt. */
  id: string;
  secret: string;
  outbound: OutboundPolicy;
}

/** An attempt's answer as the record keeps it: the status code and the first 1 kB of the answer. */
interface Answered {
  statusCode: number | null;
  answer: string;
}

export type CallAnswer = SendAnswer & Answered;

const kept = (body: Buffer) => body.subarray(0, KEPT_ANSWER_BYTES).toString('utf8');

/** One attempt. */
export async function callWebhook(c: Call): Promise<CallAnswer> {
  const signed = webhookHeaders([c.secret], c.id, Math.floor(Date.now() / 1000), c.body);
  try {
    const res = await boundedRequest(c.url, {
      method: c.method,
      headers: { ...c.headers, 'content-type': 'application/json', 'user-agent': 'Herald-Webhooks', ...signed },
      body: c.body,
      outbound: c.outbound,
      maxBytes: MAX_ANSWER_BYTES,
      deadlineMs: CALL_DEADLINE_MS,
    });
    const answer = kept(res.body);
    if (res.status >= 200 && res.status < 300) return { status: 'sent', providerId: String(res.status), statusCode: res.status, answer };
    const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
    const retryAfterMs = retryable ? parseRetryAfter(res.headers['retry-after'], Date.now()) : undefined;
    const error = `HTTP ${res.status}${answer ? `: ${answer}` : ''}`;
    return { status: 'failed', error, retryable, ...(retryAfterMs === undefined ? {} : { retryAfterMs }), statusCode: res.status, answer };
  } catch (err) {
    // A header the sender wrote that HTTP does not allow, say: nothing was sent.
    if (!(err instanceof OutboundFailure)) return { status: 'failed', error: `the request could not be made: ${(err as Error).message}`, statusCode: null, answer: '' };
    return { status: 'failed', error: FAILURE_TEXT[err.kind], retryable: err.kind === 'unreachable' || err.kind === 'timed_out', statusCode: null, answer: '' };
  }
}

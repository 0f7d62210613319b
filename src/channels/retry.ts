// The one retry rule of every channel's providers (docs/channels.md): the items of a provider call
// whose answer is retryable (FCM/APNs 429 and 5xx, SMTP 4xx, Twilio 429 and 5xx, no answer) are
// sent again, alone with the others still retryable, after the provider's Retry-After (capped) or
// a jittered exponential back-off, up to the policy's attempts and within its time budget (no
// retry would start past it), and never past `deadline` (a test send answers within its
// request's time). The last answer of each item is the caller's.
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_RETRY_POLICY, retryDelayMs, type RetryPolicy } from '../domain/push-outcome.js';

export interface RetryOptions {
  policy?: RetryPolicy;
  /** For tests: [0, 1). */
  random?: () => number;
  /** For tests: how a wait is made. */
  wait?: (ms: number) => Promise<unknown>;
  /** For tests: the clock the budget is measured with. */
  now?: () => number;
  /** No wait goes past it: the answers so far are the last. */
  deadline?: AbortSignal;
}

/** Whether an answer is sent again: undefined when it is final, else the wait the provider asked for (if it did). */
export type Retryable<O> = (answer: O) => { retryAfterMs?: number } | undefined;

/** Sends `items` (one call for all), then the retryable ones again; one answer per item, in order. */
export async function withRetries<I, O>(items: readonly I[], send: (items: readonly I[]) => Promise<O[]>, retryable: Retryable<O>, opts: RetryOptions = {}): Promise<O[]> {
  const policy = opts.policy ?? DEFAULT_RETRY_POLICY;
  const random = opts.random ?? Math.random;
  const wait = opts.wait ?? ((ms: number) => sleep(ms, undefined, { signal: opts.deadline }));
  const now = opts.now ?? Date.now;
  const started = now();
  const answers = await send(items);
  for (let attempt = 1; attempt < policy.maxAttempts; attempt++) {
    const again = answers.flatMap((a, i) => {
      const r = retryable(a);
      return r ? [{ i, after: r.retryAfterMs }] : [];
    });
    if (again.length === 0) break;
    // One wait for the round: the longest any of them was asked for.
    const delay = Math.max(...again.map((x) => retryDelayMs(attempt, x.after, policy, random())));
    if (now() + delay - started > policy.maxElapsedMs) break;
    try {
      await wait(delay);
    } catch {
      break; // the deadline passed while waiting
    }
    const retried = await send(again.map((x) => items[x.i]!));
    again.forEach((x, k) => (answers[x.i] = retried[k]!));
  }
  return answers;
}

/** The retry rule of one email or SMS send (a failure the provider says may pass). */
export function sendRetried<O extends { status: string; retryable?: boolean; retryAfterMs?: number }>(send: () => Promise<O>, deadline?: AbortSignal): Promise<O> {
  const retryable: Retryable<O> = (o) => (o.status === 'failed' && o.retryable ? { retryAfterMs: o.retryAfterMs } : undefined);
  return withRetries([null], async () => [await send()], retryable, { deadline }).then((a) => a[0]!);
}

// One email or SMS send with bounded retries (answers classified like push: docs/channels.md): a
// retryable outcome (SMTP 4xx, Twilio 429 or 5xx, a network error) is sent again after the
// provider's Retry-After (capped) or a jittered exponential back-off, within the push retry
// policy's attempts and time budget (domain/push-outcome.ts), and never past `deadline` (a test
// send answers within its request's time). The last outcome is the answer.
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_RETRY_POLICY, retryDelayMs } from '../domain/push-outcome.js';

type Outcome = { status: string; retryable?: boolean; retryAfterMs?: number };

export async function withRetries<O extends Outcome>(send: () => Promise<O>, policy = DEFAULT_RETRY_POLICY, deadline?: AbortSignal): Promise<O> {
  const started = Date.now();
  let outcome = await send();
  for (let attempt = 1; attempt < policy.maxAttempts && outcome.status === 'failed' && outcome.retryable; attempt++) {
    const delay = retryDelayMs(attempt, outcome.retryAfterMs, policy, Math.random());
    if (Date.now() + delay - started > policy.maxElapsedMs) break;
    try {
      await sleep(delay, undefined, { signal: deadline });
    } catch {
      break; // the deadline passed while waiting
    }
    outcome = await send();
  }
  return outcome;
}

// Bounded retries for `retryable` outcomes, in one place for every provider: a device whose
// outcome is retryable is sent again (alone with the others still retryable) after the
// provider's Retry-After (capped) or a jittered exponential back-off, up to the policy's attempts
// and within its time budget (no retry would start past it). The last outcome of each device is
// what the caller gets.
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_RETRY_POLICY, retryDelayMs, type PushOutcome, type RetryPolicy } from '../domain/push-outcome.js';
import type { PushDevice, PushMessage, PushProvider } from './push/types.js';
import { timedProviderCall } from '../metrics/index.js';

export interface RetryOptions {
  policy?: RetryPolicy;
  /** For tests: [0, 1). */
  random?: () => number;
  /** For tests: how a wait is made. */
  wait?: (ms: number) => Promise<unknown>;
  /** For tests: the clock the budget is measured with. */
  now?: () => number;
}

export async function sendWithRetries(
  provider: PushProvider,
  message: PushMessage,
  devices: readonly PushDevice[],
  opts: RetryOptions = {},
): Promise<PushOutcome[]> {
  const policy = opts.policy ?? DEFAULT_RETRY_POLICY;
  const random = opts.random ?? Math.random;
  const wait = opts.wait ?? ((ms: number) => sleep(ms));
  const now = opts.now ?? Date.now;
  const started = now();
  const outcomes = await timedProviderCall(provider.name, () => provider.send(message, devices));
  for (let attempt = 1; attempt < policy.maxAttempts; attempt++) {
    const again = outcomes.flatMap((o, i) => (o.kind === 'retryable' ? [i] : []));
    if (again.length === 0) break;
    // One wait for the round: the longest any of them was asked for.
    const delay = Math.max(...again.map((i) => retryDelayMs(attempt, (outcomes[i] as { retryAfterMs?: number }).retryAfterMs, policy, random())));
    if (now() + delay - started > policy.maxElapsedMs) break;
    await wait(delay);
    const retried = await timedProviderCall(provider.name, () => provider.send(message, again.map((i) => devices[i]!)));
    again.forEach((i, k) => (outcomes[i] = retried[k]!));
  }
  return outcomes;
}

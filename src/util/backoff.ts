// The one rule for trying Herald's own parts again (the store, NATS KV, the Log's sinks): waits
// that double from `firstMs` up to `maxMs`, a bounded number of tries, and a stop that ends a
// wait at once. A provider's Retry-After is a different rule (channels/retry.ts, domain/push-outcome.ts).
import { setTimeout as sleep } from 'node:timers/promises';

export interface Backoff {
  firstMs: number;
  maxMs: number;
}

/** The waits of `b`: firstMs, twice that, and so on, at most maxMs; endless. */
export function* backoffDelays(b: Backoff): Generator<number, never> {
  for (let ms = b.firstMs; ; ms = Math.min(ms * 2, b.maxMs)) yield ms;
}

export interface RetryOptions {
  /** Tries at most this often, then throws the last failure (default: until one succeeds). */
  attempts?: number;
  /** The waits between tries; without it, the next try at once (a lost race, not an outage). */
  backoff?: Backoff;
  /** Whether a failure is worth another try (default: every one); any other is thrown at once. */
  retryable?: (err: unknown) => boolean;
  /** Told of each failure that will be tried again, before its wait. */
  onRetry?: (err: unknown, waitMs: number) => void;
  /** Aborting ends a wait at once and starts no further try: the call rejects with the abort reason. */
  signal?: AbortSignal;
}

/** Runs `op` (given its try, from 1) until it resolves, as `opts` says. */
export async function retry<T>(op: (attempt: number) => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const delays = opts.backoff && backoffDelays(opts.backoff);
  for (let attempt = 1; ; attempt++) {
    opts.signal?.throwIfAborted();
    try {
      return await op(attempt);
    } catch (err) {
      if (attempt >= (opts.attempts ?? Infinity) || (opts.retryable && !opts.retryable(err))) throw err;
      const waitMs = delays?.next().value ?? 0;
      opts.onRetry?.(err, waitMs);
      if (waitMs > 0) await sleep(waitMs, undefined, { signal: opts.signal });
    }
  }
}

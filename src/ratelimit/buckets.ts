// Token buckets: capacity = burst, refilled at perMinute/60 tokens a second, one token a
// request. Each bucket has a single owner (the front for IP and user scopes, the owning
// actor for workspace scopes), so no locking is needed.
import { LRUCache } from 'lru-cache';
import type { Limits, Scope } from './limits.js';

export interface Refusal {
  scope: Scope;
  limit: number;
  retryAfter: number;
  resetAt: number;
}

const MAX_RETRY_AFTER = 3600;

interface Bucket {
  tokens: number;
  at: number;
}

export class Buckets {
  // Bounded: an evicted bucket is one idle long enough to have refilled anyway, or the
  // least recent of very many callers.
  private readonly buckets: LRUCache<string, Bucket>;

  constructor(private readonly limits: Limits, max = 100_000) {
    this.buckets = new LRUCache({ max });
  }

  /** Takes one token from `scope` for `subject`; returns the refusal when the bucket is empty. */
  take(scope: Scope, subject: string, now = Date.now()): Refusal | null {
    const { perMinute, burst } = this.limits[scope];
    const key = scope + '\0' + subject;
    const perMs = perMinute / 60_000;
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: burst, at: now };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(burst, b.tokens + (now - b.at) * perMs);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return null;
    }
    const waitMs = perMs > 0 ? (1 - b.tokens) / perMs : MAX_RETRY_AFTER * 1000;
    const retryAfter = Math.min(MAX_RETRY_AFTER, Math.max(1, Math.ceil(waitMs / 1000)));
    return { scope, limit: perMinute, retryAfter, resetAt: Math.ceil((now + retryAfter * 1000) / 1000) };
  }
}

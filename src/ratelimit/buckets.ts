// Token buckets: capacity = burst, refilled at perMinute/60 tokens a second, one token a
// request. Each bucket has a single owner (the front for IP and user scopes, the owning
// actor for workspace scopes), so no locking is needed. With NATS, a request the local
// bucket lets through must also find a token in the cross-replica bucket (shared.ts).
import { LRUCache } from 'lru-cache';
import type { Limits } from './limits.js';
import type { Scope } from '../domain/rate-limit-scopes.js';
import { refill, type SharedBuckets } from './shared.js';
import { countRefusal } from '../metrics/index.js';

export interface Refusal {
  scope: Scope;
  /** `local`: this replica's bucket; `shared`: the cross-replica bucket in NATS KV. */
  gate: 'local' | 'shared';
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

  constructor(private readonly limits: Limits, private readonly shared: SharedBuckets | null = null, max = 100_000) {
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
      b.tokens = refill(b, burst, perMs, now);
      b.at = now;
    }
    if (b.tokens < 1) return refusal(scope, 'local', perMinute, perMs, b.tokens, now);
    const sharedLeft = this.shared?.take(scope, subject, now) ?? null;
    if (sharedLeft !== null) return refusal(scope, 'shared', perMinute, perMs, sharedLeft, now);
    b.tokens -= 1;
    return null;
  }

  /** Gives back the token a `take` just took, for work it turned out not to cost. */
  refund(scope: Scope, subject: string): void {
    const b = this.buckets.get(scope + '\0' + subject);
    if (b) b.tokens = Math.min(this.limits[scope].burst, b.tokens + 1);
    this.shared?.refund(scope, subject);
  }
}

function refusal(scope: Scope, gate: Refusal['gate'], perMinute: number, perMs: number, tokens: number, now: number): Refusal {
  countRefusal(scope, gate);
  const waitMs = perMs > 0 ? (1 - tokens) / perMs : MAX_RETRY_AFTER * 1000;
  const retryAfter = Math.min(MAX_RETRY_AFTER, Math.max(1, Math.ceil(waitMs / 1000)));
  return { scope, gate, limit: perMinute, retryAfter, resetAt: Math.ceil((now + retryAfter * 1000) / 1000) };
}

// Cross-replica token buckets in NATS KV (`gate: shared`), used with NATS_URL. A request never
// waits on NATS: each thread counts what its local buckets let through and, every flush
// interval, adds that to the bucket's state in KV with compare-and-set, reading back the total
// all replicas left. A request is refused when that total (refilled to now, less what this
// thread let through since) has no token. The bound is therefore exact up to one flush
// interval of traffic per thread; if NATS is away the counts wait and the local buckets
// alone apply, so ingestion never fails because of rate limiting.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Limits } from './limits.js';
import type { Scope } from '../domain/rate-limit-scopes.js';
import { retry } from '../util/backoff.js';
import { logger } from '../logger.js';

interface State {
  tokens: number;
  at: number;
}

/** Requests let through since the last flush, for one bucket. */
interface Pending {
  scope: Scope;
  subject: string;
  count: number;
}

const FLUSH_MS = 100;
const CAS_ATTEMPTS = 5;
/** Keys of buckets idle this long expire: they have refilled anyway. */
const BUCKET_TTL_MS = 10 * 60_000;

function rateLimitBucketName(prefix: string): string {
  return `${prefix}-ratelimits`;
}

/** KV keys allow only [-_=./A-Za-z0-9]; subjects (IPs, user ids) are hashed into that. */
const kvKey = (scope: Scope, subject: string) => `${scope}.${createHash('sha256').update(subject).digest('base64url').slice(0, 24)}`;

export function refill(s: State, burst: number, perMs: number, now: number): number {
  return Math.min(burst, s.tokens + Math.max(0, now - s.at) * perMs);
}

export class SharedBuckets {
  // Keyed by scope and subject as given; the KV key (a hash) is made only when flushing.
  /** The last state read back from KV. */
  private readonly known: LRUCache<string, State>;
  private pending = new Map<string, Pending>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  private constructor(private readonly limits: Limits, private readonly kv: KV, max: number) {
    this.known = new LRUCache({ max });
    this.timer = setInterval(() => void (this.flushing = this.flushing.then(() => this.flush())), FLUSH_MS);
    this.timer.unref();
  }

  static async open(nc: NatsConnection, prefix: string, limits: Limits, max = 100_000): Promise<SharedBuckets> {
    const kv = await new Kvm(nc).create(rateLimitBucketName(prefix), { history: 1, ttl: BUCKET_TTL_MS });
    return new SharedBuckets(limits, kv, max);
  }

  /**
   * Takes a token for a request the local bucket let through: returns null when the replicas
   * together have one left (or the bucket is not known yet), else the tokens they have. KV
   * sees a flush interval's requests at once, so its refill is capped at coarser steps than a
   * local bucket's; the grace of two intervals' refill keeps a lone replica's shared bucket
   * from refusing before its own local one does.
   */
  take(scope: Scope, subject: string, now: number): number | null {
    const key = scope + '\0' + subject;
    const p = this.pending.get(key);
    const s = this.known.get(key);
    if (s) {
      const { perMinute, burst } = this.limits[scope];
      const perMs = perMinute / 60_000;
      const left = refill(s, burst, perMs, now) - (p?.count ?? 0) + 2 * FLUSH_MS * perMs;
      if (left < 1) return left;
    }
    if (p) p.count++;
    else this.pending.set(key, { scope, subject, count: 1 });
    return null;
  }

  /**
   * Gives back a token `take` counted: before the next flush it is simply not sent; once in KV,
   * the next flush returns it (a negative count), so refunds never leave the shared bucket spent.
   */
  refund(scope: Scope, subject: string): void {
    const key = scope + '\0' + subject;
    const p = this.pending.get(key);
    if (p) p.count--;
    else this.pending.set(key, { scope, subject, count: -1 });
  }

  private async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    await Promise.all(
      [...batch].map(async ([key, { scope, subject, count }]) => {
        if (count === 0) return;
        try {
          this.known.set(key, await this.add(kvKey(scope, subject), scope, count));
        } catch (err) {
          // NATS away or too much contention: keep the count for the next flush.
          const p = this.pending.get(key);
          if (p) p.count += count;
          else this.pending.set(key, { scope, subject, count });
          logger.debug('shared rate-limit flush failed', { err: (err as Error).message });
        }
      }),
    );
  }

  /** Takes `count` tokens from the KV bucket (compare-and-set) and returns what is left. */
  private async add(key: string, scope: Scope, count: number): Promise<State> {
    const { perMinute, burst } = this.limits[scope];
    // Only the write is tried again (another thread wrote between the read and it); a failed read is NATS away.
    let writing = false;
    return retry(
      async () => {
        writing = false;
        const now = Date.now();
        const entry = await this.kv.get(key);
        const live = entry && entry.operation === 'PUT' && entry.length > 0 ? entry.json<State>() : null;
        const tokens = live ? refill(live, burst, perMinute / 60_000, now) : burst;
        // Overdraft (replicas letting requests through between flushes) is carried, up to one burst; a refund (a negative count) refills no further than the burst.
        const next: State = { tokens: Math.min(burst, Math.max(-burst, tokens - count)), at: now };
        writing = true;
        if (entry) await this.kv.update(key, JSON.stringify(next), entry.revision);
        else await this.kv.create(key, JSON.stringify(next));
        return next;
      },
      { attempts: CAS_ATTEMPTS, retryable: () => writing },
    );
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush().catch(() => {});
  }
}

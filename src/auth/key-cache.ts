// The front's view of API keys: a bounded cache by prefix, loaded from the store on a miss.
// An entry lives at most `ttlMs` after it was read (the backstop); before that, a change to a
// key drops it on every replica (auth/key-changes.ts).
import { LRUCache } from 'lru-cache';
import type { Db } from '../store/db.js';
import { keyByPrefix } from '../store/api-keys.js';
import { parseRange } from '../domain/ip-ranges.js';
import { retry } from '../util/backoff.js';

export interface KeyRecord {
  id: string;
  workspaceId: string;
  prefix: string;
  secretHash: string;
  permissions: string[];
  expiresAt: number | null;
  allowlist: string[];
  ranges: ReturnType<typeof parseRange>[];
}

/** A store read that keeps being overtaken by invalidations is given up after this many. */
const FETCH_ATTEMPTS = 3;

export class KeyCache {
  private readonly cache: LRUCache<string, KeyRecord>;
  /** Store reads under way, by prefix (a count: an invalidated read may overlap its retry). */
  private readonly reads = new Map<string, number>();

  constructor(db: Db, max: number, ttlMs: number) {
    this.cache = new LRUCache<string, KeyRecord>({
      max,
      // An expired entry is never served: the next request reads the store again.
      ttl: ttlMs,
      // fetch() shares one store lookup between concurrent misses; a delete() or clear()
      // during a lookup aborts it, so an invalidation cannot be overwritten by what the
      // store held before the change.
      fetchMethod: async (prefix) => {
        this.reads.set(prefix, (this.reads.get(prefix) ?? 0) + 1);
        let k: Awaited<ReturnType<typeof keyByPrefix>>;
        try {
          k = await keyByPrefix(db, prefix);
        } finally {
          const n = this.reads.get(prefix)! - 1;
          if (n === 0) this.reads.delete(prefix);
          else this.reads.set(prefix, n);
        }
        if (!k) return undefined;
        return {
          id: k.id,
          workspaceId: k.workspace_id,
          prefix: k.key_prefix,
          secretHash: k.secret_hash,
          permissions: k.permissions,
          expiresAt: k.expires_at ? k.expires_at.getTime() : null,
          allowlist: k.ip_whitelist,
          ranges: k.ip_whitelist.map(parseRange),
        };
      },
    });
  }

  /** The hot path: a map lookup (undefined when absent or older than the TTL). */
  peek(prefix: string): KeyRecord | undefined {
    return this.cache.get(prefix);
  }

  /** A store read of this prefix is under way: a fetch now joins it instead of reading again. */
  reading(prefix: string): boolean {
    return this.reads.has(prefix);
  }

  async fetch(prefix: string): Promise<KeyRecord | undefined> {
    let status: LRUCache.Status<string, KeyRecord> = {};
    return retry(() => this.cache.fetch(prefix, { status: (status = {}) }), {
      attempts: FETCH_ATTEMPTS,
      // Invalidated while being read: what was read may predate the change, read again.
      retryable: () => status.fetchAborted === true,
    });
  }

  invalidate(prefixes: readonly string[]): void {
    for (const p of prefixes) this.cache.delete(p);
  }

  /** Drops everything: invalidations may have been missed. */
  clear(): void {
    this.cache.clear();
  }
}

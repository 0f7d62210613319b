// The front's view of API keys: a bounded cache by prefix, loaded from the store on a miss.
// Actors tell the front which prefixes to drop whenever a key changes.
import { LRUCache } from 'lru-cache';
import type { Db } from '../store/db.js';
import { keyByPrefix } from '../store/api-keys.js';
import { parseRange } from './ip-allowlist.js';

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

export class KeyCache {
  private readonly cache: LRUCache<string, KeyRecord>;

  constructor(db: Db, max: number) {
    this.cache = new LRUCache<string, KeyRecord>({
      max,
      // fetch() shares one store lookup between concurrent misses; a delete() during a
      // lookup discards its result, so an invalidation cannot be overwritten by stale data.
      fetchMethod: async (prefix) => {
        const k = await keyByPrefix(db, prefix);
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

  peek(prefix: string): KeyRecord | undefined {
    return this.cache.get(prefix);
  }

  fetch(prefix: string): Promise<KeyRecord | undefined> {
    return this.cache.fetch(prefix);
  }

  invalidate(prefixes: readonly string[]): void {
    for (const p of prefixes) this.cache.delete(p);
  }
}

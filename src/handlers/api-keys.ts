// API key management (README, Request bodies, Routes and Permissions). Session routes; the
// pipeline has checked membership. Every change to a key tells the front to drop its cached
// credential before the response leaves, so a revoked or refreshed secret stops at once.
import type { Handler, Handlers, PathCtx } from './context.js';
import { json, type Reply } from './reply.js';
import { requireManager } from './workspaces.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import { iso, normalizeTimestamp } from '../domain/time.js';
import { isUuid } from '../ids.js';
import { checkKeyPermissions } from '../auth/permissions.js';
import type { KeyType } from '../domain/principals.js';
import { hashSecret, newPrefix, newSecret } from '../auth/key-format.js';
import { malformedEntries } from '../auth/ip-allowlist.js';
import { findKey, insertKey, keysOf, keyUsage, replaceSecret, revokeKey, saveKey, type KeyRow, type Queryable } from '../store/index.js';

const STORE_WARNING = 'Store this key now: only its prefix is kept readable, the secret cannot be shown again.';

function present(k: KeyRow) {
  return {
    id: k.id,
    key_prefix: k.key_prefix,
    name: k.name,
    description: k.description,
    permissions: k.permissions,
    key_type: k.key_type,
    environment: k.environment,
    expires_at: iso(k.expires_at),
    ip_whitelist: k.ip_whitelist,
    created_at: iso(k.created_at),
    last_used_at: iso(k.last_used_at),
  };
}

function withSecret(k: KeyRow, secret: string) {
  return { id: k.id, key_prefix: k.key_prefix, key: `${k.key_prefix}.${secret}`, permissions: k.permissions, key_type: k.key_type };
}

function permissionsOrThrow(keyType: KeyType, asked: string[] | undefined): string[] {
  const check = checkKeyPermissions(keyType, asked);
  if (!check.ok) throw new DomainError(check.code, check.message, check.details);
  return check.permissions;
}

/** `expires_at` as sent (omitted or null) or normalized to ISO UTC, which must be in the future. */
function futureOrThrow<T extends string | null | undefined>(expiresAt: T): T {
  if (expiresAt === null || expiresAt === undefined) return expiresAt;
  const at = normalizeTimestamp(expiresAt, 'expires_at');
  if (Date.parse(at) <= Date.now()) throw new InvalidInput('expires_at must be in the future', [{ field: 'expires_at', message: 'must be in the future' }]);
  return at as T;
}

/** Entries that can never match are stored (README, Permissions) but called out. */
function allowlistWarning(entries: string[] | undefined): string | undefined {
  const bad = malformedEntries(entries ?? []);
  return bad.length ? `These ip_whitelist entries are not IPs or CIDR blocks and will never match: ${bad.join(', ')}` : undefined;
}

async function loadKey(q: Queryable, ctx: PathCtx<'keyId'>, lock = false): Promise<KeyRow> {
  const id = ctx.params.keyId;
  const key = isUuid(id) ? await findKey(q, ctx.workspaceId, id, lock) : null;
  if (!key) throw new DomainError('NOT_FOUND', 'API key not found');
  return key;
}

function invalidating(reply: Reply, prefix: string): Reply {
  return { ...reply, invalidateKeys: [prefix] };
}

const create: Handler<'POST /workspaces/{workspaceId}/api-keys'> = async (ctx) => {
  requireManager(ctx);
  const b = ctx.body;
  const keyType = b.key_type ?? 'secret';
  const permissions = permissionsOrThrow(keyType, b.permissions);
  const expiresAt = futureOrThrow(b.expires_at);
  const secret = newSecret();
  const key = await insertKey(
    ctx.db,
    {
      workspaceId: ctx.workspaceId, secretHash: hashSecret(secret), name: b.name, description: b.description ?? '', permissions, keyType,
      environment: b.environment ?? 'live', expiresAt: expiresAt ?? null, ipWhitelist: b.ip_whitelist ?? [], createdBy: ctx.user!.sub,
    },
    () => newPrefix(ctx.workspaceId, keyType),
  );
  const warning = [STORE_WARNING, allowlistWarning(b.ip_whitelist)].filter(Boolean).join(' ');
  return json(201, { success: true, api_key: { ...present(key), ...withSecret(key, secret) }, warning });
};

const list: Handler = async (ctx) => {
  const keys = (await keysOf(ctx.db, ctx.workspaceId)).map(present);
  return json(200, { success: true, api_keys: keys, total: keys.length });
};

const get: Handler<'GET /workspaces/{workspaceId}/api-keys/{keyId}'> = async (ctx) => json(200, { success: true, api_key: present(await loadKey(ctx.db, ctx)) });

const update: Handler<'PUT /workspaces/{workspaceId}/api-keys/{keyId}'> = async (ctx) => {
  requireManager(ctx);
  const b = ctx.body;
  const expiresAt = futureOrThrow(b.expires_at);
  const key = await ctx.db.tx(async (q) => {
    const current = await loadKey(q, ctx, true);
    return saveKey(q, {
      ...current,
      name: b.name ?? current.name,
      description: b.description ?? current.description,
      permissions: b.permissions === undefined ? current.permissions : permissionsOrThrow(current.key_type, b.permissions),
      environment: b.environment ?? current.environment,
      // omitted: unchanged; null: cleared
      expires_at: expiresAt === undefined ? current.expires_at : expiresAt === null ? null : new Date(expiresAt),
      ip_whitelist: b.ip_whitelist ?? current.ip_whitelist,
    });
  });
  const warning = allowlistWarning(b.ip_whitelist);
  return invalidating(json(200, { success: true, api_key: present(key), ...(warning ? { warning } : {}) }), key.key_prefix);
};

const revoke: Handler<'DELETE /workspaces/{workspaceId}/api-keys/{keyId}'> = async (ctx) => {
  requireManager(ctx);
  const key = await loadKey(ctx.db, ctx);
  await revokeKey(ctx.db, key.id);
  return invalidating(json(200, { success: true, message: `API key ${key.key_prefix} revoked` }), key.key_prefix);
};

const refresh: Handler<'POST /workspaces/{workspaceId}/api-keys/{keyId}/refresh'> = async (ctx) => {
  requireManager(ctx);
  const key = await loadKey(ctx.db, ctx);
  const secret = newSecret();
  await replaceSecret(ctx.db, key.id, hashSecret(secret));
  return invalidating(json(200, { success: true, api_key: withSecret(key, secret), warning: STORE_WARNING }), key.key_prefix);
};

const usage: Handler<'GET /workspaces/{workspaceId}/api-keys/{keyId}/usage'> = async (ctx) => {
  const key = await loadKey(ctx.db, ctx);
  const byDay = new Map<string, number>();
  const byRoute: Record<string, number> = {};
  let total = 0;
  const used = await keyUsage(ctx.db, key.id);
  for (const r of used.rows) {
    byDay.set(r.date, (byDay.get(r.date) ?? 0) + r.requests);
    byRoute[r.route] = (byRoute[r.route] ?? 0) + r.requests;
    total += r.requests;
  }
  return json(200, {
    success: true,
    usage: { key_id: key.id, total_requests: total, last_used_at: iso(used.lastUsedAt), by_day: [...byDay].map(([date, requests]) => ({ date, requests })), by_route: byRoute },
  });
};

export const apiKeyHandlers = {
  'POST /workspaces/{workspaceId}/api-keys': create,
  'GET /workspaces/{workspaceId}/api-keys': list,
  'GET /workspaces/{workspaceId}/api-keys/{keyId}': get,
  'PUT /workspaces/{workspaceId}/api-keys/{keyId}': update,
  'DELETE /workspaces/{workspaceId}/api-keys/{keyId}': revoke,
  'POST /workspaces/{workspaceId}/api-keys/{keyId}/refresh': refresh,
  'GET /workspaces/{workspaceId}/api-keys/{keyId}/usage': usage,
} satisfies Handlers;

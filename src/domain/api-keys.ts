// API key management (INTERFACE 2.6, 4.8, 5.1; DECISIONS §3, §8, §10). Session routes; the
// pipeline has checked membership. Every change to a key tells the front to drop its cached
// credential before the response leaves, so a revoked or refreshed secret stops at once.
import type { Ctx, Handler } from '../actors/context.js';
import { HttpError, json, type Reply } from '../http/reply.js';
import { isUniqueViolation, type Queryable } from '../store/db.js';
import { newId, isUuid } from '../ids.js';
import { iso } from './time.js';
import { checkKeyPermissions, type KeyType } from '../auth/permissions.js';
import { hashSecret, newPrefix, newSecret } from '../auth/key-format.js';
import { malformedEntries } from '../auth/ip-allowlist.js';
import { requireManager } from './workspaces.js';

interface KeyRow {
  id: string;
  key_prefix: string;
  name: string;
  description: string;
  permissions: string[];
  key_type: KeyType;
  environment: 'live' | 'test';
  expires_at: Date | null;
  ip_whitelist: string[];
  created_at: Date;
  last_used_at: Date | null;
}

const COLUMNS = 'id, key_prefix, name, description, permissions, key_type, environment, expires_at, ip_whitelist, created_at, last_used_at';
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
  if (!check.ok) throw new HttpError(400, check.code, check.message, check.details);
  return check.permissions;
}

function futureOrThrow(expiresAt: string | null | undefined): void {
  if (expiresAt && Date.parse(expiresAt) <= Date.now()) {
    throw new HttpError(400, 'VALIDATION_ERROR', 'expires_at must be in the future', [{ field: 'expires_at', message: 'must be in the future' }]);
  }
}

/** Entries that can never match are stored (INTERFACE 5.1.5) but called out. */
function allowlistWarning(entries: string[] | undefined): string | undefined {
  const bad = malformedEntries(entries ?? []);
  return bad.length ? `These ip_whitelist entries are not IPs or CIDR blocks and will never match: ${bad.join(', ')}` : undefined;
}

async function loadKey(q: Queryable, ctx: Ctx, lock = false): Promise<KeyRow> {
  const id = ctx.params.keyId!;
  const r = isUuid(id)
    ? await q.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL${lock ? ' FOR UPDATE' : ''}`, [id, ctx.workspaceId])
    : { rows: [] };
  if (!r.rows[0]) throw new HttpError(404, 'NOT_FOUND', 'API key not found');
  return r.rows[0];
}

const create: Handler = async (ctx) => {
  requireManager(ctx);
  const b = ctx.body as { name: string; permissions?: string[]; key_type?: KeyType; environment?: 'live' | 'test'; expires_at?: string | null; description?: string; ip_whitelist?: string[] };
  const keyType = b.key_type ?? 'secret';
  const permissions = permissionsOrThrow(keyType, b.permissions);
  futureOrThrow(b.expires_at);
  const secret = newSecret();
  for (let attempt = 0; ; attempt++) {
    try {
      const r = await ctx.db.query<KeyRow>(
        `INSERT INTO api_keys (id, workspace_id, key_prefix, secret_hash, name, description, permissions, key_type, environment, expires_at, ip_whitelist, created_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8, $9, $10::timestamptz, $11::text::jsonb, $12)
         RETURNING ${COLUMNS}`,
        [newId(), ctx.workspaceId, newPrefix(ctx.workspaceId!, keyType), hashSecret(secret), b.name, b.description ?? '', JSON.stringify(permissions), keyType,
          b.environment ?? 'live', b.expires_at ?? null, JSON.stringify(b.ip_whitelist ?? []), ctx.user!.sub],
      );
      const key = r.rows[0]!;
      const warning = [STORE_WARNING, allowlistWarning(b.ip_whitelist)].filter(Boolean).join(' ');
      return json(201, { success: true, api_key: { ...present(key), ...withSecret(key, secret) }, warning });
    } catch (err) {
      // 8 random base62 characters collide rarely; draw a new prefix.
      if (!isUniqueViolation(err) || attempt >= 3) throw err;
    }
  }
};

const list: Handler = async (ctx) => {
  const r = await ctx.db.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`, [ctx.workspaceId]);
  return json(200, { success: true, api_keys: r.rows.map(present), total: r.rows.length });
};

const get: Handler = async (ctx) => json(200, { success: true, api_key: present(await loadKey(ctx.db, ctx)) });

const update: Handler = async (ctx) => {
  requireManager(ctx);
  const b = ctx.body as { name?: string; description?: string; permissions?: string[]; environment?: string; expires_at?: string | null; ip_whitelist?: string[] };
  futureOrThrow(b.expires_at);
  const key = await ctx.db.tx(async (q) => {
    const current = await loadKey(q, ctx, true);
    const permissions = b.permissions === undefined ? current.permissions : permissionsOrThrow(current.key_type, b.permissions);
    const r = await q.query<KeyRow>(
      `UPDATE api_keys SET name = $2, description = $3, permissions = $4::text::jsonb, environment = $5,
         expires_at = $6::timestamptz, ip_whitelist = $7::text::jsonb, updated_at = now()
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [current.id, b.name ?? current.name, b.description ?? current.description, JSON.stringify(permissions), b.environment ?? current.environment,
        b.expires_at === undefined ? iso(current.expires_at) : b.expires_at, JSON.stringify(b.ip_whitelist ?? current.ip_whitelist)],
    );
    return r.rows[0]!;
  });
  const warning = allowlistWarning(b.ip_whitelist);
  return invalidating(json(200, { success: true, api_key: present(key), ...(warning ? { warning } : {}) }), key.key_prefix);
};

const revoke: Handler = async (ctx) => {
  requireManager(ctx);
  const key = await loadKey(ctx.db, ctx);
  await ctx.db.query('UPDATE api_keys SET revoked_at = now(), updated_at = now() WHERE id = $1', [key.id]);
  return invalidating(json(200, { success: true, message: `API key ${key.key_prefix} revoked` }), key.key_prefix);
};

const refresh: Handler = async (ctx) => {
  requireManager(ctx);
  const key = await loadKey(ctx.db, ctx);
  const secret = newSecret();
  await ctx.db.query('UPDATE api_keys SET secret_hash = $2, updated_at = now() WHERE id = $1', [key.id, hashSecret(secret)]);
  return invalidating(json(200, { success: true, api_key: withSecret(key, secret), warning: STORE_WARNING }), key.key_prefix);
};

const usage: Handler = async (ctx) => {
  const key = await loadKey(ctx.db, ctx);
  const rows = (
    await ctx.db.query<{ date: string; route: string; requests: number }>(
      `SELECT to_char(day, 'YYYY-MM-DD') AS date, route, requests FROM api_key_usage WHERE key_id = $1 ORDER BY day DESC, route`,
      [key.id],
    )
  ).rows;
  const byDay = new Map<string, number>();
  const byRoute: Record<string, number> = {};
  let total = 0;
  for (const r of rows) {
    byDay.set(r.date, (byDay.get(r.date) ?? 0) + r.requests);
    byRoute[r.route] = (byRoute[r.route] ?? 0) + r.requests;
    total += r.requests;
  }
  return json(200, {
    success: true,
    usage: { key_id: key.id, total_requests: total, last_used_at: iso(key.last_used_at), by_day: [...byDay].map(([date, requests]) => ({ date, requests })), by_route: byRoute },
  });
};

function invalidating(reply: Reply, prefix: string): Reply {
  return { ...reply, invalidateKeys: [prefix] };
}

const KEYS = '/workspaces/{workspaceId}/api-keys';
export const apiKeyHandlers: Record<string, Handler> = {
  [`POST ${KEYS}`]: create,
  [`GET ${KEYS}`]: list,
  [`GET ${KEYS}/{keyId}`]: get,
  [`PUT ${KEYS}/{keyId}`]: update,
  [`DELETE ${KEYS}/{keyId}`]: revoke,
  [`POST ${KEYS}/{keyId}/refresh`]: refresh,
  [`GET ${KEYS}/{keyId}/usage`]: usage,
};

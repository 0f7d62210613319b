// API keys (README, Request bodies): only the prefix is stored readable, the secret as its SHA-256.
// A revoked key keeps its row (usage history) with `revoked_at` set.
import { isUniqueViolation, type Queryable } from './db.js';
import { newId } from '../ids.js';
import { retry } from '../util/backoff.js';
import type { KeyEnvironment, KeyType } from '../domain/principals.js';

export interface KeyRow {
  id: string;
  workspace_id: string;
  key_prefix: string;
  secret_hash: string;
  name: string;
  description: string;
  permissions: string[];
  key_type: KeyType;
  environment: KeyEnvironment;
  expires_at: Date | null;
  ip_whitelist: string[];
  created_at: Date;
  last_used_at: Date | null;
}

const COLUMNS = 'id, workspace_id, key_prefix, secret_hash, name, description, permissions, key_type, environment, expires_at, ip_whitelist, created_at, last_used_at';

export interface NewKey {
  workspaceId: string;
  secretHash: string;
  name: string;
  description: string;
  permissions: string[];
  keyType: KeyType;
  environment: KeyEnvironment;
  expiresAt: string | null;
  ipWhitelist: string[];
  createdBy: string;
}

/** A prefix collision is drawn again, at most this often in all. */
const PREFIX_DRAWS = 4;

/** Inserts the key under a fresh prefix from `prefix()` (drawing again on the rare collision). */
export async function insertKey(q: Queryable, k: NewKey, prefix: () => string): Promise<KeyRow> {
  const insert = async () => {
    const r = await q.query<KeyRow>(
      `INSERT INTO api_keys (id, workspace_id, key_prefix, secret_hash, name, description, permissions, key_type, environment, expires_at, ip_whitelist, created_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7::text::jsonb, $8, $9, $10::timestamptz, $11::text::jsonb, $12)
       RETURNING ${COLUMNS}`,
      [newId(), k.workspaceId, prefix(), k.secretHash, k.name, k.description, JSON.stringify(k.permissions), k.keyType, k.environment, k.expiresAt, JSON.stringify(k.ipWhitelist), k.createdBy],
    );
    return r.rows[0]!;
  };
  return retry(insert, { attempts: PREFIX_DRAWS, retryable: isUniqueViolation });
}

export async function keysOf(q: Queryable, workspaceId: string): Promise<KeyRow[]> {
  return (await q.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`, [workspaceId])).rows;
}

/** A live key of the workspace by id (the caller has checked `id` is a UUID). */
export async function findKey(q: Queryable, workspaceId: string, id: string, lock = false): Promise<KeyRow | null> {
  const r = await q.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL${lock ? ' FOR UPDATE' : ''}`, [id, workspaceId]);
  return r.rows[0] ?? null;
}

/** The live key with this prefix, for authentication. */
export async function keyByPrefix(q: Queryable, prefix: string): Promise<KeyRow | null> {
  const r = await q.query<KeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE key_prefix = $1 AND revoked_at IS NULL`, [prefix]);
  return r.rows[0] ?? null;
}

export async function saveKey(q: Queryable, k: KeyRow): Promise<KeyRow> {
  const r = await q.query<KeyRow>(
    `UPDATE api_keys SET name = $2, description = $3, permissions = $4::text::jsonb, environment = $5,
       expires_at = $6::timestamptz, ip_whitelist = $7::text::jsonb, updated_at = now()
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [k.id, k.name, k.description, JSON.stringify(k.permissions), k.environment, k.expires_at, JSON.stringify(k.ip_whitelist)],
  );
  return r.rows[0]!;
}

export async function revokeKey(q: Queryable, id: string): Promise<void> {
  await q.query('UPDATE api_keys SET revoked_at = now(), updated_at = now() WHERE id = $1', [id]);
}

export async function replaceSecret(q: Queryable, id: string, secretHash: string): Promise<void> {
  await q.query('UPDATE api_keys SET secret_hash = $2, updated_at = now() WHERE id = $1', [id, secretHash]);
}

export interface KeyUsage {
  lastUsedAt: Date | null;
  /** Requests per day and route, newest day first. */
  rows: { date: string; route: string; requests: number }[];
}

/** The key's usage counts and last use, read in one statement so they agree (one flush writes both). */
export async function keyUsage(q: Queryable, id: string): Promise<KeyUsage> {
  const r = await q.query<{ last_used_at: Date | null; rows: KeyUsage['rows'] }>(
    `SELECT k.last_used_at,
            COALESCE(json_agg(json_build_object('date', to_char(u.day, 'YYYY-MM-DD'), 'route', u.route, 'requests', u.requests) ORDER BY u.day DESC, u.route)
                     FILTER (WHERE u.key_id IS NOT NULL), '[]') AS rows
     FROM api_keys k LEFT JOIN api_key_usage u ON u.key_id = k.id
     WHERE k.id = $1 GROUP BY k.id`,
    [id],
  );
  return { lastUsedAt: r.rows[0]?.last_used_at ?? null, rows: r.rows[0]?.rows ?? [] };
}

// Token suppressions (README, Request bodies and Routes): one row per token and type in a workspace, matched
// by the token's md5 (migration 6). Written by the suppress route and by dead-token feedback;
// read by every send.
import { startsWith, type Queryable } from './db.js';
import { newId } from '../ids.js';
import type { SuppressionType } from '../domain/tokens.js';

export interface SuppressionInput {
  device_token: string;
  platform: string;
  suppression_type: SuppressionType;
  reason?: string | null;
  source_push_id?: string | null;
  source_campaign_id?: string | null;
}

export interface SuppressionRow {
  id: string;
  device_token: string;
  platform: string;
  suppression_type: SuppressionType;
  suppressed_at: Date;
}

/** Suppresses the token under the type; `created` is false when it already was (the existing row is returned). */
export async function suppressToken(q: Queryable, workspaceId: string, s: SuppressionInput): Promise<{ row: SuppressionRow; created: boolean }> {
  const inserted = await q.query<SuppressionRow>(
    `INSERT INTO token_suppressions (id, workspace_id, device_token, platform, suppression_type, reason, source_push_id, source_campaign_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (workspace_id, md5(device_token), suppression_type) DO NOTHING
     RETURNING id, device_token, platform, suppression_type, suppressed_at`,
    [newId(), workspaceId, s.device_token, s.platform, s.suppression_type, s.reason ?? null, s.source_push_id ?? null, s.source_campaign_id ?? null],
  );
  if (inserted.rows[0]) return { row: inserted.rows[0], created: true };
  const existing = await q.query<SuppressionRow>(
    `SELECT id, device_token, platform, suppression_type, suppressed_at FROM token_suppressions
     WHERE workspace_id = $1 AND md5(device_token) = md5($2) AND device_token = $2 AND suppression_type = $3`,
    [workspaceId, s.device_token, s.suppression_type],
  );
  return { row: existing.rows[0]!, created: false };
}

/**
 * A page of the workspace's suppressions, newest first, and how many there are; with `prefix`,
 * only the tokens starting with it (found by their first 64 characters' index, migration 401).
 */
export async function listSuppressions(q: Queryable, workspaceId: string, limit: number, offset: number, prefix?: string): Promise<{ rows: (SuppressionRow & { reason: string | null })[]; total: number }> {
  const where = `workspace_id = $1${prefix === undefined ? '' : ` AND ${startsWith('left(device_token, 64)', 'left($2, 64)')} AND starts_with(device_token, $2)`}`;
  const search = prefix === undefined ? [] : [prefix];
  const [page, count] = await Promise.all([
    q.query<SuppressionRow & { reason: string | null }>(
      `SELECT id, device_token, platform, suppression_type, reason, suppressed_at FROM token_suppressions
       WHERE ${where} ORDER BY suppressed_at DESC, id DESC LIMIT $${search.length + 2} OFFSET $${search.length + 3}`,
      [workspaceId, ...search, limit, offset],
    ),
    q.query<{ n: number }>(`SELECT count(*)::int AS n FROM token_suppressions WHERE ${where}`, [workspaceId, ...search]),
  ]);
  return { rows: page.rows, total: count.rows[0]!.n };
}

/** Lifts one suppression: its id, or undefined when the id is unknown in this workspace. */
export async function liftSuppression(q: Queryable, workspaceId: string, id: string): Promise<string | undefined> {
  const r = await q.query<{ id: string }>('DELETE FROM token_suppressions WHERE workspace_id = $1 AND id = $2 RETURNING id', [workspaceId, id]);
  return r.rows[0]?.id;
}

/** Which of these tokens are suppressed (under any type) in the workspace. */
export async function suppressedAmong(q: Queryable, workspaceId: string, tokens: readonly string[]): Promise<Set<string>> {
  if (tokens.length === 0) return new Set();
  const r = await q.query<{ device_token: string }>(
    `SELECT DISTINCT device_token FROM token_suppressions
     WHERE workspace_id = $1 AND md5(device_token) = ANY (SELECT md5(t) FROM unnest($2::text[]) AS t) AND device_token = ANY ($2::text[])`,
    [workspaceId, tokens],
  );
  return new Set(r.rows.map((x) => x.device_token));
}

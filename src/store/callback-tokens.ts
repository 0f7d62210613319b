// Mailgun's callback tokens (migration 430). Mailgun signs a timestamp and a random token, not the
// event beside them, so a captured signature would carry any event; a token is accepted once. A
// token is kept only while its timestamp could still be accepted: the table holds a few minutes
// of a workspace's callbacks, and replicas share it.
import type { Queryable } from './db.js';

/**
 * Remembers the workspace's token until `keepUntil` (seconds since the epoch), in the caller's
 * transaction; false when it is remembered already (a replay). The workspace's expired tokens go
 * in the same statement.
 */
export async function rememberToken(q: Queryable, workspaceId: string, token: string, keepUntil: number): Promise<boolean> {
  const r = await q.query(
    `WITH expired AS (DELETE FROM callback_tokens WHERE workspace_id = $1 AND expires_at < now())
     INSERT INTO callback_tokens (workspace_id, token, expires_at) VALUES ($1, $2, to_timestamp($3)) ON CONFLICT DO NOTHING`,
    [workspaceId, token, keepUntil],
  );
  return r.rowCount === 1;
}

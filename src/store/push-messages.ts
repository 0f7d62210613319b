// Push records (migration 6: push_messages), as other resources refer to them.
import type { Queryable } from './db.js';

/** Whether the workspace has a push record with this id (the caller has checked `id` is a UUID). */
export async function pushMessageExists(q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const r = await q.query('SELECT 1 FROM push_messages WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return r.rowCount > 0;
}

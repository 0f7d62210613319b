// Client messageIds remembered for 7 days (migration 450, `ingest_message_ids`; docs/ingest.md,
// messageId). Tracks claim theirs in the statement that applies their events
// (eventlog/apply-events.ts); an identify claims its own here, in the transaction that writes
// the person, so the claim and the write commit together.
import type { Db, Queryable } from './db.js';
import { logger } from '../logger.js';

/** How long a messageId is remembered (README, messageId). */
export const MESSAGE_ID_WINDOW = `interval '7 days'`;

/**
 * Claims `messageId` for an identify in the transaction `q`: null when claimed, else the
 * person the first identify answered with. A row older than the window is taken over, and so
 * is one whose person was deleted since (a deleted person's identifies are forgotten with them:
 * their answer cannot be given again).
 */
export async function claimIdentify(q: Queryable, workspaceId: string, messageId: string): Promise<{ personId: string } | null> {
  const claimed = await q.query(
    `INSERT INTO ingest_message_ids AS m (workspace_id, kind, message_id) VALUES ($1, 'identify', $2)
     ON CONFLICT (workspace_id, kind, message_id) DO UPDATE SET person_id = NULL, accepted_at = now() WHERE m.accepted_at <= now() - ${MESSAGE_ID_WINDOW} OR NOT EXISTS (SELECT 1 FROM people p WHERE p.id = m.person_id)
     RETURNING 1`,
    [workspaceId, messageId],
  );
  if (claimed.rowCount === 1) return null;
  const first = await q.query<{ person_id: string }>(`SELECT person_id FROM ingest_message_ids WHERE workspace_id = $1 AND kind = 'identify' AND message_id = $2`, [workspaceId, messageId]);
  return { personId: first.rows[0]!.person_id };
}

/** Records the person an identify claiming `messageId` answered with (same transaction as the claim). */
export async function answerIdentify(q: Queryable, workspaceId: string, messageId: string, personId: string): Promise<void> {
  await q.query(`UPDATE ingest_message_ids SET person_id = $3 WHERE workspace_id = $1 AND kind = 'identify' AND message_id = $2`, [workspaceId, messageId, personId]);
}

/** Deletes message ids past the window (they already count as absent); failures are only logged. */
export function purgeMessageIds(db: Db): void {
  db.query(`DELETE FROM ingest_message_ids WHERE accepted_at <= now() - ${MESSAGE_ID_WINDOW}`).catch((err: unknown) => logger.warn('purging expired message ids failed', { err: (err as Error).message }));
}

/** The first event of a track's messageId, as the store holds it (its fields null once its person is deleted). */
export interface FirstEvent {
  workspace_id: string;
  message_id: string;
  event_id: string;
  person_id: string;
  type: string | null;
  parameters: Record<string, unknown> | null;
  created_at: Date | null;
}

/** The first events of those of `keys` accepted within the window, in one statement (the JetStream Log's check before it publishes). */
export async function firstEvents(q: Queryable, keys: { workspace_id: string; message_id?: string }[]): Promise<FirstEvent[]> {
  const r = await q.query<FirstEvent>(
    `SELECT m.workspace_id::text AS workspace_id, m.message_id, m.event_id::text AS event_id, m.person_id::text AS person_id, e.type, e.parameters, e.created_at
     FROM jsonb_to_recordset($1::text::jsonb) AS k(workspace_id uuid, message_id text)
     CROSS JOIN LATERAL (
       SELECT * FROM ingest_message_ids m
       WHERE m.workspace_id = k.workspace_id AND m.kind = 'track' AND m.message_id = k.message_id AND m.accepted_at > now() - ${MESSAGE_ID_WINDOW} LIMIT 1
     ) m
     LEFT JOIN LATERAL (SELECT type, parameters, created_at FROM events WHERE id = m.event_id LIMIT 1) e ON true`,
    [JSON.stringify(keys.map((k) => ({ workspace_id: k.workspace_id, message_id: k.message_id })))],
  );
  return r.rows;
}

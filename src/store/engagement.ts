// Herald's own opens and clicks (docs/tracking.md) as the store keeps them: what a tracked link's
// redirect reads of its message, and the batch writer that adds the opens and clicks to their
// messages' events (one statement a batch, whatever its size: migration 441's counters and
// migration 470's webhook outbox follow from that update, as for a provider's callback).
import type { Queryable } from './db.js';

/** What the tracking routes read of a message: fixed once it is written, so it may be cached. */
export interface TrackedMessage {
  external_id: string;
  campaign_id: string | null;
  channel: string;
  /** ms since the epoch; null when it was not sent. */
  sent_at: number | null;
  links: string[] | null;
}

export async function trackedMessage(q: Queryable, workspaceId: string, messageId: string): Promise<TrackedMessage | undefined> {
  const r = await q.query<TrackedMessage>(
    `SELECT external_id, campaign_id, channel, (extract(epoch FROM sent_at) * 1000)::float8 AS sent_at, links FROM messages WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, messageId],
  );
  return r.rows[0];
}

/** One open or click as its message's events keep it. */
export interface EngagementEvent {
  messageId: string;
  type: 'opened' | 'clicked';
  at: string;
  machine: boolean;
  details: Record<string, unknown>;
}

/** As channels/callbacks.ts: past this many events a message counts the rest in events_not_stored. */
const EVENTS_STORED_PER_MESSAGE = 1_000;

/**
 * Adds the events to their messages of the workspace, in one statement: the messages locked in
 * id order first (as the callback applier locks them, so neither waits on the other crosswise).
 */
export async function addEngagement(q: Queryable, workspaceId: string, events: readonly EngagementEvent[]): Promise<void> {
  const byMessage = new Map<string, object[]>();
  for (const e of events) {
    let added = byMessage.get(e.messageId);
    if (!added) byMessage.set(e.messageId, (added = []));
    added.push({ type: e.type, at: e.at, ...(e.machine ? { machine: true } : {}), details: e.details });
  }
  const ids = [...byMessage.keys()];
  await q.query(
    `WITH locked AS (SELECT id FROM messages WHERE workspace_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR UPDATE)
     UPDATE messages m SET
       events = CASE WHEN jsonb_array_length(m.events) + jsonb_array_length(u.added::jsonb) <= ${EVENTS_STORED_PER_MESSAGE} THEN m.events || u.added::jsonb ELSE m.events END,
       events_not_stored = m.events_not_stored + CASE WHEN jsonb_array_length(m.events) + jsonb_array_length(u.added::jsonb) <= ${EVENTS_STORED_PER_MESSAGE} THEN 0 ELSE jsonb_array_length(u.added::jsonb) END
     FROM unnest($2::uuid[], $3::text[]) AS u(id, added)
     WHERE m.id = u.id AND m.id IN (SELECT id FROM locked)`,
    [workspaceId, ids, ids.map((id) => JSON.stringify(byMessage.get(id)))],
  );
}

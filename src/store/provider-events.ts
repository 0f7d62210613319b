// Provider events seen (migration 202): a provider's own event id, remembered with what it
// applied, so a callback sent again applies nothing the second time. The callback applier
// (channels/callbacks.ts) remembers its events in its own statement; these serve the others
// (an inbound SMS).
import type { Queryable } from './db.js';

export async function providerEventSeen(q: Queryable, workspaceId: string, provider: string, eventId: string): Promise<boolean> {
  return (await q.query(`SELECT 1 FROM provider_events WHERE workspace_id = $1 AND provider = $2 AND event_id = $3`, [workspaceId, provider, eventId])).rowCount > 0;
}

export async function rememberProviderEvent(q: Queryable, workspaceId: string, provider: string, eventId: string): Promise<void> {
  await q.query(`INSERT INTO provider_events (workspace_id, provider, event_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [workspaceId, provider, eventId]);
}

// A provider's delivery event applied to the message it names (DECISIONS §13 table), once: the
// provider's own event id is recorded in provider_events (migration 202) in the transaction that
// applies it, so a retried callback changes nothing the second time.
import type { ProviderEventKind } from '../domain/messages.js';
import type { Queryable } from '../store/db.js';
import { applyOutcome, type Effect } from './effects.js';
import type { ChannelMessageRecord } from '../store/channel-messages.js';


export interface ProviderEvent {
  provider: string;
  /** The provider's id of this event. */
  eventId: string;
  /** Herald's message id (from the Message-ID it set, or Twilio's MessageSid found through provider_id). */
  messageId?: string;
  providerMessageId?: string;
  kind: ProviderEventKind;
  details: Record<string, unknown>;
  /** Twilio: the ErrorCode of an undelivered or failed message. */
  errorCode?: number;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** The message id in a Message-ID Herald set (`<{id}@domain>`, with or without the brackets). */
export const messageIdIn = (header: unknown): string | undefined => (typeof header === 'string' ? UUID.exec(header)?.[0]?.toLowerCase() : undefined);

/** The status an event moves the message to, and what else it does. */
function outcome(e: ProviderEvent): { status?: string; error?: string; effect?: Effect } {
  switch (e.kind) {
    case 'delivered':
      return { status: 'delivered' };
    case 'hard_bounce':
      return { status: 'bounced', effect: { suppress: 'hard_bounce', person: 'bounced' } };
    case 'complaint':
      return { status: 'complained', effect: { suppress: 'complaint', person: 'unsubscribed' } };
    case 'failed':
      return { status: 'failed', error: `twilio ${e.errorCode ?? 'error'}`, ...(e.errorCode === 21610 ? { effect: { suppress: 'opt_out' } } : e.errorCode === 21211 || e.errorCode === 21614 ? { effect: { suppress: 'invalid_address' } } : {}) };
    default:
      return {};
  }
}

export type Applied = 'applied' | 'duplicate' | 'unmatched';

export async function applyProviderEvent(q: Queryable, workspaceId: string, e: ProviderEvent): Promise<Applied> {
  const seen = await q.query(`INSERT INTO provider_events (workspace_id, provider, event_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [workspaceId, e.provider, e.eventId]);
  if (seen.rowCount === 0) return 'duplicate';
  const o = outcome(e);
  const event = JSON.stringify([{ type: e.kind, at: new Date().toISOString(), details: e.details }]);
  // A final status is not moved back to `delivered` by a late or reordered callback.
  const r = await q.query<ChannelMessageRecord>(
    `UPDATE push_messages SET events = events || $3::jsonb,
       status = CASE WHEN $4::text IS NULL OR ($4 = 'delivered' AND status <> 'sent') THEN status ELSE $4 END,
       error = COALESCE($5, error)
     WHERE workspace_id = $1 AND channel IN ('email', 'sms') AND ${e.messageId ? 'id = $2::uuid' : 'provider_id = $2'}
     RETURNING id, workspace_id, person_id, channel, address, error, skip_reason`,
    [workspaceId, e.messageId ?? e.providerMessageId ?? '', event, o.status ?? null, o.error ?? null],
  );
  const record = r.rows[0];
  if (!record) return 'unmatched';
  if (o.effect) await applyOutcome(q, record, o.effect);
  return 'applied';
}

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

/** An event's fate; an applied one with its message's status and error as they stand after it. */
export type Applied = { fate: 'applied'; status: ChannelMessageRecord['status']; error: string | null } | { fate: 'duplicate' | 'unmatched' };

/** An event's entry in its message's `events`, and what it does to the message. */
interface Planned {
  at: number;
  key: string;
  byId: boolean;
  event: string;
  status: string | null;
  error: string | null;
  effect?: Effect;
}

/**
 * A callback's events applied in a few statements whatever their number (a SendGrid batch holds
 * up to thousands): one insert records every event id and answers which are new, then one update
 * per round moves the messages, a round holding each message at most once so that two events of
 * one message apply in the order the provider sent them. Effects (suppressions, the person's
 * status) follow per record; they are rare. The answer is each event's fate, in order, with the
 * message's status after it when applied.
 */
export async function applyProviderEvents(q: Queryable, workspaceId: string, events: readonly ProviderEvent[]): Promise<Applied[]> {
  const fates: Applied[] = events.map(() => ({ fate: 'duplicate' }));
  if (events.length === 0) return fates;
  const fresh = await q.query<{ provider: string; event_id: string }>(
    `INSERT INTO provider_events (workspace_id, provider, event_id)
     SELECT $1, u.provider, u.event_id FROM unnest($2::text[], $3::text[]) AS u(provider, event_id)
     ON CONFLICT DO NOTHING RETURNING provider, event_id`,
    [workspaceId, events.map((e) => e.provider), events.map((e) => e.eventId)],
  );
  const isNew = new Set(fresh.rows.map((r) => `${r.provider}\u0000${r.event_id}`));
  const rounds: Planned[][] = [];
  const seen = new Map<string, number>();
  const at = new Date().toISOString();
  events.forEach((e, i) => {
    // The first of an event id repeated within the batch is new; the rest are duplicates.
    if (!isNew.delete(`${e.provider}\u0000${e.eventId}`)) return;
    fates[i] = { fate: 'unmatched' };
    const byId = e.messageId !== undefined;
    const key = e.messageId ?? e.providerMessageId ?? '';
    const round = seen.get(`${byId}:${key}`) ?? 0;
    seen.set(`${byId}:${key}`, round + 1);
    const o = outcome(e);
    (rounds[round] ??= []).push({ at: i, key, byId, event: JSON.stringify([{ type: e.kind, at, details: e.details }]), status: o.status ?? null, error: o.error ?? null, effect: o.effect });
  });
  for (const round of rounds) {
    for (const byId of [true, false]) {
      const planned = round.filter((p) => p.byId === byId);
      if (planned.length > 0) await applyRound(q, workspaceId, byId, planned, fates);
    }
  }
  return fates;
}

async function applyRound(q: Queryable, workspaceId: string, byId: boolean, planned: Planned[], fates: Applied[]): Promise<void> {
  // A final status is not moved back to `delivered` by a late or reordered callback.
  const r = await q.query<ChannelMessageRecord & { at: number }>(
    `UPDATE push_messages m SET events = m.events || u.event::jsonb,
       status = CASE WHEN u.status IS NULL OR (u.status = 'delivered' AND m.status <> 'sent') THEN m.status ELSE u.status END,
       error = COALESCE(u.error, m.error)
     FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[]) AS u(at, key, event, status, error)
     WHERE m.workspace_id = $1 AND m.channel IN ('email', 'sms') AND ${byId ? 'm.id = u.key::uuid' : 'm.provider_id = u.key'}
     RETURNING u.at, m.id, m.workspace_id, m.person_id, m.channel, m.status, m.address, m.error, m.skip_reason`,
    [workspaceId, planned.map((p) => p.at), planned.map((p) => p.key), planned.map((p) => p.event), planned.map((p) => p.status), planned.map((p) => p.error)],
  );
  const byAt = new Map(planned.map((p) => [p.at, p]));
  for (const record of r.rows) {
    fates[record.at] = { fate: 'applied', status: record.status, error: record.error };
    const effect = byAt.get(record.at)?.effect;
    if (effect) await applyOutcome(q, record, effect);
  }
}

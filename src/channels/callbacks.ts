// A provider's delivery event applied to the message it names (docs/channels.md), once: the
// provider's own event id is recorded in provider_events (migration 202) in the transaction that
// applies it, so a retried callback changes nothing the second time.
import { ADDRESS_CHANNELS, type ProviderEventKind } from '../domain/messages.js';
import type { Queryable } from '../store/db.js';
import { applyOutcomes, type Effect, type EffectOf } from './effects.js';
import type { MessageRecord } from '../store/messages.js';
import { groupBy } from '../util/group-by.js';

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

type Status = MessageRecord['status'];

/** The status an event moves the message to, and what else it does. */
function outcome(e: ProviderEvent): { status?: Status; error?: string; effect?: Effect } {
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
export type Applied = { fate: 'applied'; status: Status; error: string | null } | { fate: 'duplicate' | 'unmatched' };

/**
 * Events kept in one message's `events`, at most: a tenant's own callbacks could otherwise grow
 * one row without bound. Later events still move the message's status and apply their effects;
 * they are counted in its `events_not_stored` (migration 430).
 */
const EVENTS_STORED_PER_MESSAGE = 1_000;

/** A message named by the events, as locked for them; `stored`: how many events it holds. */
type Named = EffectOf & { id: string; provider_id: string | null; status: Status; stored: number };

/** What the events do to one message: its status and error after them, the entries added, those only counted. */
interface Change {
  message: Named;
  status: Status;
  error: string | null;
  added: { type: string; at: string; details: Record<string, unknown> }[];
  notStored: number;
}

const DUPLICATE: Applied = { fate: 'duplicate' };
const UNMATCHED: Applied = { fate: 'unmatched' };

/**
 * Records the batch's event ids ($2 providers, $3 ids: JSON arrays, which a batch of thousands
 * serializes natively) and answers, in one row, the places (from 0) of its duplicates: an id
 * recorded before, or repeated within the batch after its first.
 */
const RECORD_IDS = `
  WITH batch AS (
    SELECT u.provider, u.event_id, u.at, min(u.at) OVER (PARTITION BY u.provider, u.event_id) AS first
    FROM ROWS FROM (json_array_elements_text($2::json), json_array_elements_text($3::json)) WITH ORDINALITY AS u(provider, event_id, at)
  ), added AS (
    INSERT INTO provider_events (workspace_id, provider, event_id) SELECT $1, provider, event_id FROM batch WHERE at = first
    ON CONFLICT DO NOTHING RETURNING provider, event_id
  )
  SELECT array_agg((b.at - 1)::int) AS at FROM batch b
  WHERE b.at <> b.first OR NOT EXISTS (SELECT 1 FROM added a WHERE a.provider = b.provider AND a.event_id = b.event_id)`;

/**
 * A callback's events applied in a few statements whatever their number (a SendGrid batch holds
 * thousands, possibly all of one message): one insert records every event id and answers which
 * are new, one select locks the messages they name, the events are folded into each message here
 * in the order the provider sent them, then one update writes every message and a statement per
 * kind of effect follows (suppressions, people). No statement is per event, and no message is
 * rewritten once per event of it. The answer is each event's fate, in order, with the message's
 * status after it when applied, and the people whose status or addresses the events changed.
 */
export async function applyProviderEvents(q: Queryable, workspaceId: string, events: readonly ProviderEvent[]): Promise<{ fates: Applied[]; touched: string[] }> {
  const fates = new Array<Applied>(events.length).fill(DUPLICATE);
  if (events.length === 0) return { fates, touched: [] };
  const duplicates = new Set((await q.query<{ at: number[] | null }>(RECORD_IDS, [workspaceId, JSON.stringify(events.map((e) => e.provider)), JSON.stringify(events.map((e) => e.eventId))])).rows[0]!.at);
  const applying = events.flatMap((e, i) => (duplicates.has(i) ? [] : [{ e, i }]));
  const named = await namedMessages(q, workspaceId, applying.map(({ e }) => e));
  const changes = new Map<string, Change>();
  const effects: { record: EffectOf; effect: Effect }[] = [];
  const at = new Date().toISOString();
  for (const { e, i } of applying) {
    fates[i] = UNMATCHED;
    const o = outcome(e);
    for (const message of (e.messageId !== undefined ? named.byId.get(e.messageId) : named.byProviderId.get(e.providerMessageId ?? '')) ?? []) {
      let c = changes.get(message.id);
      if (!c) changes.set(message.id, (c = { message, status: message.status, error: message.error, added: [], notStored: 0 }));
      // A final status is not moved back to `delivered` by a late or reordered callback.
      if (o.status && !(o.status === 'delivered' && c.status !== 'sent')) c.status = o.status;
      c.error = o.error ?? c.error;
      if (message.stored + c.added.length < EVENTS_STORED_PER_MESSAGE) c.added.push({ type: e.kind, at, details: e.details });
      else c.notStored++;
      if (o.effect) effects.push({ record: { ...message, error: c.error }, effect: o.effect });
      fates[i] = { fate: 'applied', status: c.status, error: c.error };
    }
  }
  if (changes.size > 0) {
    const all = [...changes.values()];
    await q.query(
      // A message whose events are full keeps its stored value as it is, not a rewritten copy.
      `UPDATE messages m SET events = CASE WHEN u.added = '[]' THEN m.events ELSE m.events || u.added::jsonb END, events_not_stored = m.events_not_stored + u.not_stored, status = u.status, error = u.error
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[]) AS u(id, status, error, added, not_stored)
       WHERE m.id = u.id`,
      [all.map((c) => c.message.id), all.map((c) => c.status), all.map((c) => c.error), all.map((c) => JSON.stringify(c.added)), all.map((c) => c.notStored)],
    );
  }
  return { fates, touched: await applyOutcomes(q, effects) };
}

/**
 * The workspace's email and SMS messages the events name, locked (in id order, so two callbacks
 * never wait for each other crosswise): by Herald's id, or by the provider's (Twilio's
 * MessageSid, through messages_by_provider_id, migration 205).
 */
async function namedMessages(q: Queryable, workspaceId: string, events: readonly ProviderEvent[]): Promise<{ byId: Map<string, Named[]>; byProviderId: Map<string, Named[]> }> {
  const ids = [...new Set(events.flatMap((e) => (e.messageId !== undefined ? [e.messageId] : [])))];
  const providerIds = [...new Set(events.flatMap((e) => (e.messageId === undefined && e.providerMessageId !== undefined ? [e.providerMessageId] : [])))];
  const select = (key: string, cast: string, keys: string[]) =>
    keys.length === 0
      ? Promise.resolve([])
      : q
          .query<Named>(
            `SELECT id, workspace_id, person_id, channel, status, address, error, skip_reason, provider_id, jsonb_array_length(events) AS stored
             FROM messages WHERE workspace_id = $1 AND channel = ANY($3::text[]) AND ${key} = ANY($2::${cast}[]) ORDER BY id FOR UPDATE`,
            [workspaceId, keys, ADDRESS_CHANNELS],
          )
          .then((r) => r.rows);
  return { byId: groupBy(await select('id', 'uuid', ids), (m) => m.id), byProviderId: groupBy(await select('provider_id', 'text', providerIds), (m) => m.provider_id!) };
}

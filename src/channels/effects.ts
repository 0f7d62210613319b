// What a provider's answer does beyond the message record (docs/channels.md): a dead address
// suppressed, a hard bounce making the person `bounced`, a complaint making them `unsubscribed`
// (reason `spam_complaint`). The sandbox's answers go through the same handling: its send
// answers through the channels' classification, its reports through applyProviderEvents.
import type { Queryable } from '../store/db.js';
import { suppressAddresses } from '../store/address-suppressions.js';
import type { AddressChannel, AddressSuppressionType } from '../domain/messages.js';
import type { MessageRecord } from '../store/messages.js';

export interface Effect {
  suppress?: AddressSuppressionType;
  person?: 'bounced' | 'unsubscribed';
}

/** The message an effect is of, as it stands when the effect applies (its error is the suppression's reason). */
export type EffectOf = Pick<MessageRecord, 'workspace_id' | 'person_id' | 'address' | 'error' | 'skip_reason'> & { channel: AddressChannel };

export async function applyOutcome(q: Queryable, record: EffectOf, effect: Effect): Promise<void> {
  await applyOutcomes(q, [{ record, effect }]);
}

/**
 * The effects of many records in a statement per kind, whatever their number (a callback batch
 * holds thousands). Answers the people they changed (status or a suppressed address: what a
 * segment's reachability reads), for their segments to be evaluated again.
 */
export async function applyOutcomes(q: Queryable, outcomes: readonly { record: EffectOf; effect: Effect }[]): Promise<string[]> {
  await suppressAddresses(
    q,
    outcomes.flatMap(({ record: r, effect: e }) => (e.suppress && r.address ? [{ workspaceId: r.workspace_id, channel: r.channel, address: r.address, type: e.suppress, reason: r.error ?? r.skip_reason }] : [])),
  );
  const people = (person: Effect['person']) => [...new Set(outcomes.filter((o) => o.effect.person === person).map((o) => o.record.person_id))];
  const bounced = people('bounced');
  if (bounced.length > 0) await q.query(`UPDATE people SET status = 'bounced', updated_at = now() WHERE id = ANY($1::uuid[]) AND status = 'active'`, [bounced]);
  const unsubscribed = people('unsubscribed');
  if (unsubscribed.length > 0) {
    await q.query(`UPDATE people SET status = 'unsubscribed', unsubscribed_at = now(), unsubscribe_reason = 'spam_complaint', updated_at = now() WHERE id = ANY($1::uuid[]) AND status <> 'unsubscribed'`, [unsubscribed]);
  }
  return [...new Set(outcomes.map((o) => o.record.person_id))];
}

// What a provider's answer does beyond the message record (DECISIONS §13 table): a dead address
// suppressed, a hard bounce making the person `bounced`, a complaint making them `unsubscribed`
// (reason `spam_complaint`). The sandbox plays the simulator's answers through the same effects.
import type { Queryable } from '../store/db.js';
import { suppressAddress } from '../store/address-suppressions.js';
import type { AddressSuppressionType } from '../domain/messages.js';
import type { ChannelMessageRecord } from '../store/channel-messages.js';

export interface Effect {
  suppress?: AddressSuppressionType;
  person?: 'bounced' | 'unsubscribed';
}

export async function applyOutcome(q: Queryable, record: ChannelMessageRecord, effect: Effect): Promise<void> {
  if (effect.suppress && record.address) await suppressAddress(q, record.workspace_id, record.channel, record.address, effect.suppress, record.error ?? record.skip_reason);
  if (effect.person === 'bounced') await q.query(`UPDATE people SET status = 'bounced', updated_at = now() WHERE id = $1 AND status = 'active'`, [record.person_id]);
  if (effect.person === 'unsubscribed') {
    await q.query(`UPDATE people SET status = 'unsubscribed', unsubscribed_at = now(), unsubscribe_reason = 'spam_complaint', updated_at = now() WHERE id = $1 AND status <> 'unsubscribed'`, [record.person_id]);
  }
}

type Rendered = Omit<ChannelMessageRecord, 'status'>;
const at = () => new Date().toISOString();

/** Amazon SES's mailbox simulator, as Herald's sandbox plays it. */
export function sandboxEmail(r: Rendered, address: string): { record: ChannelMessageRecord; effect?: Effect } {
  const sent = { ...r, provider_id: r.id };
  switch (address.toLowerCase()) {
    case 'bounce@simulator.herald.test':
      return { record: { ...sent, status: 'bounced', error: 'hard bounce (sandbox)', events: [{ type: 'bounced', at: at(), details: { bounce_type: 'hard' } }] }, effect: { suppress: 'hard_bounce', person: 'bounced' } };
    case 'complaint@simulator.herald.test':
      return { record: { ...sent, status: 'complained', events: [{ type: 'complained', at: at() }] }, effect: { suppress: 'complaint', person: 'unsubscribed' } };
    default:
      return { record: { ...sent, status: 'delivered', events: [{ type: 'delivered', at: at() }] } };
  }
}

/** Twilio's test numbers, as Herald's sandbox plays them. */
export function sandboxSms(r: Rendered, number: string): { record: ChannelMessageRecord; effect?: Effect } {
  switch (number) {
    case '+15005550001':
      return { record: { ...r, status: 'failed', error: 'twilio 400 21211: invalid number (sandbox)' }, effect: { suppress: 'invalid_address' } };
    case '+15005550009':
      return { record: { ...r, status: 'failed', error: 'twilio 400 21614: cannot receive SMS (sandbox)' }, effect: { suppress: 'invalid_address' } };
    default:
      return { record: { ...r, provider_id: `SM${r.id.replace(/-/g, '')}`, status: 'delivered', events: [{ type: 'delivered', at: at() }] } };
  }
}

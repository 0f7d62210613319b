// The decisions of every send, on every channel, in one order (docs/channels.md, "Send
// decisions"); the first that applies wins and is the recipient's record:
//   1. consent: the person `unsubscribed` or `suppressed` (and, where the channel says so, `bounced`),
//      then, for a node naming a topic, the person not subscribed to it;
//   2. address: the person's on this channel (push: sendable devices; email, SMS: the address);
//   3. suppression: the address (push: every remaining token) suppressed;
//   (the content is rendered for those still in: a record keeps what would have been sent)
//   4. send policy: quiet hours in the recipient's zone, then the caps, where the channel honours them.
// Steps 2 and 3 are the channel's (channels/channel.ts); 1 and 4 are here.
import type { PersonRow } from '../store/people.js';
import { policyBlock, recipientZone, type SendPolicy } from '../domain/send-policy.js';

/** A recipient not sent to: its record's status, `skip_reason` and prose. */
export interface Held {
  status: 'skipped' | 'policy_suppressed';
  skip: string;
  error: string;
}

export const held = (skip: string, error: string): Held => ({ status: 'skipped', skip, error });

const UNSUBSCRIBED = held('person_unsubscribed', 'The person is unsubscribed');
const SUPPRESSED = held('person_suppressed', 'The person is suppressed');
const BOUNCED = held('person_bounced', "The person's email bounced");

/** 1. Consent. `bounced` stops the channels whose address bounced (email); push and SMS still go. */
export function consent(person: Pick<PersonRow, 'status'>, stopsAtBounce: boolean): Held | undefined {
  if (person.status === 'unsubscribed') return UNSUBSCRIBED;
  if (person.status === 'suppressed') return SUPPRESSED;
  if (stopsAtBounce && person.status === 'bounced') return BOUNCED;
  return undefined;
}

const TOPIC_UNSUBSCRIBED = held('topic_unsubscribed', "The person is not subscribed to the node's topic");

/** 1b. A node naming a topic (docs/audiences.md) skips those of `optedOut`, read for the send. */
export function topic(optedOut: ReadonlySet<string> | undefined, personId: string): Held | undefined {
  return optedOut?.has(personId) ? TOPIC_UNSUBSCRIBED : undefined;
}

/** What of the send policy a channel honours: push its quiet hours and caps, SMS its quiet hours, email none. */
export type PolicyScope = 'all' | 'quiet_hours' | 'none';

/**
 * 4. The send policy at `now`: quiet hours, then the daily and rolling caps over the person's
 * `sent` times (`bypassCaps`: a campaign node's bypass_frequency_cap).
 */
export function sendPolicy(policy: SendPolicy | null, scope: PolicyScope, person: Pick<PersonRow, 'timezone'>, now: number, sentTimes: readonly number[], bypassCaps = false): Held | undefined {
  if (scope === 'none') return undefined;
  const block = policyBlock(policy, recipientZone(person.timezone, policy), now, sentTimes, { bypassCaps: bypassCaps || scope === 'quiet_hours' });
  return block ? { status: 'policy_suppressed', skip: block.skip_reason, error: block.error } : undefined;
}

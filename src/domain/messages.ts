// A push message's statuses and skip reasons (docs/channels.md; README, Request bodies): what a
// send answers per recipient, what a stored push record and its deliveries hold.
import { POLICY_SKIPS } from './send-policy.js';

/** A send's result per recipient. */
export const SEND_STATUSES = ['sent', 'skipped', 'policy_suppressed', 'failed'] as const;
export type SendStatus = (typeof SEND_STATUSES)[number];

/** A push record as the status route and the message history show it: a claimed scheduled send still reads `scheduled`. */
export const SHOWN_MESSAGE_STATUSES = ['scheduled', ...SEND_STATUSES] as const;

/** What email and SMS providers report of a message after the send (docs/channels.md). */
export const PROVIDER_STATUSES = ['delivered', 'bounced', 'complained'] as const;

/** A message record as stored (messages.status): `sending` marks a scheduled send one actor claimed. */
export const MESSAGE_STATUSES = ['scheduled', 'sending', ...SEND_STATUSES, ...PROVIDER_STATUSES] as const;

/** The channels a message goes out on (messages.channel), and those with an address of a person's own. */
export const CHANNELS = ['push', 'email', 'sms', 'webhook'] as const;
export const ADDRESS_CHANNELS = ['email', 'sms'] as const;
/** The channels message templates hold content for (a webhook node holds its own). */
export const TEMPLATE_CHANNELS = ['push', 'email', 'sms'] as const;
export type Channel = (typeof CHANNELS)[number];
export type AddressChannel = (typeof ADDRESS_CHANNELS)[number];

/** One device's delivery of a push record (push_deliveries.status). */
export const DELIVERY_STATUSES = ['sent', 'failed'] as const;

/** Why nothing reached the provider: the person or device rules, then the send policy's. */
export const SKIP_REASONS = ['person_unsubscribed', 'person_suppressed', 'topic_unsubscribed', 'no_active_device_tokens', 'requested_device_not_active', 'device_token_suppressed', ...POLICY_SKIPS] as const;

/** Email and SMS add their own (docs/channels.md). */
export const MESSAGE_SKIP_REASONS = [...SKIP_REASONS, 'person_bounced', 'no_email_address', 'no_phone_number', 'address_suppressed'] as const;

/** Why an email address or phone number is suppressed (address_suppressions.suppression_type). */
export const ADDRESS_SUPPRESSION_TYPES = ['hard_bounce', 'complaint', 'invalid_address', 'opt_out', 'manual'] as const;
export type AddressSuppressionType = (typeof ADDRESS_SUPPRESSION_TYPES)[number];

/** What a provider's delivery callback says happened to a message (docs/channels.md); recorded in its events as `type`. */
export type ProviderEventKind = 'delivered' | 'hard_bounce' | 'soft_bounce' | 'deferred' | 'complaint' | 'opened' | 'clicked' | 'failed';

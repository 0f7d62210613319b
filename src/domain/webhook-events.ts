// The outbound webhook event types (docs/webhooks.md): one tuple, from which the endpoint
// schema's enumeration and the docs are derived. The SQL that emits them is migration 470.
export const WEBHOOK_EVENT_TYPES = [
  'message.sent',
  'message.delivered',
  'message.failed',
  'message.skipped',
  'message.bounced',
  'message.complained',
  'message.opened',
  'message.clicked',
  'person.created',
  'person.updated',
  'person.deleted',
  'person.unsubscribed',
  'person.resubscribed',
  'campaign.activated',
  'campaign.completed',
] as const;

/** What an endpoint may subscribe to: a type, or `*` for every type. */
export const WEBHOOK_SUBSCRIPTIONS = [...WEBHOOK_EVENT_TYPES, '*'] as const;

/** The event POST …/webhooks/{endpointId}/test sends, whatever the endpoint subscribes to. */
export const WEBHOOK_TEST_EVENT = 'webhook.test';

/** An outbox row (migration 470): a job waiting or running, then delivered or failed. */
export const WEBHOOK_DELIVERY_STATES = ['waiting', 'running', 'delivered', 'failed'] as const;

/** How long a delivered or failed event (and its attempts) is kept, for the attempts list and a resend. */
export const DELIVERY_RETENTION_MS = 30 * 86_400_000;

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

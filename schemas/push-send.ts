// Request schemas of the push send routes (docs/channels.md; README, Routes and Request bodies). Which content
// fields are templates, and how a template error is reported, is src/domain/templates.ts.
import { DEVICE_PLATFORMS } from '../src/domain/tokens.js';
import { CHANNELS, DELIVERY_STATUSES, MESSAGE_SKIP_REASONS, PROVIDER_STATUSES, SEND_STATUSES, SHOWN_MESSAGE_STATUSES, SKIP_REASONS } from '../src/domain/messages.js';
import { nonEmptyString, object, pagination, timestamp, type Schema, type SchemaRefusal } from './common.js';
import { closed, count, dashboardPersonNotFound, enumOf, freeObject, isoTime, nullableIsoTime, nullableStr, ok, personNotFound, PUSH, str, uuidText, type RouteResponses } from './response-parts.js';

const text = (maxLength: number, description?: string) => ({ type: 'string', maxLength, ...(description ? { description } : {}) }) as const;

/** A push's content: what a send, a campaign's push node and a message template carry. */
export const pushContent = {
  title: text(1_000, 'Liquid template'),
  body: text(4_000, 'Liquid template'),
  image_url: text(2_048),
  action_url: text(2_048),
  custom_data: { type: 'object', description: 'Carried in the provider message (reserved provider keys stripped); string values are Liquid templates' },
} as const;

/** What one send carries, shared by the single and the batch send. */
const content = {
  ...pushContent,
  variables: { type: 'object', description: 'Template variables' },
  event_id: text(255, 'Attribution'),
  campaign_id: text(255, 'Attribution'),
  tags: { type: 'array', maxItems: 50, items: text(255) },
} as const;

const platform = { type: 'string', enum: [...DEVICE_PLATFORMS] } as const;

/** POST .../push/send */
export const pushSend = object(
  {
    external_id: { ...nonEmptyString(255), description: "Your own user id (the person's external id); the person UUID is not accepted" },
    ...content,
    scheduled_at: { ...timestamp, description: 'A future instant holds the send until then (202); at or before now sends at once' },
  },
  ['external_id'],
);

/** POST .../push/send/batch: one content to up to 1,000 recipients. */
export const pushBatch = object(
  {
    ...content,
    recipients: {
      type: 'array',
      minItems: 1,
      maxItems: 1_000,
      items: object(
        {
          // A non-UUID fails that recipient only (README, Routes), so the schema takes any string.
          user_id: { ...nonEmptyString(255), description: 'The person UUID (not the external id)' },
          device_token: { type: 'string', minLength: 1, maxLength: 4096, description: "Selects one of the person's active devices" },
          platform: { ...platform, description: "Only the person's devices of this platform" },
          variables: { type: 'object', description: 'Win over the top-level variables' },
        },
        ['user_id'],
      ),
    },
  },
  ['recipients'],
);

export const pushBatchRefusals: readonly SchemaRefusal[] = [{ at: '/recipients', keyword: 'maxItems', code: 'BATCH_TOO_LARGE', message: 'At most 1,000 recipients per batch' }];

/** GET /workspaces/{workspaceId}/people/{personId}/messages */
export const messageHistory = object(pagination(50));

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

/** A masked token: first 4 + `***` + last 4 characters, or `***` for a token under 12; never the raw token. */
export const maskedToken: Schema = { type: 'string', pattern: '^(\\*\\*\\*|[\\s\\S]{4}\\*\\*\\*[\\s\\S]{4})$', description: 'Masked: first 4 + `***` + last 4 characters; `***` for a token under 12 characters' };
const devicePlatform = enumOf(...DEVICE_PLATFORMS);
const skipReason = enumOf(...SKIP_REASONS);
const pushResultFields = {
  message_id: { type: 'string', description: 'The record\'s UUID; `skipped-<unix seconds>` for an immediate skip and `failed-<unix seconds>` for a recipient that names no person (neither stored)' },
  status: enumOf(...SEND_STATUSES),
  sent_at: { ...isoTime, description: 'When the send went to the provider, or when it was decided not to send' },
  provider: { type: 'string', description: '`sandbox`, `fcm`, `apns`, or `none` when nothing reached a provider' },
  provider_id: { type: 'string', description: "The provider's message id (first accepted device)" },
  error: { type: 'string', description: 'Prose, on every result that is not `sent`; do not branch on it' },
  skip_reason: { ...skipReason, description: 'Why nothing reached the provider (skipped, policy_suppressed); branch on this' },
};
const pushResultRequired = ['message_id', 'status', 'sent_at', 'provider'];

/** A push record as the status route and the message history show it. */
export const pushMessage = closed(
  {
    message_id: uuidText,
    channel: enumOf(...CHANNELS),
    status: { ...enumOf(...SHOWN_MESSAGE_STATUSES, ...PROVIDER_STATUSES), description: 'delivered, bounced, complained: email and SMS, from the provider (docs/channels.md)' },
    external_id: str,
    platform: { type: 'string', enum: [...DEVICE_PLATFORMS, null], nullable: true, description: 'The platform of the first device sent to; null when no device was' },
    to: { ...str, description: 'Email and SMS: the email address or phone number (E.164) the message went to; absent on push (its devices are in `deliveries`, tokens masked) and where no address was chosen' },
    provider: str,
    provider_id: nullableStr,
    skip_reason: enumOf(...MESSAGE_SKIP_REASONS),
    error: str,
    title: { ...nullableStr, description: 'As rendered (as written while scheduled)' },
    body: { ...nullableStr, description: 'As rendered (as written while scheduled)' },
    tags: { type: 'array', items: str, description: 'The tags it was sent with (absent when none); a dashboard test send has `["test"]`' },
    created_at: isoTime,
    sent_at: nullableIsoTime,
    scheduled_at: isoTime,
    campaign_id: str,
    event_id: str,
    events: {
      type: 'array',
      description: "Email and SMS: the provider's events applied (delivered, bounced, opened, clicked with the URL…) and Herald's own opens and clicks (`machine: true`: a proxy's or a scanner's, docs/tracking.md); any channel: `converted` when the person reached the campaign's goal; [] when none",
      items: closed({ type: str, at: str, machine: { type: 'boolean', enum: [true] }, details: freeObject }, ['type', 'at']),
    },
    opens: { ...count, description: "Every open recorded (a person's, repeats included; not a machine's); absent when none" },
    clicks: { ...count, description: "Every click recorded (a person's, repeats included; not a machine's); absent when none" },
    events_not_stored: { ...count, description: 'Provider events applied to the message beyond the first 1,000, which are all `events` keeps; absent when none' },
    deliveries: {
      type: 'array',
      items: closed(
        { device_id: uuidText, device_token: maskedToken, platform: devicePlatform, status: enumOf(...DELIVERY_STATUSES), provider_id: str, error: str },
        ['device_id', 'device_token', 'platform', 'status'],
      ),
    },
  },
  ['message_id', 'channel', 'status', 'external_id', 'platform', 'provider', 'provider_id', 'title', 'body', 'created_at', 'sent_at', 'events', 'deliveries'],
);

const notImplemented: RouteResponses = { success: {} };

export const pushSendResponses: Record<string, RouteResponses> = {
  [`POST ${PUSH}/send`]: {
    success: {
      200: ok('Sent (to at least one device), skipped (nothing stored) or policy_suppressed (stored)', pushResultFields, pushResultRequired),
      202: ok('Held until scheduled_at; sent once then, with the checks of that moment', { message_id: uuidText, status: enumOf('scheduled'), scheduled_at: isoTime }),
    },
    errors: {
      400: { codes: ['VALIDATION_ERROR'], why: 'Neither title nor body, a template that does not parse (the field is named in details), the person UUID as external_id' },
      404: personNotFound,
      500: { codes: ['PROVIDER_ERROR'], why: "No device accepted the push (refused, token gone, or the platform's credentials missing): the record is stored as failed, `details.message_id` names it" },
    },
  },
  [`POST ${PUSH}/send/batch`]: {
    success: {
      200: ok('One result per recipient, in request order; a failing recipient fails alone', {
        results: { type: 'array', items: closed({ user_id: str, ...pushResultFields }, ['user_id', ...pushResultRequired]) },
        summary: closed({ total: count, sent: count, failed: count, skipped: count, policy_suppressed: count, processed: isoTime }),
      }),
    },
    errors: { 400: { codes: ['VALIDATION_ERROR', 'BATCH_TOO_LARGE'], why: 'Neither title nor body, a template that does not parse (VALIDATION_ERROR); more than 1,000 recipients' } },
  },
  [`GET ${PUSH}/status/{messageId}`]: {
    success: { 200: ok('The push record with its deliveries', { message: pushMessage }) },
    errors: { 404: { codes: ['NOT_FOUND'], why: "No such record in this workspace (unknown, another workspace's, a synthetic `skipped-…` id)" } },
  },
  [`GET ${PUSH}/history`]: notImplemented,
  [`GET ${PUSH}/analytics`]: notImplemented,
  'GET /workspaces/{workspaceId}/people/{personId}/messages': {
    success: { 200: ok("The person's push records, newest first", { messages: { type: 'array', items: pushMessage }, total: count }) },
    errors: { 404: dashboardPersonNotFound },
  },
};

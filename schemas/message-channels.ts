// Email and SMS channels, PUT /workspaces/{id}/channels/email|sms (docs/channels.md). Partial like
// push: a field omitted keeps its stored value, `null` removes an optional one, and `smtp: null`
// (`twilio: null`) removes the whole channel. What a schema cannot say (the merged settings are
// complete, where the SMTP host may point) is checked by each channel's settings (channels/<name>/settings.ts).
import { nonEmptyString, object, pagination, type Schema } from './common.js';
import { ADDRESS_CHANNELS, ADDRESS_SUPPRESSION_TYPES } from '../src/domain/messages.js';
import { closed, count, enumOf, isoTime, message, nullableStr, ok, str, uuidText, type RouteResponses } from './response-parts.js';

/** An email address (format email: the rule channels/email/address.ts applies to suppressions too). */
const email = { type: 'string', format: 'email', maxLength: 254 } as const;
const nullable = <S extends Schema>(s: S, description?: string) => ({ ...s, nullable: true as const, ...(description ? { description } : {}) });
const e164 = { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164, e.g. +15005550006' } as const;

export const emailChannelUpdate = object(
  {
    smtp: object(
      {
        host: { ...nonEmptyString(253), pattern: '^[^\\s/:]+$|^\\[[0-9a-fA-F:.]+\\]$', description: "The SMTP relay's host; never a loopback, private or link-local address unless the server allows it (HERALD_ALLOWED_PRIVATE_HOSTS)" },
        port: { type: 'integer', minimum: 1, maximum: 65_535 } as const,
        security: { type: 'string', enum: ['tls', 'starttls', 'none'], description: 'tls: TLS from the start (port 465); starttls: upgrade required; none: plain text' },
        username: nullable(nonEmptyString(255)),
        password: nullable(nonEmptyString(1024), 'Never echoed'),
        max_connections: { type: 'integer', minimum: 1, maximum: 50, description: 'Pooled connections to the relay; default 5' },
        rate_per_second: nullable({ type: 'number', minimum: 0.001, maximum: 10_000 } as const, 'Messages per second at most; default none'),
      },
      [],
      { nullable: true, additionalProperties: false, description: 'Fields omitted keep their stored value; with none stored, host, port and security are required. null removes the email channel' },
    ),
    from: object({ email, name: nullable(nonEmptyString(255)) }, ['email'], { additionalProperties: false }),
    reply_to: nullable(email),
    webhooks: object(
      {
        provider: { type: 'string', enum: ['sendgrid', 'mailgun', 'postmark'] },
        verification_key: nullable(nonEmptyString(4096), "SendGrid's Event Webhook public key (PEM or base64 DER)"),
        signing_key: nullable(nonEmptyString(1024), "Mailgun's HTTP webhook signing key"),
        username: nullable(nonEmptyString(255), "Postmark's basic auth user"),
        password: nullable(nonEmptyString(1024), "Postmark's basic auth password"),
      },
      [],
      { nullable: true, additionalProperties: false, description: 'How delivery callbacks are verified; fields omitted keep their stored value; null removes' },
    ),
  },
  [],
  { additionalProperties: false, minProperties: 1 },
);

export const smsChannelUpdate = object(
  {
    twilio: object(
      {
        account_sid: { type: 'string', pattern: '^AC[0-9a-fA-F]{32}$' },
        auth_token: { ...nonEmptyString(256), description: 'Never echoed' },
        from: nullable(e164),
        messaging_service_sid: nullable({ type: 'string', pattern: '^MG[0-9a-fA-F]{32}$' } as const),
      },
      [],
      { nullable: true, additionalProperties: false, description: 'Fields omitted keep their stored value; one of from, messaging_service_sid. null removes the SMS channel' },
    ),
    default_country: nullable({ type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166 alpha-2: the country of numbers stored without +' } as const),
  },
  [],
  { additionalProperties: false, minProperties: 1 },
);

/** GET /workspaces/{id}/suppressions. */
export const suppressionList = object({
  channel: { type: 'string', enum: [...ADDRESS_CHANNELS] },
  ...pagination(50),
  q: { ...nonEmptyString(254), description: 'Only the addresses starting with this (an email address in any case)' },
});

/** POST /workspaces/{id}/suppressions: a suppression set by hand. */
export const suppressionCreate = object(
  {
    channel: { type: 'string', enum: [...ADDRESS_CHANNELS] },
    address: { ...nonEmptyString(254), description: 'An email address (email) or a phone number in E.164 (sms)' },
    suppression_type: { type: 'string', enum: ['manual'] },
    reason: { type: 'string', maxLength: 1000 },
  },
  ['channel', 'address', 'suppression_type'],
  { additionalProperties: false },
);

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

const addressSuppression = closed({
  id: uuidText,
  channel: enumOf(...ADDRESS_CHANNELS),
  address: { ...str, description: 'An email address in lower case, or an E.164 number' },
  suppression_type: enumOf(...ADDRESS_SUPPRESSION_TYPES),
  reason: nullableStr,
  created_at: isoTime,
});

/** A workspace's callbacks are applied one at a time (handlers/provider-callbacks.ts). */
const CALLBACK_BUSY = { codes: [], why: "the workspace's line of callbacks waiting for their turn is full, or this one could not be applied before the deadline; nothing was recorded" };

export const messageChannelResponses: Record<string, RouteResponses> = {
  'GET /u/{token}': {
    success: { 200: { description: 'An HTML page naming the workspace and the masked address, with a button that POSTs; nothing changes', schema: str, mediaType: 'text/html' } },
    errors: { 404: { codes: [], why: 'A token Herald did not make, or its person is gone: an HTML page; nothing changes', mediaType: 'text/html' } },
  },
  'POST /u/{token}': {
    success: { 200: { description: 'Unsubscribed (repeats answer the same): an HTML page, never a redirect', schema: str, mediaType: 'text/html' } },
    errors: { 404: { codes: [], why: 'A token Herald did not make, or its person is gone: an HTML page; nothing changes', mediaType: 'text/html' } },
  },
  'POST /webhooks/email/{workspaceId}': {
    success: { 200: ok('Verified; every event applied once', { applied: count, duplicates: count, unmatched: count }) },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'No such workspace, or its email channel has no callback provider configured' }, 503: CALLBACK_BUSY },
  },
  'POST /webhooks/sms/{workspaceId}/status': {
    success: { 200: ok('Verified; the status applied once', { applied: count, duplicates: count, unmatched: count }) },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'No such workspace, or no SMS channel configured' }, 503: CALLBACK_BUSY },
  },
  'POST /webhooks/sms/{workspaceId}/inbound': {
    success: { 200: { description: 'Verified and applied: an empty TwiML answer', schema: str, mediaType: 'text/xml' } },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'No such workspace, or no SMS channel configured' }, 503: CALLBACK_BUSY },
  },
  'GET /workspaces/{workspaceId}/suppressions': { success: { 200: ok('The suppressions, newest first', { suppressions: { type: 'array', items: addressSuppression }, total: count }) } },
  'POST /workspaces/{workspaceId}/suppressions': {
    success: { 201: ok('The suppression (the existing one when the address was already suppressed by hand)', { suppression: addressSuppression }) },
    errors: { 400: { codes: [], why: 'An address that is not an email address (email) or a phone number (sms) (VALIDATION_ERROR naming address)' } },
  },
  'DELETE /workspaces/{workspaceId}/suppressions/{suppressionId}': { success: { 200: message('Lifted') }, errors: { 404: { codes: ['NOT_FOUND'], why: 'No such suppression in the workspace' } } },
};

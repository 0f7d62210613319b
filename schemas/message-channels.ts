// Email and SMS channels, PUT /workspaces/{id}/channels/email|sms (DECISIONS §13). Partial like
// push: a field omitted keeps its stored value, `null` removes an optional one, and `smtp: null`
// (`twilio: null`) removes the whole channel. What a schema cannot say (the merged settings are
// complete, where the SMTP host may point) is checked by handlers/message-channels.ts.
import { nonEmptyString, object, pagination, type Schema } from './common.js';

const email: Schema = { type: 'string', format: 'email', maxLength: 254 };
const nullable = (s: Schema, description?: string): Schema => ({ ...s, nullable: true, ...(description ? { description } : {}) });
const e164: Schema = { type: 'string', pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164, e.g. +15005550006' };

export const emailChannelUpdate = object(
  {
    smtp: object(
      {
        host: { ...nonEmptyString(253), pattern: '^[^\\s/:]+$|^\\[[0-9a-fA-F:.]+\\]$', description: "The SMTP relay's host; never a loopback, private or link-local address unless the server allows it (HERALD_ALLOWED_PRIVATE_HOSTS)" },
        port: { type: 'integer', minimum: 1, maximum: 65_535 },
        security: { type: 'string', enum: ['tls', 'starttls', 'none'], description: 'tls: TLS from the start (port 465); starttls: upgrade required; none: plain text' },
        username: nullable(nonEmptyString(255)),
        password: nullable(nonEmptyString(1024), 'Never echoed'),
        max_connections: { type: 'integer', minimum: 1, maximum: 50, description: 'Pooled connections to the relay; default 5' },
        rate_per_second: nullable({ type: 'number', exclusiveMinimum: 0, maximum: 10_000 }, 'Messages per second at most; default none'),
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
        messaging_service_sid: nullable({ type: 'string', pattern: '^MG[0-9a-fA-F]{32}$' }),
      },
      [],
      { nullable: true, additionalProperties: false, description: 'Fields omitted keep their stored value; one of from, messaging_service_sid. null removes the SMS channel' },
    ),
    default_country: nullable({ type: 'string', pattern: '^[A-Z]{2}$', description: 'ISO 3166 alpha-2: the country of numbers stored without +' }),
  },
  [],
  { additionalProperties: false, minProperties: 1 },
);

/** GET /workspaces/{id}/suppressions. */
export const suppressionList = object({ channel: { type: 'string', enum: ['email', 'sms'] }, ...pagination(50) });

/** POST /workspaces/{id}/suppressions: a suppression set by hand. */
export const suppressionCreate = object(
  {
    channel: { type: 'string', enum: ['email', 'sms'] },
    address: { ...nonEmptyString(254), description: 'An email address (email) or a phone number in E.164 (sms)' },
    suppression_type: { type: 'string', enum: ['manual'] },
    reason: { type: 'string', maxLength: 1000 },
  },
  ['channel', 'address', 'suppression_type'],
  { additionalProperties: false },
);

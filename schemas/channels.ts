// Push provider credentials, PUT /workspaces/{id}/channels/push (docs/channels.md). What a
// schema cannot say is checked by handlers/channels.ts: that the keys parse as the keys each
// provider signs with, that APNs fields omitted are kept from the stored credentials, and where
// the FCM token_uri may point (docs/isolation.md; it depends on the server's settings).
import { nonEmptyString, object, type Schema, type SchemaRefusal } from './common.js';
import { closed, count, enumOf, nullableIsoTime, nullableStr, ok, str, type RouteResponses } from './response-parts.js';

/** A PEM private key; the text must be the key itself (never a file path). */
const pemKey = (description: string) => ({ type: 'string', maxLength: 16_384, pattern: '-----BEGIN PRIVATE KEY-----', description }) as const;
const appleId = (what: string) => ({ type: 'string', pattern: '^[A-Z0-9]{10}$', description: `${what}: 10 upper-case letters and digits` }) as const;

/** The service-account JSON key file as Google issues it; its other fields are accepted and not kept. */
const serviceAccount = object(
  {
    type: { type: 'string', enum: ['service_account'] },
    project_id: { ...nonEmptyString(255), pattern: '^[^\\s/]+$' },
    private_key: pemKey('PKCS#8 RSA private key in PEM, as in the file'),
    private_key_id: { type: 'string', maxLength: 255 },
    client_email: { type: 'string', format: 'email', maxLength: 254 },
    token_uri: { type: 'string', format: 'uri', pattern: '^https://[^\\s/?#]+([/?#]\\S*)?$', maxLength: 2048, description: "Where the OAuth access token is fetched: an https URL, on oauth2.googleapis.com while the server's FCM endpoint is Google's; never a loopback, private or link-local address unless the server allows it" },
  },
  ['type', 'project_id', 'private_key', 'client_email', 'token_uri'],
);

export const pushChannelsUpdate = object(
  {
    fcm: object({ service_account: serviceAccount }, ['service_account'], {
      nullable: true,
      additionalProperties: false,
      description: 'Replaces the FCM credentials (android, web); null removes them',
    }),
    apns: object(
      {
        key_p8: pemKey('The .p8 key (PKCS#8 EC P-256) in PEM, as Apple hands it out'),
        key_id: appleId('The key id'),
        team_id: appleId('The team id'),
        bundle_id: { type: 'string', maxLength: 255, pattern: '^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*$', description: "The app's bundle id: the apns-topic" },
        production: { type: 'boolean', description: "Apple's production host (true) or its sandbox host (false); default false" },
      },
      [],
      {
        nullable: true,
        additionalProperties: false,
        description: 'APNs token auth (ios). Fields omitted keep their stored value; with none stored, key_p8, key_id, team_id and bundle_id are required. null removes them',
      },
    ),
  },
  [],
  { additionalProperties: false, minProperties: 1 },
);

export const pushChannelsUpdateRefusals: readonly SchemaRefusal[] = [{ at: '', keyword: 'minProperties', message: 'must set fcm or apns (null removes one)' }];

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

/** A push channel (docs/channels.md): its non-secret identifiers when configured; private keys are never shown. */
const channelState = (identifiers: Record<string, Schema>, always: Record<string, Schema> = {}): Schema => ({
  anyOf: [
    closed({ configured: enumOf(true), readable: enumOf(true), ...identifiers, ...always }),
    closed({ configured: enumOf(true), readable: enumOf(false), ...always }, undefined, { description: 'Stored, but sealed under another HERALD_SECRETS_KEY (or damaged): sends to it fail until it is set again' }),
    closed({ configured: enumOf(false), ...always }),
  ],
});
export const pushChannels = closed({
  channels: closed({
    fcm: channelState({ project_id: str, client_email: str, private_key_id: nullableStr, token_uri: str }),
    apns: channelState({ key_id: str, team_id: str, bundle_id: str, production: { type: 'boolean' } }),
  }),
  updated_at: { ...nullableIsoTime, description: 'Last change; null when no credentials were ever set' },
});

/** Every channel (docs/channels.md): passwords, tokens and keys never shown; the callback URLs to paste into the providers. */
const allChannels = closed({
  push: (pushChannels.properties as Record<string, Schema>).channels!,
  email: channelState(
    {
      smtp: closed({ host: str, port: count, security: enumOf('tls', 'starttls', 'none'), username: nullableStr, max_connections: count, rate_per_second: { type: 'number', nullable: true } }),
      from: closed({ email: str, name: nullableStr }),
      reply_to: nullableStr,
      webhooks: { ...closed({ provider: enumOf('sendgrid', 'mailgun', 'postmark'), url: { ...str, description: "Paste into the provider's webhook settings" } }), nullable: true },
    },
    { sandbox: { type: 'boolean', description: 'Not configured, and this server sends such workspaces through the sandbox (HERALD_EMAIL_PROVIDER)' } },
  ),
  sms: channelState(
    { twilio: closed({ account_sid: str, from: nullableStr, messaging_service_sid: nullableStr }), default_country: nullableStr },
    {
      sandbox: { type: 'boolean', description: 'Not configured, and this server sends such workspaces through the sandbox (HERALD_SMS_PROVIDER)' },
      status_callback_url: { ...str, description: 'Sent with every message as StatusCallback' },
      inbound_url: { ...str, description: "Paste into the Twilio number's (or Messaging Service's) incoming message webhook" },
    },
  ),
});

export const channelResponses: Record<string, RouteResponses> = {
  'PUT /workspaces/{workspaceId}/channels/push': {
    success: { 200: ok('The channels as now stored (private keys are never echoed)', { data: pushChannels }) },
    errors: {
      400: {
        codes: [],
        why: "A private key that does not import as its provider's key (FCM: PKCS#8 RSA; APNs: PKCS#8 EC P-256), APNs fields omitted with no stored credentials to keep them from (VALIDATION_ERROR, naming the field)",
      },
    },
  },
  'GET /workspaces/{workspaceId}/channels/push': { success: { 200: ok('Which channels are configured, with their non-secret identifiers', { data: pushChannels }) } },
  'PUT /workspaces/{workspaceId}/channels/email': {
    success: { 200: ok('Every channel as now stored (passwords and keys are never echoed)', { data: allChannels }) },
    errors: { 400: { codes: [], why: 'Settings incomplete once merged with the stored ones, an SMTP host on a private address, a SendGrid key that is not an ECDSA public key (VALIDATION_ERROR, naming the field)' } },
  },
  'PUT /workspaces/{workspaceId}/channels/sms': {
    success: { 200: ok('Every channel as now stored (the auth token is never echoed)', { data: allChannels }) },
    errors: { 400: { codes: [], why: 'Settings incomplete once merged with the stored ones, neither from nor messaging_service_sid, a default_country that is no country (VALIDATION_ERROR, naming the field)' } },
  },
  'GET /workspaces/{workspaceId}/channels': { success: { 200: ok('Every channel, with the callback URLs', { data: allChannels }) } },
};

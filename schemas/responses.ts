// What every route answers: for each route id of the route table and each status it can give,
// a description and the JSON Schema of the body (DECISIONS §3, §4, §10, §11; INTERFACE 2, 4, 7).
// Written from the handlers (src/handlers/*.ts), the error bodies (src/handlers/reply.ts), the front
// (src/http/front.ts: 401, 403, 404, 405, 413, 429, 503) and the actor pipeline
// (src/actors/pipeline.ts: schema 400, 501, 503). The OpenAPI document publishes these and
// the HTTP tests validate every response they receive against it, so the two cannot drift.
//
// Same subset as the request schemas (schemas/common.ts): OpenAPI 3.0 (`nullable: true`, no
// type arrays, no `const`, no `$id`). Shapes that are closed say `additionalProperties: false`.
// The named objects of COMPONENTS are defined once here and published once in the document
// (`#/components/schemas/<Name>`); everything else is inline.
import { ROUTES, errorShapeOf, type Route } from '../src/routes.js';
import type { ErrorCode } from '../src/domain/errors.js';
import type { Scope } from '../src/ratelimit/limits.js';
import type { Schema } from './common.js';
import { sendPolicy } from './workspaces.js';
import { PUSH_PLATFORMS, SUPPRESSION_TYPES } from '../src/domain/tokens.js';

export interface ResponseDoc {
  description: string;
  /** The JSON body; absent when the response has no body (204). */
  schema?: Schema;
  /** The body's media type when it is not JSON (the schema then describes that text). */
  mediaType?: string;
  /** Response headers worth documenting, name → description. */
  headers?: Record<string, string>;
}

/** Status code (as text, e.g. "201") → response. */
export type Responses = Record<string, ResponseDoc>;

// ---------------------------------------------------------------------------------------
// Building blocks

const str: Schema = { type: 'string' };
const strings: Schema = { type: 'array', items: str };
const nullableStr: Schema = { type: 'string', nullable: true };
const uuid: Schema = { type: 'string', format: 'uuid' };
const count: Schema = { type: 'integer', minimum: 0 };
const freeObject: Schema = { type: 'object', additionalProperties: true };
const emptyObject: Schema = { type: 'object', additionalProperties: false, maxProperties: 0 };
const success: Schema = { type: 'boolean', enum: [true] };
const failure: Schema = { type: 'boolean', enum: [false] };
/** ISO 8601 UTC with milliseconds (DECISIONS §8). */
const timestamp: Schema = { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$' };
const nullableTimestamp: Schema = { ...timestamp, nullable: true };
const enumOf = (...values: (string | number | boolean)[]): Schema => ({ type: typeof values[0] === 'number' ? 'integer' : typeof values[0], enum: values });

/** An object with exactly these properties; all required unless `required` says otherwise. */
function closed(properties: Record<string, Schema>, required: string[] = Object.keys(properties), extra: Schema = {}): Schema {
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false, ...extra };
}

// ---------------------------------------------------------------------------------------
// Shared resources

const personStatus = enumOf('active', 'unsubscribed', 'bounced', 'suppressed');

/** INTERFACE 2.1: the person on the key surface (GET, lists, full echoes, batch `data`). */
const keyPerson = closed(
  {
    id: uuid,
    workspace_id: uuid,
    userId: str,
    email: nullableStr,
    phone: nullableStr,
    traits: freeObject,
    status: personStatus,
    unsubscribed_at: { ...timestamp, description: 'Omitted unless set' },
    unsubscribe_reason: { type: 'string', description: 'Omitted unless set' },
    created_at: timestamp,
    updated_at: timestamp,
  },
  ['id', 'workspace_id', 'userId', 'email', 'phone', 'traits', 'status', 'created_at', 'updated_at'],
);

/** The echo for a key without `people:read`. */
const trimmedPerson = closed({ id: uuid, workspace_id: uuid, userId: str });

/** INTERFACE 2.3 with DECISIONS §10: the person on the dashboard surface. */
const dashboardPerson = closed({
  id: uuid,
  workspace_id: uuid,
  external_id: str,
  email: nullableStr,
  phone: nullableStr,
  first_name: nullableStr,
  last_name: nullableStr,
  avatar_url: nullableStr,
  timezone: nullableStr,
  locale: nullableStr,
  status: personStatus,
  unsubscribed_at: nullableTimestamp,
  unsubscribe_reason: nullableStr,
  attributes: freeObject,
  created_at: timestamp,
  updated_at: timestamp,
  first_seen_at: timestamp,
  last_seen_at: timestamp,
});

/** INTERFACE 2.5. */
const device = closed({
  id: uuid,
  workspace_id: uuid,
  person_id: uuid,
  device_token: str,
  platform: enumOf('ios', 'android', 'web'),
  device_name: nullableStr,
  device_model: nullableStr,
  os_version: nullableStr,
  app_version: nullableStr,
  is_active: { type: 'boolean' },
  is_valid: { type: 'boolean' },
  last_used_at: timestamp,
  registration_count: { type: 'integer', minimum: 1 },
  created_at: timestamp,
  updated_at: timestamp,
});

/** DECISIONS §10: first 4 + `***` + last 4 characters, or `***` for a token under 12; never the raw token. */
const maskedToken: Schema = { type: 'string', pattern: '^(\\*\\*\\*|[\\s\\S]{4}\\*\\*\\*[\\s\\S]{4})$', description: 'Masked: first 4 + `***` + last 4 characters; `***` for a token under 12 characters' };
const platform = enumOf('ios', 'android', 'web');
const skipReason = enumOf(
  'person_unsubscribed', 'person_suppressed', 'no_active_device_tokens', 'requested_device_not_active', 'device_token_suppressed', 'quiet_hours', 'frequency_cap', 'rolling_cap',
  'person_bounced', 'no_email_address', 'no_phone_number', 'address_suppressed',
);
const pushResultFields = {
  message_id: { type: 'string', description: 'The record\'s UUID; `skipped-<unix seconds>` for an immediate skip and `failed-<unix seconds>` for a recipient that names no person (neither stored)' },
  status: enumOf('sent', 'skipped', 'policy_suppressed', 'failed'),
  sent_at: { ...timestamp, description: 'When the send went to the provider, or when it was decided not to send' },
  provider: { type: 'string', description: '`sandbox`, `fcm`, `apns`, or `none` when nothing reached a provider' },
  provider_id: { type: 'string', description: "The provider's message id (first accepted device)" },
  error: { type: 'string', description: 'Prose, on every result that is not `sent`; do not branch on it' },
  skip_reason: { ...skipReason, description: 'Why nothing reached the provider (skipped, policy_suppressed); branch on this' },
};
const pushResultRequired = ['message_id', 'status', 'sent_at', 'provider'];

/** DECISIONS §3, §10, §11: a push record as the status route and the message history show it. */
const pushMessage = closed(
  {
    message_id: uuid,
    channel: enumOf('push', 'email', 'sms'),
    status: { ...enumOf('scheduled', 'sent', 'skipped', 'policy_suppressed', 'failed', 'delivered', 'bounced', 'complained'), description: 'delivered, bounced, complained: email and SMS, from the provider (DECISIONS §13)' },
    external_id: str,
    platform: { type: 'string', enum: ['ios', 'android', 'web', null], nullable: true, description: 'The platform of the first device sent to; null when no device was' },
    provider: str,
    provider_id: nullableStr,
    skip_reason: skipReason,
    error: str,
    title: { ...nullableStr, description: 'As rendered (as written while scheduled)' },
    body: { ...nullableStr, description: 'As rendered (as written while scheduled)' },
    created_at: timestamp,
    sent_at: nullableTimestamp,
    scheduled_at: timestamp,
    campaign_id: str,
    event_id: str,
    events: { type: 'array', description: "Email and SMS: the provider's events applied (delivered, bounced, opened, clicked with the URL…)", items: closed({ type: str, at: str, details: freeObject }, ['type', 'at']) },
    deliveries: {
      type: 'array',
      items: closed(
        { device_id: uuid, device_token: maskedToken, platform, status: enumOf('sent', 'failed'), provider_id: str, error: str },
        ['device_id', 'device_token', 'platform', 'status'],
      ),
    },
  },
  ['message_id', 'channel', 'status', 'external_id', 'platform', 'provider', 'provider_id', 'title', 'body', 'created_at', 'sent_at', 'deliveries'],
);

const pushPlatform = enumOf(...PUSH_PLATFORMS);
/** INTERFACE 2.9; the answer's body is the record at the top level (DECISIONS §12). */
const tokenSuppression = closed({
  success,
  id: { ...uuid, description: 'Lifts it: DELETE .../push/tokens/suppress/{id}' },
  device_token: maskedToken,
  platform: pushPlatform,
  suppression_type: enumOf(...SUPPRESSION_TYPES),
  suppressed_at: timestamp,
  already_suppressed: { type: 'boolean' },
});
/** DECISIONS §3: one validated token, in request order. */
const tokenValidation = closed(
  {
    index: count,
    device_token: maskedToken,
    platform: pushPlatform,
    valid: { type: 'boolean' },
    reason: { ...enumOf('invalid_format', 'suppressed', 'not_registered', 'inactive'), description: 'Present when not valid; the first that applies, in this order' },
  },
  ['index', 'device_token', 'platform', 'valid'],
);

const eventFields = { id: uuid, type: str, parameters: freeObject, created_at: timestamp };
/** INTERFACE 2.4: a stored event as GET /people/{id}/events returns it. */
const storedEvent = closed(eventFields);
/** GET /events/search adds the person's external id (DECISIONS §3). */
const searchedEvent = closed({ ...eventFields, external_id: str });
/** The dashboard events route adds the person's UUID (INTERFACE 2.4). */
const dashboardEvent = closed({ ...eventFields, person_id: uuid });

const keyPrefix: Schema = { type: 'string', pattern: '^(ws|pk)_live_[0-9a-f]{8}_[0-9A-Za-z]{8}$' };
const fullKey: Schema = { type: 'string', pattern: '^(ws|pk)_live_[0-9a-f]{8}_[0-9A-Za-z]{8}\\.[0-9a-f]{64}$', description: 'The full credential `<prefix>.<secret>`, shown only here' };
const keyType = enumOf('secret', 'public');
const apiKeyFields = {
  id: uuid,
  key_prefix: keyPrefix,
  name: str,
  description: str,
  permissions: strings,
  key_type: keyType,
  environment: enumOf('live', 'test'),
  expires_at: nullableTimestamp,
  ip_whitelist: strings,
  created_at: timestamp,
  last_used_at: nullableTimestamp,
};
/** INTERFACE 2.6 without the secret: list, get, update (DECISIONS §3). */
const apiKey = closed(apiKeyFields);
/** The create response: the key's metadata and its full credential. */
const newApiKey = closed({ ...apiKeyFields, key: fullKey });
/** The refresh response (DECISIONS §3). */
const refreshedApiKey = closed({ id: uuid, key_prefix: keyPrefix, key: fullKey, permissions: strings, key_type: keyType });
const apiKeyUsage = closed({
  key_id: uuid,
  total_requests: count,
  last_used_at: nullableTimestamp,
  by_day: { type: 'array', items: closed({ date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, requests: count }) },
  by_route: { type: 'object', additionalProperties: count, description: 'Route id (e.g. `POST /track`) → requests' },
});

/** Settings merge key by key. Only these two are accepted now; other keys a workspace was given before are kept and echoed. */
const workspaceSettings: Schema = {
  type: 'object',
  properties: { timezone: str, send_policy: sendPolicy },
  required: ['timezone', 'send_policy'],
  additionalProperties: true,
};
/** DECISIONS §2. */
const workspace = closed({ id: uuid, name: str, settings: workspaceSettings, created_at: timestamp, updated_at: timestamp });
/** DECISIONS §2; `created_at` is when the user joined (the owner: when the workspace was created). */
const member = closed({ workspace_id: uuid, user_id: str, role: enumOf('owner', 'admin', 'member'), created_at: timestamp });

/** A push channel (DECISIONS §9): its non-secret identifiers when configured; private keys are never shown. */
const channelState = (identifiers: Record<string, Schema>, always: Record<string, Schema> = {}): Schema => ({
  anyOf: [
    closed({ configured: enumOf(true), readable: enumOf(true), ...identifiers, ...always }),
    closed({ configured: enumOf(true), readable: enumOf(false), ...always }, undefined, { description: 'Stored, but sealed under another HERALD_SECRETS_KEY (or damaged): sends to it fail until it is set again' }),
    closed({ configured: enumOf(false), ...always }),
  ],
});
const pushChannels = closed({
  channels: closed({
    fcm: channelState({ project_id: str, client_email: str, private_key_id: nullableStr, token_uri: str }),
    apns: channelState({ key_id: str, team_id: str, bundle_id: str, production: { type: 'boolean' } }),
  }),
  updated_at: { ...nullableTimestamp, description: 'Last change; null when no credentials were ever set' },
});
/** Every channel (DECISIONS §13): passwords, tokens and keys never shown; the callback URLs to paste into the providers. */
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

const addressSuppression = closed({
  id: uuid,
  channel: enumOf('email', 'sms'),
  address: { ...str, description: 'An email address in lower case, or an E.164 number' },
  suppression_type: enumOf('hard_bounce', 'complaint', 'invalid_address', 'opt_out', 'manual'),
  reason: nullableStr,
  created_at: timestamp,
});

const campaignStatus = enumOf('draft', 'scheduled', 'active', 'paused', 'completed', 'archived', 'failed');
const triggerType = enumOf('event', 'webhook', 'schedule', 'dynamic_schedule');
/** INTERFACE 2.7; template_id only when the campaign was created with one. */
const campaign = closed(
  {
    id: uuid,
    workspace_id: uuid,
    name: str,
    status: campaignStatus,
    trigger_type: triggerType,
    trigger_config: freeObject,
    audience_config: freeObject,
    workflow_definition: { type: 'object', properties: { nodes: { type: 'array', items: freeObject } }, required: ['nodes'], additionalProperties: true },
    template_id: uuid,
    created_at: timestamp,
    updated_at: timestamp,
  },
  ['id', 'workspace_id', 'name', 'status', 'trigger_type', 'trigger_config', 'audience_config', 'workflow_definition', 'created_at', 'updated_at'],
);
/** DECISIONS §3. */
/** DECISIONS §13: `sent` counts every message that went to a provider; opened and clicked, messages with such an event. */
const messageCounters: Record<string, Schema> = Object.fromEntries(['sent', 'skipped', 'policy_suppressed', 'failed', 'delivered', 'bounced', 'complained', 'opened', 'clicked'].map((c) => [c, count]));
const campaignStats = closed({
  enrolled: { ...count, description: 'Entries of people into the campaign' },
  triggered: { ...count, description: 'Distinct runs (a matching event, a webhook call, a schedule run) that enrolled someone' },
  ...messageCounters,
  by_channel: closed({ push: closed(messageCounters), email: closed(messageCounters), sms: closed(messageCounters) }),
  last_triggered_at: { ...nullableTimestamp, description: 'The latest enrolment' },
});
/** DECISIONS §11. */
const messageTemplate = closed({
  id: uuid,
  workspace_id: uuid,
  name: str,
  channel: enumOf('push', 'email', 'sms'),
  title: nullableStr,
  body: nullableStr,
  image_url: nullableStr,
  action_url: nullableStr,
  custom_data: { ...freeObject, nullable: true },
  subject: nullableStr,
  html: nullableStr,
  text: nullableStr,
  preheader: nullableStr,
  created_at: timestamp,
  updated_at: timestamp,
});
const nodeMessage = closed(
  { title: str, body: str, image_url: str, action_url: str, custom_data: freeObject, template_id: uuid },
  [],
  { description: "The push node's own content (and the template it uses); fields it does not set are absent" },
);

const componentState: Schema = { type: 'string', pattern: '^(ok$|down: )', description: '`ok`, or `down: <why>`' };
/** GET /healthz (DECISIONS §1). */
const health = closed({
  status: enumOf('ok', 'unavailable'),
  version: str,
  components: closed({
    store: componentState,
    store_kind: enumOf('embedded-postgres', 'postgres'),
    log: componentState,
    log_kind: enumOf('jetstream', 'store'),
    analytics: { ...componentState, description: 'Reported; does not make Herald unhealthy' },
    analytics_kind: enumOf('clickhouse', 'embedded'),
    actors: { type: 'integer', minimum: 1 },
    dead_letters: {
      type: 'integer',
      minimum: 0,
      nullable: true,
      description: 'Rows in the `dead_letters` table: records a sink set aside because the store or ClickHouse refused them (not an outage). Reported; does not make Herald unhealthy. null when the store did not answer',
    },
  }),
});

// ---------------------------------------------------------------------------------------
// Error bodies (DECISIONS §4)

const fieldError = closed({ field: str, message: str });
const fieldErrors: Schema = { type: 'array', items: fieldError };

/** Key routes: a body or query failing its schema, malformed JSON, unusable input. */
const badRequest = closed({ error: enumOf('Bad Request'), message: str, code: enumOf(400), details: fieldErrors });

// One object per distinct error body, so that equal bodies are one component in the document.
const made = new Map<string, Schema>();
const once = (key: string, make: () => Schema): Schema => made.get(key) ?? (made.set(key, make()), made.get(key)!);

/** Key routes, every other error; `code` limited to what the route emits. */
function keyError(codes: readonly ErrorCode[]): Schema {
  return once(`key ${codes.join(',')}`, () => closed({ success: failure, error: str, code: enumOf(...codes), details: fieldErrors }, ['success', 'error', 'code']));
}

/** A single push send no device accepted (DECISIONS §10): the stored failed record's id in details. */
const providerError = closed({ success: failure, error: str, code: enumOf('PROVIDER_ERROR'), details: closed({ message_id: uuid }) });

/** The details of a refused permission list (api-key create and update). */
const permissionDetails = closed({ unknown: strings, disallowed: strings, allowed: strings }, ['allowed']);
const SESSION_DETAILS = {
  /** `{}` */
  none: emptyObject,
  /** The problems found, or `{}`. */
  fields: { anyOf: [fieldErrors, emptyObject] },
  /** The problems found, a refused permission list, or `{}`. */
  permissions: { anyOf: [fieldErrors, permissionDetails, emptyObject] },
};
type SessionDetails = keyof typeof SESSION_DETAILS;

/** Session routes, every error but 401/403. */
function sessionError(codes: readonly ErrorCode[], details: SessionDetails = 'none'): Schema {
  return once(`session ${codes.join(',')} ${details}`, () => closed({ success: failure, error: closed({ code: enumOf(...codes), message: str, details: SESSION_DETAILS[details] }) }));
}

/** The campaign trigger's errors but 401. */
const flatError = closed({ error: str });

const keyUnauthorized = closed({ error: enumOf('Unauthorized'), message: enumOf('Invalid or expired API key'), details: str });
const sessionUnauthorized = closed({ error: enumOf('Unauthorized'), message: enumOf('Invalid or expired session token'), details: str });
const forbidden = closed({ error: enumOf('Forbidden'), message: enumOf('Insufficient permissions') });

/** `scope` limited to the scopes that can refuse the route. */
function rateLimited(scopes: readonly Scope[]): Schema {
  return once(`429 ${scopes.join(',')}`, () => closed({ error: enumOf('Rate limit exceeded'), message: str, scope: enumOf(...scopes), gate: enumOf('local', 'shared') }));
}

const RETRY_AFTER = { 'Retry-After': 'Seconds to wait before retrying (at most 3600 on a 429; 1 on a 503)' };
/** The front's framing check, before anything else on every request (src/http/front.ts). */
const BAD_FRAMING = 'malformed framing (more than one Content-Length, a Content-Length not all digits, Transfer-Encoding together with Content-Length or other than one `chunked`; the connection is closed after the answer)';
const badFramingDoc = (schema: Schema): ResponseDoc => ({ description: `Invalid request: ${BAD_FRAMING}`, schema, headers: { Connection: '`close`' } });
const RATE_LIMIT_HEADERS = {
  ...RETRY_AFTER,
  'X-RateLimit-Limit': 'Per-minute limit of the scope that refused',
  'X-RateLimit-Remaining': 'Always 0',
  'X-RateLimit-Reset': 'Unix time (seconds) when a token is available again',
  'X-RateLimit-Scope': 'The scope that refused, as in the body',
};

/** Named schemas, published once under `#/components/schemas`. */
export const COMPONENTS: Record<string, Schema> = {
  Person: keyPerson,
  PersonIdentity: trimmedPerson,
  DashboardPerson: dashboardPerson,
  Device: device,
  TokenSuppression: tokenSuppression,
  TokenValidation: tokenValidation,
  Event: storedEvent,
  SearchedEvent: searchedEvent,
  DashboardEvent: dashboardEvent,
  ApiKey: apiKey,
  NewApiKey: newApiKey,
  RefreshedApiKey: refreshedApiKey,
  ApiKeyUsage: apiKeyUsage,
  SendPolicy: sendPolicy,
  WorkspaceSettings: workspaceSettings,
  Workspace: workspace,
  Member: member,
  PushChannels: pushChannels,
  Campaign: campaign,
  CampaignStats: campaignStats,
  MessageTemplate: messageTemplate,
  Health: health,
  FieldError: fieldError,
  BadRequest: badRequest,
  FlatError: flatError,
  KeyUnauthorized: keyUnauthorized,
  SessionUnauthorized: sessionUnauthorized,
  Forbidden: forbidden,
  // The error bodies many routes share (same objects as the routes' responses use).
  KeyPayloadTooLarge: keyError(['PAYLOAD_TOO_LARGE']),
  KeyInternalError: keyError(['INTERNAL_ERROR']),
  KeyNotImplemented: keyError(['NOT_IMPLEMENTED']),
  KeyServiceUnavailable: keyError(['SERVICE_UNAVAILABLE']),
  PersonNotFound: keyError(['PERSON_NOT_FOUND']),
  SessionValidationError: sessionError(['VALIDATION_ERROR'], 'fields'),
  SessionPayloadTooLarge: sessionError(['PAYLOAD_TOO_LARGE']),
  SessionInternalError: sessionError(['INTERNAL_ERROR']),
  SessionNotImplemented: sessionError(['NOT_IMPLEMENTED']),
  SessionServiceUnavailable: sessionError(['SERVICE_UNAVAILABLE']),
  SessionNotFound: sessionError(['NOT_FOUND']),
  IngestRateLimited: rateLimited(['ws-ingest', 'ip-public', 'edge']),
  DevicesRateLimited: rateLimited(['ws-devices', 'ip-public', 'edge']),
  ReadsRateLimited: rateLimited(['ws-reads', 'ip-public', 'edge']),
  DashboardRateLimited: rateLimited(['user-dashboard', 'ip-public', 'edge']),
  PublicRateLimited: rateLimited(['ip-public', 'edge']),
  EdgeRateLimited: rateLimited(['edge']),
};

// ---------------------------------------------------------------------------------------
// Success bodies and handler errors, route by route

const ok = (description: string, properties: Record<string, Schema>, required?: string[]): ResponseDoc => ({
  description,
  schema: closed({ success, ...properties }, required ? ['success', ...required] : undefined),
});

/** Errors a handler throws beyond the common ones: status → codes and when. */
type HandlerErrors = Partial<Record<400 | 403 | 404 | 409 | 422 | 500 | 503, { codes: ErrorCode[]; why: string }>>;

interface RouteResponses {
  /** The 2xx answers. */
  success: Responses;
  errors?: HandlerErrors;
  /** Key routes: when the handler also answers the `Bad Request` shape beyond schema and JSON failures. */
  badRequest?: string;
  /** Session routes: what `details` of a 400 holds, when more than the field list or `{}`. */
  details400?: SessionDetails;
}

const personEcho: Schema = { anyOf: [keyPerson, trimmedPerson], description: 'The full person for a key holding `people:read` (or `*`), else `{id, workspace_id, userId}`' };
const identifyErrors: HandlerErrors = {
  400: { codes: ['VALIDATION_ERROR', 'IDENTIFIER_CONFLICT', 'INVALID_TRAITS'], why: '`anonymousId` over 36 characters (VALIDATION_ERROR), disagreeing identifier aliases, trait rules' },
};
const identifyBadRequest = 'no identifier (`userId`, `user_id` or `external_id`)';
const personNotFound: HandlerErrors[404] = { codes: ['PERSON_NOT_FOUND'], why: 'No person with this userId in the workspace' };
const message = (description: string): ResponseDoc => ok(description, { message: str });
const personPage = (description: string, item: Schema): ResponseDoc => ok(description, { people: { type: 'array', items: item }, total: count, limit: count, offset: count });
const notImplemented: RouteResponses = { success: {} };
const trackStatus: Schema = { ...enumOf('processed', 'accepted_with_warnings'), description: '`accepted_with_warnings`: stored, but a campaign trigger failed on it (see `warnings`)' };
const triggerWarnings: Schema = { type: 'array', items: str, description: 'Present with `accepted_with_warnings`: what failed after the event was stored' };
const trackResult = closed(
  { index: count, event_id: uuid, person_id: uuid, event: str, status: trackStatus, warnings: triggerWarnings, person_created: { ...enumOf(true), description: 'Present when this event created the person' } },
  ['index', 'event_id', 'person_id', 'event', 'status'],
);
const trackBatchFields = { processed: count, total: count, results: { type: 'array', items: trackResult, description: 'The events stored' } };
const workspaceBody = (description: string): ResponseDoc => ok(description, { data: closed({ workspace }) });
const keyNotFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: 'No such key in the workspace (unknown, revoked, or not a UUID)' };
const dashboardPersonNotFound: HandlerErrors[404] = { codes: ['PERSON_NOT_FOUND'], why: 'No person with this UUID in the workspace' };

const KEYS = '/workspaces/{workspaceId}/api-keys';
const PUSH = '/workspaces/{workspaceId}/push';
const TEMPLATES = '/workspaces/{workspaceId}/templates';
const campaignNotFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: "No such campaign in the workspace (unknown, another workspace's, or not a UUID)" };
const templateNotFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: "No such template in the workspace (unknown, another workspace's, or not a UUID)" };
const templateBody = (description: string): ResponseDoc => ok(description, { data: closed({ template: messageTemplate }) });
const TEMPLATE_PARSE = 'a content field that is not a valid Liquid template (details name it)';

/** INTERFACE 4.6: a fresh trigger, and the replay of one with the same Idempotency-Key. */
const triggerFields = {
  campaign_id: uuid,
  triggered_at: { ...timestamp, description: 'When the trigger was made (on a replay, the first trigger\'s time)' },
  people_queued: { ...count, description: 'People enrolled by the trigger; 0 when nobody matched; the ceiling when truncated' },
  audience_truncated: { ...enumOf(true), description: 'Present when more people matched than HERALD_TRIGGER_AUDIENCE_CEILING: the others were not triggered' },
  idempotency_key: { type: 'string', description: 'The Idempotency-Key sent, echoed; absent without one' },
  message: { type: 'string', description: 'Human-readable; a truncation warning is appended when truncated' },
};
const triggerRequired = ['success', 'campaign_id', 'status', 'triggered_at', 'people_queued', 'message'];
const triggerAccepted: ResponseDoc = {
  description: 'Fresh (`processing`): the audience is enrolled and its pushes are sent asynchronously. Replay (`completed`, `duplicate`): the Idempotency-Key was used for this campaign within 24 hours with the same trigger_data, finished; nothing was sent again',
  schema: {
    anyOf: [
      closed({ success, status: enumOf('processing'), ...triggerFields }, triggerRequired),
      closed({ success, status: enumOf('completed'), duplicate: enumOf(true), ...triggerFields }, [...triggerRequired, 'duplicate']),
    ],
  },
};

const SPECIFIC: Record<string, RouteResponses> = {
  'GET /openapi.json': {
    success: { 200: { description: 'This OpenAPI 3.0 document', schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: str, info: freeObject, paths: freeObject }, additionalProperties: true } } },
  },

  'POST /identify': {
    success: { 200: ok('The person, created or merged into', { person: personEcho }) },
    errors: identifyErrors,
    badRequest: identifyBadRequest,
  },
  'POST /track': {
    success: {
      201: ok('The event is durable on the Log', {
        data: closed(
          {
            event_id: uuid,
            person_id: uuid,
            event: str,
            parameters: freeObject,
            timestamp,
            processed_at: timestamp,
            status: trackStatus,
            warnings: triggerWarnings,
            person_created: { ...enumOf(true), description: 'Present when the external_id was unknown and a person was created' },
          },
          ['event_id', 'person_id', 'event', 'parameters', 'timestamp', 'processed_at', 'status'],
        ),
      }),
    },
    errors: { 400: { codes: ['IDENTIFIER_CONFLICT'], why: 'Disagreeing identifier aliases' } },
    badRequest: "no identifier, a `timestamp` outside 1970-01-01T00:00:00Z..2106-02-07T06:28:15.999Z or naming no real instant (a leap second), `parameters` nested deeper than 10 levels, or events the Log's store refuses or cannot serialize (nothing recorded)",
  },
  'POST /track/batch': {
    success: {
      201: ok('Every event is durable on the Log', trackBatchFields),
      207: {
        description: 'Some entries failed; the others are durable on the Log',
        schema: closed({ success: failure, ...trackBatchFields, errors: { type: 'array', minItems: 1, items: closed({ index: count, error: str }) } }),
      },
    },
    errors: { 400: { codes: ['BATCH_TOO_LARGE'], why: 'More than 100 events' } },
    badRequest: "events the Log's store refuses or cannot serialize (nothing recorded)",
  },
  'POST /people': {
    success: { 201: ok('The person, created or merged into', { person: personEcho }) },
    errors: identifyErrors,
    badRequest: identifyBadRequest,
  },
  'POST /people/upsert': {
    success: { 201: ok('The person, created or merged into', { person: personEcho }) },
    errors: identifyErrors,
    badRequest: identifyBadRequest,
  },
  'POST /people/batch': {
    success: {
      200: ok('One result per entry, in order; a failed entry fails alone', {
        results: {
          type: 'array',
          items: {
            anyOf: [
              closed({ type: enumOf('identify'), index: count, success, data: keyPerson }),
              closed({ type: enumOf('identify'), index: count, success: failure, error: str }),
            ],
          },
        },
        total: count,
      }),
    },
    errors: { 400: { codes: ['VALIDATION_ERROR', 'BATCH_TOO_LARGE'], why: 'A `track` array (VALIDATION_ERROR), more than 1,000 entries' } },
  },
  'GET /people': { success: { 200: personPage('A page of people, oldest first', keyPerson) } },
  'GET /people/search': { success: { 200: personPage('A page of matching people, oldest first', keyPerson) } },
  'GET /people/{id}': {
    success: { 200: ok('The person', { person: keyPerson }) },
    errors: { 404: personNotFound },
  },
  'PUT /people/{id}': {
    success: { 200: message('Traits merged') },
    errors: { 400: { codes: ['INVALID_TRAITS'], why: 'Trait rules' }, 404: personNotFound },
  },
  'DELETE /people/{id}': {
    success: { 200: message('The person, their events and devices are deleted') },
    errors: { 404: personNotFound },
  },
  'GET /people/{id}/events': {
    success: { 200: ok('The newest events of the person', { person_id: { type: 'string', description: 'The external id, echoed' }, events: { type: 'array', items: storedEvent }, total: count }) },
    errors: { 404: personNotFound },
  },
  'GET /events/search': {
    success: { 200: ok('The newest events of that name', { events: { type: 'array', items: searchedEvent }, total: count, limit: count }) },
  },

  'POST /people/{id}/devices': {
    success: {
      201: ok('A new device record', { device_id: uuid, message: str, person_created: { ...enumOf(true), description: 'Present when this call created the person' } }, ['device_id', 'message']),
      200: ok('The token was registered already: updated, re-activated, moved to this person', { device_id: uuid, message: str, person_created: enumOf(true) }, ['device_id', 'message']),
    },
    badRequest: '`person_id` or `workspace_id` in the body, a browser subscription object as the token, a userId over 255 characters',
  },
  'GET /people/{id}/devices': {
    success: { 200: ok("The person's devices, most recently used first", { devices: { type: 'array', items: device }, count }) },
    errors: { 404: personNotFound },
  },
  'DELETE /people/{id}/devices': {
    success: { 200: message('The device is inactive') },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'This person has no such token' } },
    badRequest: 'no token, in the body or as `?token=`',
  },

  [`POST ${PUSH}/send`]: {
    success: {
      200: ok('Sent (to at least one device), skipped (nothing stored) or policy_suppressed (stored)', pushResultFields, pushResultRequired),
      202: ok('Held until scheduled_at; sent once then, with the checks of that moment', { message_id: uuid, status: enumOf('scheduled'), scheduled_at: timestamp }),
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
        summary: closed({ total: count, sent: count, failed: count, skipped: count, policy_suppressed: count, processed: timestamp }),
      }),
    },
    errors: { 400: { codes: ['VALIDATION_ERROR', 'BATCH_TOO_LARGE'], why: 'Neither title nor body, a template that does not parse (VALIDATION_ERROR); more than 1,000 recipients' } },
  },
  [`GET ${PUSH}/status/{messageId}`]: {
    success: { 200: ok('The push record with its deliveries', { message: pushMessage }) },
    errors: { 404: { codes: ['NOT_FOUND'], why: "No such record in this workspace (unknown, another workspace's, a synthetic `skipped-…` id)" } },
  },
  [`POST ${PUSH}/tokens/validate`]: {
    success: {
      200: ok('One result per token, in request order', {
        results: { type: 'array', items: tokenValidation },
        summary: closed({ total: count, valid: count, invalid: count }),
      }),
    },
    errors: { 400: { codes: ['BATCH_TOO_LARGE'], why: 'More than 1,000 tokens' } },
  },
  [`POST ${PUSH}/tokens/suppress`]: {
    success: {
      201: { description: 'A new suppression: later sends to the token are skipped (`device_token_suppressed`)', schema: { allOf: [tokenSuppression, { properties: { already_suppressed: enumOf(false) } }] } },
      200: { description: 'The token was suppressed under this type already: that suppression', schema: { allOf: [tokenSuppression, { properties: { already_suppressed: enumOf(true) } }] } },
    },
    errors: { 400: { codes: ['INVALID_SUPPRESSION_TYPE'], why: 'A `suppression_type` other than the four (the message lists them)' } },
    badRequest: 'a browser subscription object as the token, a `source_push_id` naming no push record of this workspace',
  },
  [`DELETE ${PUSH}/tokens/suppress/{id}`]: {
    success: { 200: ok('The suppression is lifted', { message: str, id: uuid }) },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'No such suppression in this workspace (unknown, another workspace\'s, or not a UUID)' } },
  },
  [`GET ${PUSH}/history`]: notImplemented,
  [`GET ${PUSH}/analytics`]: notImplemented,
  'POST /campaigns/{campaignId}/trigger': {
    success: { 202: triggerAccepted },
    errors: {
      400: { codes: [], why: 'The campaign is not a webhook campaign, or not active (the message names its status); an Idempotency-Key sent empty or twice, with a character outside printable ASCII, or over 255 bytes; a body field other than workspace_id and trigger_data' },
      403: { codes: [], why: "workspace_id in the body is not the key's workspace" },
      404: campaignNotFound,
      409: { codes: ['TRIGGER_IN_PROGRESS'], why: 'A trigger with this Idempotency-Key (same trigger_data) is still in progress; nothing was sent again' },
      422: { codes: ['IDEMPOTENCY_KEY_REUSED'], why: 'This Idempotency-Key was used for the campaign within 24 hours with different trigger_data; nothing was sent' },
      503: { codes: [], why: 'An Idempotency-Key was sent and the store of claims (NATS KV with NATS_URL, else PostgreSQL) is unavailable; nothing was sent' },
    },
  },

  'POST /workspaces': { success: { 201: workspaceBody('The workspace; the caller is its owner') } },
  'GET /workspaces': { success: { 200: ok("The caller's workspaces", { workspaces: { type: 'array', items: workspace }, total: count }) } },
  'GET /workspaces/{workspaceId}': { success: { 200: workspaceBody('The workspace') } },
  'PUT /workspaces/{workspaceId}': {
    success: { 200: workspaceBody('The updated workspace') },
    errors: { 400: { codes: ['INVALID_SEND_POLICY'], why: 'A timezone that is not an IANA name (VALIDATION_ERROR), a malformed send policy' } },
  },
  'GET /workspaces/{workspaceId}/members': {
    success: { 200: ok('The members: the owner first, then in the order they were added', { members: { type: 'array', items: member }, total: count }) },
  },
  'POST /workspaces/{workspaceId}/members': {
    success: {
      201: ok('A new member', { data: closed({ member }) }),
      200: ok("An existing member's role changed", { data: closed({ member }) }),
    },
    errors: { 400: { codes: [], why: "The owner's role cannot be changed (VALIDATION_ERROR)" } },
  },
  'DELETE /workspaces/{workspaceId}/members/{userId}': {
    success: { 200: message('The member is removed') },
    errors: { 400: { codes: [], why: 'The owner cannot be removed (VALIDATION_ERROR)' }, 404: { codes: ['NOT_FOUND'], why: 'Not a member' } },
  },
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
    errors: { 400: { codes: [], why: 'Settings incomplete once merged with the stored ones, neither from nor messaging_service_sid (VALIDATION_ERROR, naming the field)' } },
  },
  'GET /u/{token}': {
    success: { 200: { description: 'An HTML page naming the workspace and the masked address, with a button that POSTs; nothing changes', schema: str, mediaType: 'text/html' } },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'A token Herald did not make (an HTML page); nothing changes' } },
  },
  'POST /u/{token}': {
    success: { 200: { description: 'Unsubscribed (repeats answer the same): an HTML page, never a redirect', schema: str, mediaType: 'text/html' } },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'A token Herald did not make, or its person is gone (an HTML page); nothing changes' } },
  },
  'POST /webhooks/email/{workspaceId}': {
    success: { 200: ok('Verified; every event applied once', { applied: count, duplicates: count, unmatched: count }) },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'No such workspace, or its email channel has no callback provider configured' } },
  },
  'POST /webhooks/sms/{workspaceId}/status': {
    success: { 200: ok('Verified; the status applied once', { applied: count, duplicates: count, unmatched: count }) },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'No such workspace, or no SMS channel configured' } },
  },
  'POST /webhooks/sms/{workspaceId}/inbound': {
    success: { 200: { description: 'Verified and applied: an empty TwiML answer', schema: str, mediaType: 'text/xml' } },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'No such workspace, or no SMS channel configured' } },
  },
  'GET /workspaces/{workspaceId}/suppressions': { success: { 200: ok('The suppressions, newest first', { suppressions: { type: 'array', items: addressSuppression }, total: count }) } },
  'POST /workspaces/{workspaceId}/suppressions': {
    success: { 201: ok('The suppression (the existing one when the address was already suppressed by hand)', { suppression: addressSuppression }) },
    errors: { 400: { codes: [], why: 'An SMS address that is not a phone number (VALIDATION_ERROR)' } },
  },
  'DELETE /workspaces/{workspaceId}/suppressions/{suppressionId}': { success: { 200: message('Lifted') }, errors: { 404: { codes: ['NOT_FOUND'], why: 'No such suppression in the workspace' } } },
  'GET /workspaces/{workspaceId}/channels': { success: { 200: ok('Every channel, with the callback URLs', { data: allChannels }) } },

  [`POST ${KEYS}`]: {
    success: { 201: ok('The key with its full credential, shown once', { api_key: newApiKey, warning: str }) },
    errors: { 400: { codes: ['PUBLIC_KEY_PERMISSION'], why: 'Unknown permission names, none for a secret key, `expires_at` not in the future (VALIDATION_ERROR); a public key asking beyond its set' } },
    details400: 'permissions',
  },
  [`GET ${KEYS}`]: { success: { 200: ok('The live keys, newest first', { api_keys: { type: 'array', items: apiKey }, total: count }) } },
  [`GET ${KEYS}/{keyId}`]: { success: { 200: ok('The key', { api_key: apiKey }) }, errors: { 404: keyNotFound } },
  [`PUT ${KEYS}/{keyId}`]: {
    success: { 200: ok('The updated key', { api_key: apiKey, warning: { type: 'string', description: 'Present when ip_whitelist holds entries that never match' } }, ['api_key']) },
    errors: { 400: { codes: ['PUBLIC_KEY_PERMISSION'], why: 'Unknown permission names, `expires_at` not in the future (VALIDATION_ERROR); a public key asking beyond its set' }, 404: keyNotFound },
    details400: 'permissions',
  },
  [`DELETE ${KEYS}/{keyId}`]: { success: { 200: message('Revoked; the key stops authenticating at once') }, errors: { 404: keyNotFound } },
  [`POST ${KEYS}/{keyId}/refresh`]: {
    success: { 200: ok('The new credential; the old secret stops at once', { api_key: refreshedApiKey, warning: str }) },
    errors: { 404: keyNotFound },
  },
  [`GET ${KEYS}/{keyId}/usage`]: { success: { 200: ok('Usage of the key (lags by up to 1 s)', { usage: apiKeyUsage }) }, errors: { 404: keyNotFound } },

  'POST /campaigns': {
    success: { 201: ok('The campaign, a draft', { data: closed({ campaign, message: str, warnings: { type: 'array', items: str, description: 'An email node whose html has no {{ unsubscribe_url }} (DECISIONS §13)' } }) }) },
    errors: { 400: { codes: ['INVALID_TRIGGER_CONFIG'], why: 'trigger_config.event_name (replaced by event_names); a template_id naming no template of the workspace, repeated node ids, a delay node without minutes (VALIDATION_ERROR)' } },
  },
  'GET /campaigns': {
    success: { 200: ok('A page of campaigns, newest first; total counts every match', { campaigns: { type: 'array', items: campaign }, total: count, limit: count, offset: count }) },
  },
  'GET /campaigns/{campaignId}': {
    success: { 200: ok('The campaign and its stats', { data: closed({ campaign, stats: campaignStats, message: str }) }) },
    errors: { 404: campaignNotFound },
  },
  'PUT /campaigns/{campaignId}': {
    success: { 200: ok('Updated (a schedule campaign activated with a future send_at is `scheduled`)', { message: enumOf('Campaign updated'), data: closed({ campaign }), warnings: { type: 'array', items: str, description: 'Present when an email node\'s html has no {{ unsubscribe_url }} (DECISIONS §13)' } }, ['message', 'data']) },
    errors: {
      400: { codes: ['ACTIVATION_FAILED', 'INVALID_TRIGGER_CONFIG'], why: 'Status scheduled or failed (VALIDATION_ERROR: the system sets them); going or staying live against the activation rules (ACTIVATION_FAILED, details list every problem); trigger_config.event_name' },
      404: campaignNotFound,
    },
  },
  'DELETE /campaigns/{campaignId}': {
    success: { 200: message('Deleted with its enrolments; push records stay') },
    errors: { 404: campaignNotFound, 409: { codes: ['CAMPAIGN_ACTIVE'], why: 'The campaign is active or scheduled: pause it first' } },
  },
  'PUT /workspaces/{workspaceId}/campaigns/{campaignId}/node-messages/{nodeId}': {
    success: { 200: ok("The push node's content now", { data: closed({ node_id: str, message: nodeMessage }) }) },
    errors: {
      400: { codes: ['ACTIVATION_FAILED'], why: `The node is not a push node (VALIDATION_ERROR), ${TEMPLATE_PARSE}; a live campaign left failing the activation rules` },
      404: { codes: ['NOT_FOUND'], why: "No such campaign in the workspace, or no such node in its workflow" },
    },
  },
  [`POST ${TEMPLATES}`]: { success: { 201: templateBody('The template') }, errors: { 400: { codes: [], why: TEMPLATE_PARSE } } },
  [`GET ${TEMPLATES}`]: { success: { 200: ok('The templates, newest first', { templates: { type: 'array', items: messageTemplate }, total: count }) } },
  [`GET ${TEMPLATES}/{templateId}`]: { success: { 200: templateBody('The template') }, errors: { 404: templateNotFound } },
  [`PUT ${TEMPLATES}/{templateId}`]: { success: { 200: templateBody('The updated template') }, errors: { 400: { codes: [], why: TEMPLATE_PARSE }, 404: templateNotFound } },
  [`DELETE ${TEMPLATES}/{templateId}`]: {
    success: { 200: message('Deleted') },
    errors: { 404: templateNotFound, 409: { codes: ['TEMPLATE_IN_USE'], why: 'An active or scheduled campaign uses the template' } },
  },
  'GET /workspaces/{workspaceId}/people': { success: { 200: personPage('A page of people, oldest first', dashboardPerson) } },
  'GET /workspaces/{workspaceId}/people/stats': {
    success: { 200: ok('People statistics', { total: count, active: count, unsubscribed: count, bounced: count, suppressed: count, recent: { ...count, description: 'Created in the last 7 days' } }) },
  },
  'GET /workspaces/{workspaceId}/people/{personId}/events': {
    success: { 200: ok('The newest events of the person', { person_id: uuid, events: { type: 'array', items: dashboardEvent }, total: count }) },
    errors: { 404: dashboardPersonNotFound },
  },
  'GET /workspaces/{workspaceId}/people/{personId}/messages': {
    success: { 200: ok("The person's push records, newest first", { messages: { type: 'array', items: pushMessage }, total: count }) },
    errors: { 404: dashboardPersonNotFound },
  },
  'GET /workspaces/{workspaceId}/people/{personId}': {
    success: { 200: ok('The person and their devices, most recently used first', { data: closed({ person: dashboardPerson, devices: { type: 'array', items: device } }) }) },
    errors: { 404: dashboardPersonNotFound },
  },
  'PATCH /workspaces/{workspaceId}/people/{personId}': {
    success: { 200: ok('The person with the new consent state', { data: closed({ person: dashboardPerson }) }) },
    errors: { 404: dashboardPersonNotFound },
  },
};

// ---------------------------------------------------------------------------------------
// The answers every route shares, by kind of route

function responsesOf(route: Route): Responses {
  const spec = SPECIFIC[route.id];
  if (!spec) throw new Error(`schemas/responses.ts: no responses for ${route.id}`);
  const shape = errorShapeOf(route);
  const error = (codes: ErrorCode[], details?: SessionDetails): Schema => (shape === 'flat' ? flatError : shape === 'session' ? sessionError(codes, details) : keyError(codes));
  const served = !route.notImplemented;
  const out: Responses = { ...spec.success };

  // 400: the front's framing check (every request), the pipeline's JSON, schema and path
  // checks (every served route: any request may carry a malformed body), the session routes'
  // missing X-Workspace-ID, and the handler's own.
  const own = spec.errors?.[400];
  const why = [
    served && (route.body || route.query ? `${[route.body && 'body', route.query && 'query'].filter(Boolean).join(' or ')} failing its schema, malformed JSON or not UTF-8` : 'malformed JSON body or one not UTF-8 (any body sent is parsed)'),
    served && `${route.path.includes('{') ? 'a path parameter, ' : ''}a query parameter or the body holding U+0000 or an unpaired surrogate`,
    served && 'a body nesting arrays and objects deeper than 32 levels',
    route.auth === 'session' && route.workspace === 'header' && 'no X-Workspace-ID header (or workspace_id query parameter)',
    spec.badRequest,
    own?.why && own.why[0]!.toLowerCase() + own.why.slice(1),
    BAD_FRAMING,
  ].filter(Boolean);
  const description = `Invalid request: ${why.join('; ')}`;
  if (shape === 'key') {
    out['400'] = { description, schema: own && own.codes.length > 0 ? { anyOf: [badRequest, keyError(own.codes)] } : badRequest };
  } else {
    out['400'] = { description, schema: error(['VALIDATION_ERROR', ...(own?.codes ?? [])], spec.details400 ?? 'fields') };
  }
  if (route.auth === 'none' && route.path.startsWith('/webhooks/')) {
    out['401'] = { description: "Missing or bad provider signature (or basic auth): nothing was read or recorded", schema: flatError };
  }
  if (route.auth === 'key' || route.auth === 'session') {
    out['401'] = {
      description: 'Missing, malformed, unknown, revoked or expired credential',
      schema: route.auth === 'session' ? sessionUnauthorized : keyUnauthorized,
    };
    out['403'] =
      route.auth === 'session'
        ? { description: 'An API key on a session route, not a member of the workspace (or no such workspace), or a role that may not do this', schema: forbidden }
        : {
            description: `The key lacks ${route.permissions.join(' or ')}${route.path.includes('{workspaceId}') ? ', the workspace in the path is not the key\'s' : ''}, or the client IP is outside an enforced allowlist${spec.errors?.[403] ? `; ${spec.errors[403].why}` : ''}`,
            schema: shape === 'flat' ? flatError : forbidden,
          };
  }
  const own404 = spec.errors?.[404];
  if (own404) out['404'] = { description: own404.why, schema: error(own404.codes) };
  for (const status of [409, 422] as const) {
    const own = spec.errors?.[status];
    if (own) out[status] = { description: own.why, schema: error(own.codes) };
  }
  const tracks = route.id === 'POST /track' || route.id === 'POST /track/batch';
  out['413'] = {
    description: `Body over ${route.maxBody === undefined ? 'HERALD_MAX_BODY_BYTES (default 1 MB)' : `${route.maxBody} bytes`}, refused before it is read${tracks ? "; or (JetStream Log) the request's events are larger than one Log message (NATS max_payload), nothing recorded" : ''}`,
    schema: error(['PAYLOAD_TOO_LARGE']),
  };
  const scopes: Scope[] = route.auth === 'key' ? [route.scope, 'ip-public', 'edge'] : route.auth === 'session' ? ['user-dashboard', 'ip-public', 'edge'] : ['ip-public', 'edge'];
  out['429'] = {
    description: `Rate limit exceeded (${scopes.join(', ')}${route.auth === 'public' ? '' : '; ip-public counts failed authentications'}${route.auth === 'key' ? ', and a key not in the cache is looked up only with an ip-public token' : ''})`,
    schema: rateLimited(scopes),
    headers: RATE_LIMIT_HEADERS,
  };
  const own500 = spec.errors?.[500];
  out['500'] = own500
    ? { description: `${own500.why}; or an unexpected failure (INTERNAL_ERROR, logged)`, schema: { anyOf: [error(['INTERNAL_ERROR']), providerError] } }
    : { description: 'Unexpected failure (logged)', schema: error(['INTERNAL_ERROR']) };
  if (route.notImplemented) out['501'] = { description: route.notImplemented, schema: error(['NOT_IMPLEMENTED']) };
  if (route.auth !== 'public') {
    out['503'] = {
      description: `An actor restarted or did not answer in time, or Herald is shutting down${tracks ? '; the event Log cannot take the append (nothing was recorded)' : ''}${spec.errors?.[503] ? `; ${spec.errors[503].why}` : ''}`,
      schema: error(['SERVICE_UNAVAILABLE']),
      headers: RETRY_AFTER,
    };
  }
  return out;
}

/** Route id → every status it can answer. */
export const RESPONSES: Record<string, Responses> = Object.fromEntries(ROUTES.map((r) => [r.id, responsesOf(r)]));
for (const id of Object.keys(SPECIFIC)) if (!RESPONSES[id]) throw new Error(`schemas/responses.ts: ${id} is not in the route table`);

/** GET /healthz, outside /api/v1; the edge budget applies before it. */
export const HEALTH_RESPONSES: Responses = {
  200: { description: 'The store and the Log are up', schema: { allOf: [health, { properties: { status: enumOf('ok') } }] } },
  503: { description: 'The store or the Log is down (analytics being down does not count)', schema: { allOf: [health, { properties: { status: enumOf('unavailable') } }] } },
  429: { description: 'Rate limit exceeded (edge)', schema: rateLimited(['edge']), headers: RATE_LIMIT_HEADERS },
  400: badFramingDoc(badRequest),
};

/** OPTIONS on a path with a route browsers may call: the CORS preflight, answered by the front. */
export const PREFLIGHT_RESPONSES: Responses = {
  204: {
    description: 'CORS preflight: no body',
    headers: {
      'Access-Control-Allow-Origin': '`*`',
      'Access-Control-Allow-Methods': 'The methods of this path, and OPTIONS',
      'Access-Control-Allow-Headers': '`Authorization, Content-Type`',
    },
  },
  429: { description: 'Rate limit exceeded (edge)', schema: rateLimited(['edge']), headers: RATE_LIMIT_HEADERS },
  400: badFramingDoc(badRequest),
};

/**
 * What any request may get whatever it targets, published under `#/components/responses`:
 * a path no route has, a method the path does not serve, the per-IP backstop before routing.
 */
export const UNROUTED_RESPONSES: Record<'UnknownRoute' | 'MethodNotAllowed' | 'EdgeRateLimited' | 'BadFraming', ResponseDoc> = {
  UnknownRoute: { description: 'No route has this path (any method): 404 NOT_FOUND in the key-route shape', schema: keyError(['NOT_FOUND']) },
  MethodNotAllowed: {
    description: "The path exists under other methods (listed in `Allow`): 405 METHOD_NOT_ALLOWED in the error shape of the path's routes",
    schema: { anyOf: [keyError(['METHOD_NOT_ALLOWED']), sessionError(['METHOD_NOT_ALLOWED']), flatError] },
    headers: { Allow: 'The methods this path serves' },
  },
  EdgeRateLimited: { description: 'The per-IP backstop (edge), before routing', schema: rateLimited(['edge']), headers: RATE_LIMIT_HEADERS },
  BadFraming: badFramingDoc({ anyOf: [badRequest, sessionError(['VALIDATION_ERROR'], 'fields'), flatError], description: "In the input-error shape of the path's routes (the key routes' for a path no route has)" }),
};

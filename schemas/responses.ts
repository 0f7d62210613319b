// What routes answer: for each route id of the route table, its success bodies and its handler's
// own errors, and the error bodies and headers routes share (docs/channels.md; README, Request
// bodies, Errors and Routes), written from the handlers (src/handlers/*.ts), the error bodies
// (src/handlers/reply.ts), the front (src/http/front.ts) and the actor pipeline
// (src/actors/pipeline.ts). src/http/route-responses.ts adds to each route what every route of
// its kind answers (401, 403, 413, 429, 503); the OpenAPI document publishes the result and the
// HTTP tests validate every response they receive against it, so the two cannot drift.
//
// Same subset as the request schemas (schemas/common.ts): OpenAPI 3.0 (`nullable: true`, no
// type arrays, no `const`, no `$id`). Shapes that are closed say `additionalProperties: false`.
// Each resource's module (schemas/people.ts, …) describes what its routes answer, beside their
// requests, with the building blocks of schemas/response-parts.ts; here are the error bodies
// every route shares and the document's own. The named objects of COMPONENTS are published once
// in the document (`#/components/schemas/<Name>`); everything else is inline.
import type { ErrorCode } from '../src/domain/errors.js';
import type { Scope } from '../src/domain/rate-limit-scopes.js';
import type { Schema } from './common.js';
import { closed, emptyObject, enumOf, failure, freeObject, str, strings, uuidText, type ResponseDoc, type Responses, type RouteResponses, type SessionDetails } from './response-parts.js';
import { dashboardPerson, keyPerson, peopleResponses, trimmedPerson } from './people.js';
import { dashboardEvent, eventResponses, searchedEvent, storedEvent, workspaceEvent } from './events.js';
import { device, deviceResponses } from './devices.js';
import { pushSendResponses } from './push-send.js';
import { listedSuppression, pushTokenResponses, tokenSuppression, tokenValidation } from './push.js';
import { apiKey, apiKeyResponses, apiKeyUsage, newApiKey, refreshedApiKey } from './api-keys.js';
import { member, sendPolicy, workspace, workspaceResponses, workspaceSettings } from './workspaces.js';
import { channelResponses, pushChannels } from './channels.js';
import { messageChannelResponses } from './message-channels.js';
import { campaign, campaignResponses, campaignStats, messageTemplate } from './campaigns.js';
import { campaignAnalyticsResponses } from './campaign-analytics.js';
import { authoringResponses } from './authoring.js';
import { sourceAccepted, sourceError, sourceResponses } from './segment-source.js';
import { webhookResponses } from './webhooks.js';
import { audienceResponses } from './audiences.js';
import { topicResponses } from './topics.js';
import { segmentResponses } from './segments.js';
import { analyticsResponses } from './analytics.js';
import { trackingResponses } from './tracking.js';

export type { ResponseDoc, Responses } from './response-parts.js';

const componentState: Schema = { type: 'string', pattern: '^(ok$|down: )', description: '`ok`, or `down: <why>`' };
/** GET /healthz (README, Running it). */
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
// Error bodies (README, Errors)

const fieldError = closed({ field: str, message: str });
const fieldErrors: Schema = { type: 'array', items: fieldError };

/** Key routes: a body or query failing its schema, malformed JSON, unusable input. */
export const badRequest = closed({ error: enumOf('Bad Request'), message: str, code: enumOf(400), details: fieldErrors });

// One object per distinct error body, so that equal bodies are one component in the document.
const made = new Map<string, Schema>();
const once = (key: string, make: () => Schema): Schema => made.get(key) ?? (made.set(key, make()), made.get(key)!);

/** Key routes, every other error; `code` limited to what the route emits. */
export function keyError(codes: readonly ErrorCode[]): Schema {
  return once(`key ${codes.join(',')}`, () => closed({ success: failure, error: str, code: enumOf(...codes), details: fieldErrors }, ['success', 'error', 'code']));
}

/** A single push send no device accepted (docs/channels.md): the stored failed record's id in details. */
export const providerError = closed({ success: failure, error: str, code: enumOf('PROVIDER_ERROR'), details: closed({ message_id: uuidText }) });

/** The details of a refused permission list (api-key create and update). */
const permissionDetails = closed({ unknown: strings, disallowed: strings, allowed: strings }, ['allowed']);
const SESSION_DETAILS: Record<SessionDetails, Schema> = {
  /** `{}` */
  none: emptyObject,
  /** The problems found, or `{}`. */
  fields: { anyOf: [fieldErrors, emptyObject] },
  /** The problems found, a refused permission list, or `{}`. */
  permissions: { anyOf: [fieldErrors, permissionDetails, emptyObject] },
};

/** Session routes, every error but 401/403. */
export function sessionError(codes: readonly ErrorCode[], details: SessionDetails = 'none'): Schema {
  return once(`session ${codes.join(',')} ${details}`, () => closed({ success: failure, error: closed({ code: enumOf(...codes), message: str, details: SESSION_DETAILS[details] }) }));
}

/** The campaign trigger's errors but 401. */
export const flatError = closed({ error: str });

export const keyUnauthorized = closed({ error: enumOf('Unauthorized'), message: enumOf('Invalid or expired API key'), details: str });
export const sessionUnauthorized = closed({ error: enumOf('Unauthorized'), message: enumOf('Invalid or expired session token'), details: str });
export const forbidden = closed({ error: enumOf('Forbidden'), message: enumOf('Insufficient permissions') });

/** `scope` limited to the scopes that can refuse the route. */
export function rateLimited(scopes: readonly Scope[]): Schema {
  return once(`429 ${scopes.join(',')}`, () => closed({ error: enumOf('Rate limit exceeded'), message: str, scope: enumOf(...scopes), gate: enumOf('local', 'shared') }));
}

export const RETRY_AFTER = { 'Retry-After': 'Seconds to wait before retrying (at most 3600 on a 429; 1 on a 503)' };
/** The front's framing check, before anything else on every request (src/http/front.ts). */
export const BAD_FRAMING = 'malformed framing (more than one Content-Length, a Content-Length not all digits, Transfer-Encoding together with Content-Length or other than one `chunked`; the connection is closed after the answer)';
const badFramingDoc = (schema: Schema): ResponseDoc => ({ description: `Invalid request: ${BAD_FRAMING}`, schema, headers: { Connection: '`close`' } });
export const RATE_LIMIT_HEADERS = {
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
  WorkspaceEvent: workspaceEvent,
  ListedSuppression: listedSuppression,
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
  SourceAccepted: sourceAccepted,
  SourceError: sourceError,
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
// Success bodies and handler errors, route by route: each resource's module, and this document's own

/** Route id → its success bodies and the handler's own errors (src/http/route-responses.ts adds what every route shares). */
export const ROUTE_RESPONSES: Record<string, RouteResponses> = {
  'GET /openapi.json': {
    success: { 200: { description: 'This OpenAPI 3.0 document', schema: { type: 'object', required: ['openapi', 'info', 'paths'], properties: { openapi: str, info: freeObject, paths: freeObject }, additionalProperties: true } } },
  },
  ...peopleResponses,
  ...eventResponses,
  ...deviceResponses,
  ...pushSendResponses,
  ...pushTokenResponses,
  ...campaignResponses,
  ...campaignAnalyticsResponses,
  ...authoringResponses,
  ...workspaceResponses,
  ...channelResponses,
  ...messageChannelResponses,
  ...trackingResponses,
  ...apiKeyResponses,
  ...sourceResponses,
  ...webhookResponses,
  ...audienceResponses,
  ...topicResponses,
  ...segmentResponses,
  ...analyticsResponses,
};

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
    schema: { anyOf: [keyError(['METHOD_NOT_ALLOWED']), sessionError(['METHOD_NOT_ALLOWED']), flatError, sourceError] },
    headers: { Allow: 'The methods this path serves' },
  },
  EdgeRateLimited: { description: 'The per-IP backstop (edge), before routing', schema: rateLimited(['edge']), headers: RATE_LIMIT_HEADERS },
  BadFraming: badFramingDoc({ anyOf: [badRequest, sessionError(['VALIDATION_ERROR'], 'fields'), flatError, sourceError], description: "In the input-error shape of the path's routes (the key routes' for a path no route has)" }),
};

// Outbound webhook endpoints (docs/webhooks.md): requests and what the routes answer.
import { WEBHOOK_EVENT_TYPES, WEBHOOK_SUBSCRIPTIONS, WEBHOOK_TEST_EVENT } from '../src/domain/webhook-events.js';
import { nonEmptyString, object, queryLimit, uuid } from './common.js';
import { closed, enumOf, isoTime, message, nullableIsoTime, nullableStr, ok, str, uuidText, type HandlerErrors, type RouteResponses } from './response-parts.js';

const url = { ...nonEmptyString(2048), description: 'http(s) URL the events are POSTed to; it must not resolve to a private address unless the operator allows it (HERALD_ALLOWED_PRIVATE_HOSTS)' } as const;
const eventTypes = {
  type: 'array',
  items: { type: 'string', enum: [...WEBHOOK_SUBSCRIPTIONS] },
  minItems: 1,
  maxItems: WEBHOOK_SUBSCRIPTIONS.length,
  uniqueItems: true,
  description: 'The event types sent to this endpoint; `*` for all',
} as const;
const description = { type: 'string', maxLength: 1000 } as const;

export const endpointCreate = object({ url, event_types: eventTypes, description, enabled: { type: 'boolean' } }, ['url', 'event_types']);
export const endpointUpdate = object({ url, event_types: eventTypes, description, enabled: { type: 'boolean' } });
export const attemptList = object({
  limit: queryLimit(50),
  before_id: { ...uuid, description: 'The id of the last attempt shown: the page after it' },
});

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

const endpoint = closed({
  id: uuidText,
  url: str,
  event_types: { type: 'array', items: enumOf(...WEBHOOK_SUBSCRIPTIONS) },
  description: str,
  enabled: { type: 'boolean' },
  disabled_reason: { ...nullableStr, description: 'Why Herald disabled it (410 Gone, or failing for HERALD_WEBHOOK_DISABLE_AFTER_MS); null when enabled or disabled by hand' },
  created_at: isoTime,
  updated_at: isoTime,
});
const secret = { type: 'string', pattern: '^whsec_[A-Za-z0-9+/]+=*$', description: 'The signing secret, shown only here' };
const attempt = closed({
  id: uuidText,
  message_id: { type: 'string', description: 'The `webhook-id` header: the same on every attempt of one event' },
  event_type: enumOf(...WEBHOOK_EVENT_TYPES, WEBHOOK_TEST_EVENT),
  status_code: { type: 'integer', nullable: true, description: 'The endpoint\'s HTTP status; null when no answer came' },
  error: nullableStr,
  attempt: { type: 'integer', minimum: 1 },
  at: isoTime,
  next_attempt_at: { ...nullableIsoTime, description: 'When it is tried again; null when delivered or given up' },
});

const notFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: 'No such endpoint in this workspace' };
const badUrl: HandlerErrors[400] = { codes: ['VALIDATION_ERROR'], why: 'The URL is not http(s), or resolves to a private, loopback or link-local address' };
const HOOKS = '/workspaces/{workspaceId}/webhooks';

export const webhookResponses: Record<string, RouteResponses> = {
  [`POST ${HOOKS}`]: { success: { 201: ok('The endpoint and its secret, shown once', { data: closed({ endpoint, secret }) }) }, errors: { 400: badUrl } },
  [`GET ${HOOKS}`]: { success: { 200: ok("The workspace's endpoints, oldest first", { data: closed({ endpoints: { type: 'array', items: endpoint } }) }) } },
  [`GET ${HOOKS}/{endpointId}`]: { success: { 200: ok('The endpoint', { data: closed({ endpoint }) }) }, errors: { 404: notFound } },
  [`PUT ${HOOKS}/{endpointId}`]: { success: { 200: ok('The endpoint as changed', { data: closed({ endpoint }) }) }, errors: { 400: badUrl, 404: notFound } },
  [`DELETE ${HOOKS}/{endpointId}`]: { success: { 200: message('Deleted, with its pending deliveries and attempts') }, errors: { 404: notFound } },
  [`POST ${HOOKS}/{endpointId}/rotate-secret`]: {
    success: { 200: ok('The new secret, shown once; the previous one also signs for 24 hours', { data: closed({ secret }) }) },
    errors: { 404: notFound },
  },
  [`GET ${HOOKS}/{endpointId}/attempts`]: { success: { 200: ok('Delivery attempts, newest first', { data: closed({ attempts: { type: 'array', items: attempt } }) }) }, errors: { 404: notFound } },
  [`POST ${HOOKS}/{endpointId}/test`]: { success: { 202: ok('A `webhook.test` event is queued for the endpoint', { data: closed({ message_id: str }) }) }, errors: { 404: notFound } },
  [`GET ${HOOKS}/node-secret`]: {
    success: { 200: ok("The workspace's webhook node secret (docs/channels.md): every webhook node's call is signed with it", { data: closed({ secret }) }) },
    errors: { 403: { codes: ['FORBIDDEN'], why: 'Only owners and admins read it' } },
  },
  [`POST ${HOOKS}/{endpointId}/attempts/{attemptId}/resend`]: {
    success: { 202: ok("The attempt's event is queued again, with the same webhook-id", { data: closed({ message_id: str }) }) },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'No such endpoint, or no such attempt of it' }, 409: { codes: ['DELIVERY_PENDING'], why: 'The event is still being delivered (waiting for a retry or under way)' } },
  },
};

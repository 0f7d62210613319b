// Outbound webhook endpoints (docs/webhooks.md), session routes: owners and admins write, any
// member reads. The signing secret is answered once, at create and rotate, and stored sealed. An
// endpoint's URL is judged by the destination rule when it is saved, and again by every
// connection (net/bounded-request.ts), since DNS may change in between.
import { randomUUID } from 'node:crypto';
import type { Handler, Handlers, PathCtx } from './context.js';
import { json } from './reply.js';
import { requireManager } from './workspaces.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { isUuid } from '../ids.js';
import { newWebhookSecret } from '../domain/standard-webhooks.js';
import { ROTATION_OVERLAP_MS, WEBHOOK_TEST_EVENT } from '../domain/webhook-events.js';
import {
  attemptsOf,
  deleteEndpoint,
  endpointsOf,
  enqueueDelivery,
  findEndpoint,
  insertEndpoint,
  resendDelivery,
  rotateSecret,
  saveEndpoint,
  type AttemptRow,
  type EndpointRow,
  type Queryable,
} from '../store/index.js';
import type { OutboundPolicy } from '../net/destinations.js';
import { nodeSecret } from '../channels/webhook/secret.js';

function present(e: EndpointRow) {
  return {
    id: e.id,
    url: e.url,
    event_types: e.event_types,
    description: e.description,
    enabled: e.enabled,
    disabled_reason: e.disabled_reason,
    created_at: iso(e.created_at),
    updated_at: iso(e.updated_at),
  };
}

const messageId = (deliveryId: string) => `msg_${deliveryId}`;

function presentAttempt(a: AttemptRow) {
  return {
    id: a.id,
    message_id: messageId(a.delivery_id),
    event_type: a.event_type,
    status_code: a.status_code,
    error: a.error,
    attempt: a.attempt,
    at: iso(a.at),
    next_attempt_at: iso(a.next_attempt_at),
  };
}

/** The URL as stored; refused when it is not http(s) or its host is one the destination rule refuses. */
async function checkedUrl(outbound: OutboundPolicy, raw: string): Promise<string> {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    // refused below
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
    throw new InvalidInput('url must be an http or https URL without credentials', [{ field: 'url', message: 'must be an http or https URL without credentials' }]);
  }
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  if (await outbound.problem(url.hostname, port)) {
    const why = 'must be a public address, or a name that resolves to one: a receiver on a private network (localhost included) needs the operator to list it in HERALD_ALLOWED_PRIVATE_HOSTS';
    throw new InvalidInput(`url ${why}`, [{ field: 'url', message: why }]);
  }
  return url.toString();
}

async function loadEndpoint(q: Queryable, ctx: PathCtx<'endpointId'>, lock = false): Promise<EndpointRow> {
  const id = ctx.params.endpointId;
  const e = isUuid(id) ? await findEndpoint(q, ctx.workspaceId, id, lock) : null;
  if (!e) throw new DomainError('NOT_FOUND', 'Webhook endpoint not found');
  return e;
}

const create: Handler<'POST /workspaces/{workspaceId}/webhooks'> = async (ctx) => {
  requireManager(ctx);
  const b = ctx.body;
  const url = await checkedUrl(ctx.webhooks.outbound, b.url);
  const secret = newWebhookSecret();
  const endpoint = await insertEndpoint(ctx.db, ctx.messaging.secrets, {
    id: randomUUID(),
    workspaceId: ctx.workspaceId,
    url,
    eventTypes: b.event_types,
    description: b.description ?? '',
    enabled: b.enabled ?? true,
    secret,
  });
  return json(201, { success: true, data: { endpoint: present(endpoint), secret } });
};

const list: Handler<'GET /workspaces/{workspaceId}/webhooks'> = async (ctx) =>
  json(200, { success: true, data: { endpoints: (await endpointsOf(ctx.db, ctx.workspaceId)).map(present) } });

const get: Handler<'GET /workspaces/{workspaceId}/webhooks/{endpointId}'> = async (ctx) => json(200, { success: true, data: { endpoint: present(await loadEndpoint(ctx.db, ctx)) } });

const update: Handler<'PUT /workspaces/{workspaceId}/webhooks/{endpointId}'> = async (ctx) => {
  requireManager(ctx);
  const b = ctx.body;
  // Judged before the transaction: resolving a name may take seconds.
  const url = b.url === undefined ? undefined : await checkedUrl(ctx.webhooks.outbound, b.url);
  const endpoint = await ctx.db.tx(async (q) => {
    const current = await loadEndpoint(q, ctx, true);
    return saveEndpoint(q, {
      id: current.id,
      url: url ?? current.url,
      event_types: b.event_types ?? current.event_types,
      description: b.description ?? current.description,
      enabled: b.enabled ?? current.enabled,
    });
  });
  return json(200, { success: true, data: { endpoint: present(endpoint) } });
};

const remove: Handler<'DELETE /workspaces/{workspaceId}/webhooks/{endpointId}'> = async (ctx) => {
  requireManager(ctx);
  const e = await loadEndpoint(ctx.db, ctx);
  await deleteEndpoint(ctx.db, ctx.workspaceId, e.id);
  return json(200, { success: true, message: 'Webhook endpoint deleted' });
};

const rotate: Handler<'POST /workspaces/{workspaceId}/webhooks/{endpointId}/rotate-secret'> = async (ctx) => {
  requireManager(ctx);
  const secret = newWebhookSecret();
  await ctx.db.tx(async (q) => {
    const e = await loadEndpoint(q, ctx, true);
    await rotateSecret(q, ctx.messaging.secrets, e.id, secret, ROTATION_OVERLAP_MS);
  });
  return json(200, { success: true, data: { secret } });
};

const attempts: Handler<'GET /workspaces/{workspaceId}/webhooks/{endpointId}/attempts'> = async (ctx) => {
  const e = await loadEndpoint(ctx.db, ctx);
  const rows = await attemptsOf(ctx.db, e.id, ctx.query.limit, ctx.query.before_id ?? null);
  return json(200, { success: true, data: { attempts: rows.map(presentAttempt) } });
};

const test: Handler<'POST /workspaces/{workspaceId}/webhooks/{endpointId}/test'> = async (ctx) => {
  requireManager(ctx);
  const e = await loadEndpoint(ctx.db, ctx);
  const payload = { type: WEBHOOK_TEST_EVENT, timestamp: new Date().toISOString(), data: { endpoint_id: e.id, message: 'A test event from Herald' } };
  const id = await enqueueDelivery(ctx.db, ctx.workspaceId, e.id, WEBHOOK_TEST_EVENT, payload);
  ctx.webhooks.nudge();
  return json(202, { success: true, data: { message_id: messageId(id) } });
};

const resend: Handler<'POST /workspaces/{workspaceId}/webhooks/{endpointId}/attempts/{attemptId}/resend'> = async (ctx) => {
  requireManager(ctx);
  const e = await loadEndpoint(ctx.db, ctx);
  const attemptId = ctx.params.attemptId;
  const result = isUuid(attemptId) ? await ctx.db.tx((q) => resendDelivery(q, e.id, attemptId)) : { outcome: 'not_found' as const };
  if (result.outcome === 'not_found') throw new DomainError('NOT_FOUND', 'No such attempt of this endpoint');
  if (result.outcome === 'pending') throw new DomainError('DELIVERY_PENDING', 'The event is still being delivered: it waits for a retry or is under way');
  ctx.webhooks.nudge();
  return json(202, { success: true, data: { message_id: messageId(result.deliveryId) } });
};

/** What the workflow's webhook nodes sign with (channels/webhook/secret.ts): owners and admins only, since it verifies every call. */
const nodeSecretOf: Handler<'GET /workspaces/{workspaceId}/webhooks/node-secret'> = async (ctx) => {
  requireManager(ctx);
  return json(200, { success: true, data: { secret: await nodeSecret(ctx.db, ctx.messaging.secrets, ctx.workspaceId) } });
};

const HOOKS = '/workspaces/{workspaceId}/webhooks';

export const webhookHandlers = {
  [`POST ${HOOKS}`]: create,
  [`GET ${HOOKS}`]: list,
  [`GET ${HOOKS}/{endpointId}`]: get,
  [`PUT ${HOOKS}/{endpointId}`]: update,
  [`DELETE ${HOOKS}/{endpointId}`]: remove,
  [`POST ${HOOKS}/{endpointId}/rotate-secret`]: rotate,
  [`GET ${HOOKS}/{endpointId}/attempts`]: attempts,
  [`POST ${HOOKS}/{endpointId}/test`]: test,
  [`POST ${HOOKS}/{endpointId}/attempts/{attemptId}/resend`]: resend,
  [`GET ${HOOKS}/node-secret`]: nodeSecretOf,
} satisfies Handlers;

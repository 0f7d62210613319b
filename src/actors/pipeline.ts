// The actor side of a request, as named, ordered steps (the front has authenticated it and
// applied the IP and user budgets). Each step answers, ending the request, or passes:
//   workspace budget → membership → unserved route (501) → parse → validate → handle.
// Nothing reads the body before `parse`, which bounds its depth before JSON.parse runs.
// Every failure is answered in the route's error shape.
import { isUtf8 } from 'node:buffer';
import { ROUTES, errorShapeOf, type ErrorShape, type HandledRouteId, type RouteId, type Route } from '../routes.js';
import { errorReply, forbidden, invalidRequest, rateLimited, toReply, type Reply } from '../handlers/reply.js';
import type { AllHandlers, RequestCtx } from '../handlers/context.js';
import { check, compileBody, compileStrings } from '../handlers/validation.js';
import { DomainError, Unavailable } from '../domain/errors.js';
import type { Role } from '../domain/roles.js';
import type { Buckets } from '../ratelimit/buckets.js';
import type { ActorRequest } from './protocol.js';
import { isUnstorable, unstorableText } from '../domain/storable-text.js';
import { MAX_BODY_DEPTH, nestsDeeperThan } from './json-depth.js';
import { decodeBody } from './body-encoding.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import type { ValidateFunction } from 'ajv';

interface Validators {
  params?: ValidateFunction;
  body?: ValidateFunction;
  query?: ValidateFunction;
}

/** A request on its way through the steps. */
interface InFlight {
  req: ActorRequest;
  route: Route;
  shape: ErrorShape;
  ctx: RequestCtx;
}

type Step = (r: InFlight) => Promise<Reply | undefined> | Reply | undefined;

const decoder = new TextDecoder();

/** What every request's context carries from its actor (the rest is the request's own). */
export type ActorServices = Pick<RequestCtx, 'db' | 'events' | 'push' | 'providers' | 'messaging' | 'renders' | 'pools' | 'triggers' | 'eventTriggers' | 'goals' | 'webhooks' | 'imports' | 'segments' | 'analyticsInStore' | 'analytics'>;

/** A user's role in a workspace, null when they are not a member (the actor asks its store). */
export type RoleOf = (workspaceId: string, user: string) => Promise<Role | null>;

/** `buckets` holds the workspace budgets of the workspaces this actor owns; `roleOf` answers the membership step. */
export function createPipeline(
  services: ActorServices,
  buckets: Buckets,
  handlers: AllHandlers,
  roleOf: RoleOf,
): (req: ActorRequest) => Promise<Reply> {
  const routes = new Map<RouteId, Route>(ROUTES.map((r) => [r.id, r]));
  const validators = new Map<RouteId, Validators>(
    ROUTES.map((r) => [r.id, { params: r.params && compileStrings(r.params), body: r.body && compileBody(r.body), query: r.query && compileStrings(r.query) }]),
  );
  // setImmediate runs after the reply's microtask has posted it to the front.
  const defer = (task: () => Promise<void>) => setImmediate(() => void task().catch((err) => logger.error('deferred task failed', { err })));

  /** Key routes (and session routes a key may open) spend the workspace's budget, owned by this actor. */
  const workspaceBudget: Step = ({ req, route }) => {
    const scope = route.auth === 'key' ? route.scope : route.auth === 'session' ? route.keys?.scope : undefined;
    if (req.principal.kind !== 'key' || !scope) return;
    const refused = buckets.take(scope, req.principal.workspaceId);
    return refused ? rateLimited(refused) : undefined;
  };

  /** Session routes on a workspace need the caller to be a member of it (403 otherwise, existence unrevealed). */
  const membership: Step = async ({ req, ctx, shape }) => {
    if (req.principal.kind !== 'session' || req.workspaceId === null) return;
    ctx.role = isUuid(req.workspaceId) ? await roleOf(req.workspaceId, req.principal.user.sub) : null;
    return ctx.role ? undefined : forbidden(shape);
  };

  /** After the budget and membership, so limits and access apply uniformly. */
  const notImplemented: Step = ({ route, shape }) => (route.notImplemented ? errorReply(shape, 'NOT_IMPLEMENTED', route.notImplemented) : undefined);

  /** Path, query and JSON body, holding only text the store can keep; the body nests at most MAX_BODY_DEPTH levels. */
  const parse: Step = ({ req, route, ctx, shape }) => {
    // Outside routes read their raw bytes: a signature is over them, not over a parse of them.
    if (route.auth === 'none') {
      ctx.raw = req.body ?? new Uint8Array(0);
      ctx.query = Object.fromEntries(new URLSearchParams(req.query));
      return;
    }
    for (const [name, value] of Object.entries(req.params)) {
      if (isUnstorable(value)) return invalidRequest(shape, 'Path parameters are invalid', [{ field: `path.${name}`, message: 'contains U+0000 or an unpaired surrogate' }]);
    }
    const query = [...new URLSearchParams(req.query)];
    for (const [name, value] of query) {
      // A name holding one is not echoed back: `query` stands for it.
      if (isUnstorable(name)) return invalidRequest(shape, 'Query parameters are invalid', [{ field: 'query', message: 'a parameter name contains U+0000 or an unpaired surrogate' }]);
      if (isUnstorable(value)) return invalidRequest(shape, 'Query parameters are invalid', [{ field: `query.${name}`, message: 'contains U+0000 or an unpaired surrogate, which cannot be stored' }]);
    }
    ctx.query = Object.fromEntries(query);
    if (!req.body || req.body.length === 0) return;
    let body = req.body;
    // The source takes gzip (RudderStack's batches): its limits hold for the decoded body.
    if (route.auth === 'key' && route.source) {
      const decoded = decodeBody(body, req.headers['content-encoding'], route.maxBody ?? Number.MAX_SAFE_INTEGER);
      if (!decoded.ok) return decoded.why === 'too-large' ? errorReply(shape, 'PAYLOAD_TOO_LARGE', decoded.message) : invalidRequest(shape, decoded.message, [{ field: 'Content-Encoding', message: decoded.message }]);
      body = decoded.body;
    }
    // The decoder would turn invalid bytes into U+FFFD and store them; isUtf8 (simdutf) costs
    // about 0.1 µs a kilobyte, a twentieth of the decode.
    if (!isUtf8(body)) return invalidRequest(shape, 'Malformed JSON body', [{ field: 'body', message: 'is not valid UTF-8' }]);
    ctx.bodyBytes = body.length;
    const raw = decoder.decode(body);
    // Before JSON.parse: a deep body must never be parsed (json-depth.ts).
    if (nestsDeeperThan(raw)) return invalidRequest(shape, 'Request body is invalid', [{ field: 'body', message: `nests arrays and objects deeper than ${MAX_BODY_DEPTH} levels` }]);
    try {
      ctx.body = JSON.parse(raw);
    } catch {
      return invalidRequest(shape, 'Malformed JSON body', [{ field: 'body', message: 'is not valid JSON' }]);
    }
    const unstorable = unstorableText(raw, ctx.body);
    if (unstorable) return invalidRequest(shape, 'Request body is invalid', [{ field: unstorable, message: 'contains U+0000 or an unpaired surrogate, which cannot be stored' }]);
  };

  /** The route's schemas, worded by its refusal rules. */
  const validate: Step = ({ route, ctx }) => {
    const v = validators.get(route.id)!;
    if (v.params) check(v.params, ctx.params, 'path', route.refusals);
    // No body at all reads as `{}`: required fields are then reported by name.
    if (v.body) check(v.body, (ctx.body ??= {}), 'body', route.refusals);
    if (v.query) check(v.query, ctx.query, 'query', route.refusals);
    return undefined;
  };

  // Public routes never reach an actor, and 501 routes were answered above.
  // The validate step made body and query what the route's schemas say, and the front gives
  // every route but the workspaceless ones its workspace: the Ctx of handlers/context.ts.
  const handle: Step = ({ route, ctx }) => (handlers[route.id as HandledRouteId] as (ctx: RequestCtx) => Promise<Reply>)(ctx);

  const steps: Step[] = [workspaceBudget, membership, notImplemented, parse, validate, handle];

  return async function run(req: ActorRequest): Promise<Reply> {
    const route = routes.get(req.route)!;
    const shape = errorShapeOf(route);
    const p = req.principal;
    const ctx: RequestCtx = {
      ...services, params: req.params, query: {}, headers: req.headers, body: undefined, bodyBytes: 0, upload: req.upload, raw: null, workspaceId: req.workspaceId, ip: req.ip, deadline: req.deadline, defer,
      user: p.kind === 'session' ? p.user : null, key: p.kind === 'key' ? p : null, role: null,
    };
    try {
      for (const step of steps) {
        const reply = await step({ req, route, shape, ctx });
        if (reply) return reply;
      }
      throw new Error(`no step answered ${route.id}`);
    } catch (err) {
      if (err instanceof Unavailable) logger.warn('request refused: a part Herald depends on is unavailable', { route: route.id, err: err.message, cause: String(err.cause) });
      if (err instanceof DomainError) return toReply(shape, err);
      logger.error('handler failed', { route: route.id, err });
      return errorReply(shape, 'INTERNAL_ERROR', 'Internal error');
    }
  };
}

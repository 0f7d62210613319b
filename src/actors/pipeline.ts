// The actor side of a request: workspace rate limit, membership, JSON parse, schema
// validation, then the route's handler; every failure in the route's error shape.
import type { Db } from '../store/db.js';
import { ROUTES, errorShapeOf, type Route } from '../http/routes.js';
import { errorReply, forbidden, fromError, invalidRequest, rateLimited, type Reply } from '../http/reply.js';
import type { Buckets } from '../ratelimit/buckets.js';
import type { ActorRequest } from './protocol.js';
import type { Ctx, Handler, Role } from './context.js';
import { compileValidators, fieldErrors } from './validation.js';
import { isUnstorable, unstorableText } from './storable-text.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import { LogUnavailable, type Log } from '../eventlog/event-log.js';

const decoder = new TextDecoder();

/** `buckets` holds the workspace budgets of the workspaces this actor owns. */
export function createPipeline(db: Db, eventLog: Log, buckets: Buckets, handlers: Record<string, Handler>): (req: ActorRequest) => Promise<Reply> {
  const routes = new Map<string, Route>(ROUTES.map((r) => [r.id, r]));
  const validators = compileValidators(ROUTES);

  async function roleIn(workspaceId: string, user: string): Promise<Role | null> {
    if (!isUuid(workspaceId)) return null;
    const r = await db.query<{ role: Role }>('SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [workspaceId, user]);
    return r.rows[0]?.role ?? null;
  }

  // setImmediate runs after the reply's microtask has posted it to the front.
  const defer = (task: () => Promise<void>) =>
    setImmediate(() => void task().catch((err) => logger.error('deferred task failed', { err })));

  return async function handle(req: ActorRequest): Promise<Reply> {
    const route = routes.get(req.route)!;
    const shape = errorShapeOf(route);
    try {
      const ctx: Ctx = { db, log: eventLog, route, params: req.params, query: {}, body: undefined, workspaceId: req.workspaceId, user: null, role: null, key: null, ip: req.ip, defer };
      const p = req.principal;
      if (p?.kind === 'key' && route.auth === 'key') {
        ctx.key = p;
        const refused = buckets.take(route.scope, p.workspaceId);
        if (refused) return rateLimited(refused);
      } else if (p?.kind === 'session') {
        ctx.user = p.user;
        if (req.workspaceId !== null) {
          ctx.role = await roleIn(req.workspaceId, p.user.sub);
          if (!ctx.role) return forbidden(shape);
        }
      }

      // After the workspace budget and membership, so limits and access apply uniformly.
      if (route.notImplemented) return errorReply(shape, 501, 'NOT_IMPLEMENTED', route.notImplemented);
      const handler = handlers[route.id];
      if (!handler) return errorReply(shape, 500, 'INTERNAL_ERROR', `No handler for ${route.id}`);

      for (const [name, value] of Object.entries(req.params)) {
        if (isUnstorable(value)) return invalidRequest(shape, 'Path parameters are invalid', [{ field: `path.${name}`, message: 'contains U+0000 or an unpaired surrogate' }]);
      }
      if (req.body && req.body.length > 0) {
        const raw = decoder.decode(req.body);
        try {
          ctx.body = JSON.parse(raw);
        } catch {
          return invalidRequest(shape, 'Malformed JSON body', [{ field: 'body', message: 'is not valid JSON' }]);
        }
        const unstorable = unstorableText(raw, ctx.body);
        if (unstorable) return invalidRequest(shape, 'Request body is invalid', [{ field: unstorable, message: 'contains U+0000 or an unpaired surrogate, which cannot be stored' }]);
      }
      const v = validators.get(route.id)!;
      // No body at all reads as `{}`: required fields are then reported by name.
      if (v.body && ctx.body === undefined) ctx.body = {};
      if (v.body && !v.body(ctx.body)) {
        return invalidRequest(shape, 'Request body is invalid', fieldErrors(v.body.errors, 'body'));
      }
      ctx.query = Object.fromEntries(new URLSearchParams(req.query));
      if (v.query && !v.query(ctx.query)) {
        return invalidRequest(shape, 'Query parameters are invalid', fieldErrors(v.query.errors, 'query'));
      }
      return await handler(ctx);
    } catch (err) {
      if (err instanceof LogUnavailable) {
        return { ...errorReply(shape, 503, 'SERVICE_UNAVAILABLE', 'The event log is unavailable; nothing was recorded. Retry shortly.'), headers: { 'Retry-After': '1' } };
      }
      const known = fromError(shape, err);
      if (known) return known;
      logger.error('handler failed', { route: route.id, err });
      return errorReply(shape, 500, 'INTERNAL_ERROR', 'Internal error');
    }
  };
}

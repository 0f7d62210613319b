// What every route answers, each status with a description and the JSON Schema of its body:
// the route's own answers (schemas/responses.ts ROUTE_RESPONSES, from each resource's module) and
// those every route of its kind shares, from the front (src/http/front.ts: 401, 403, 404, 405,
// 413, 429, 503) and the actor pipeline (src/actors/pipeline.ts: schema 400, 501, 503). Here, not
// in schemas/, because it reads the route table, which imports the schemas.
import { ROUTES, errorShapeOf, type Route } from '../routes.js';
import type { ErrorCode } from '../domain/errors.js';
import type { Scope } from '../domain/rate-limit-scopes.js';
import type { Schema } from '../../schemas/common.js';
import { str, type SessionDetails } from '../../schemas/response-parts.js';
import {
  BAD_FRAMING, RATE_LIMIT_HEADERS, RETRY_AFTER, ROUTE_RESPONSES, badRequest, flatError, forbidden, keyError, keyUnauthorized, providerError, rateLimited, sessionError, sessionUnauthorized, type Responses,
} from '../../schemas/responses.js';
import { sourceError } from '../../schemas/segment-source.js';

function responsesOf(route: Route): Responses {
  const spec = ROUTE_RESPONSES[route.id];
  if (!spec) throw new Error(`schemas/responses.ts: no responses for ${route.id}`);
  const shape = errorShapeOf(route);
  const error = (codes: ErrorCode[], details?: SessionDetails): Schema => (shape === 'flat' ? flatError : shape === 'source' ? sourceError : shape === 'session' ? sessionError(codes, details) : keyError(codes));
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
    out['401'] = { description: 'Missing or bad provider signature (or basic auth): nothing was read or recorded', schema: flatError };
  }
  if (route.auth === 'key' || route.auth === 'session') {
    out['401'] = {
      description: 'Missing, malformed, unknown, revoked or expired credential',
      schema: route.auth === 'session' ? (route.keys ? { anyOf: [sessionUnauthorized, keyUnauthorized] } : sessionUnauthorized) : shape === 'source' ? sourceError : keyUnauthorized,
    };
    out['403'] =
      route.auth === 'session'
        ? route.keys
          ? { description: `Not a member of the workspace (or no such workspace); or a key of another workspace, without ${route.keys.permissions.join(' or ')}, or from outside an enforced allowlist`, schema: forbidden }
          : { description: 'An API key on a session route, not a member of the workspace (or no such workspace), or a role that may not do this', schema: forbidden }
        : {
            description: `The key lacks ${route.permissions.join(' or ')}${route.path.includes('{workspaceId}') ? ', the workspace in the path is not the key\'s' : ''}, or the client IP is outside an enforced allowlist${spec.errors?.[403] ? `; ${spec.errors[403].why}` : ''}`,
            schema: shape === 'flat' ? flatError : shape === 'source' ? sourceError : forbidden,
          };
  }
  const own404 = spec.errors?.[404];
  if (own404) out['404'] = own404.mediaType ? { description: own404.why, schema: str, mediaType: own404.mediaType } : { description: own404.why, schema: error(own404.codes) };
  for (const status of [409, 422] as const) {
    const own = spec.errors?.[status];
    if (own) out[status] = { description: own.why, schema: error(own.codes) };
  }
  const tracks = route.id === 'POST /track' || route.id === 'POST /track/batch' || (route.auth === 'key' && route.source === true);
  out['413'] = {
    description: `Body over ${route.upload ? 'HERALD_IMPORT_MAX_BYTES (default 512 MiB)' : route.maxBody === undefined ? 'HERALD_MAX_BODY_BYTES (default 1 MB)' : `${route.maxBody} bytes`}, refused before it is read${route.upload ? ' (or once that much was read, when sent chunked)' : route.headers?.['Content-Encoding'] ? ' (or once decoded)' : ''}${tracks ? "; or (JetStream Log) the request's events are larger than one Log message (NATS max_payload), nothing recorded" : ''}`,
    schema: error(['PAYLOAD_TOO_LARGE']),
  };
  // Routes with no credential spend their own per-IP budget (the provider callbacks' is ip-webhooks).
  const scopes: Scope[] = route.auth === 'key' ? [route.scope, 'ip-public', 'edge'] : route.auth === 'session' ? ['user-dashboard', ...(route.keys ? [route.keys.scope] : []), 'ip-public', 'edge'] : route.auth === 'none' ? [route.scope, 'edge'] : ['ip-public', 'edge'];
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
for (const id of Object.keys(ROUTE_RESPONSES)) if (!RESPONSES[id]) throw new Error(`schemas/responses.ts: ${id} is not in the route table`);

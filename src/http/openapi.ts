// The OpenAPI 3.0 description, built from the route table, the request schemas ajv uses and
// the responses of route-responses.ts. The HTTP tests validate every response they receive
// against this document.
import { API_PREFIX, ROUTES, type Route } from '../routes.js';
import { VERSION } from '../version.js';

import type { Schema } from '../../schemas/common.js';
import { COMPONENTS, HEALTH_RESPONSES, PREFLIGHT_RESPONSES, UNROUTED_RESPONSES, type ResponseDoc, type Responses } from '../../schemas/responses.js';
import { RESPONSES } from './route-responses.js';

const componentNames = new Map<unknown, string>(Object.entries(COMPONENTS).map(([name, schema]) => [schema, name]));

/** A copy of `schema` where every named component inside it is a `$ref` (`self` stays inline). */
function withRefs(schema: unknown, self?: unknown): unknown {
  if (Array.isArray(schema)) return schema.map((s) => withRefs(s));
  if (schema === null || typeof schema !== 'object') return schema;
  const name = componentNames.get(schema);
  if (name !== undefined && schema !== self) return { $ref: `#/components/schemas/${name}` };
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, withRefs(v)]));
}

/** Response headers, each described once under `#/components/headers`. */
const headers = new Map<string, string>();

function header(name: string, description: string): Record<string, unknown> {
  if ((headers.get(name) ?? description) !== description) throw new Error(`header ${name} is described twice, differently`);
  headers.set(name, description);
  return { $ref: `#/components/headers/${name}` };
}

function response(r: ResponseDoc): Record<string, unknown> {
  return {
    description: r.description,
    ...(r.headers ? { headers: Object.fromEntries(Object.entries(r.headers).map(([h, description]) => [h, header(h, description)])) } : {}),
    ...(r.schema ? { content: { [r.mediaType ?? 'application/json']: { schema: withRefs(r.schema) } } } : {}),
  };
}

const responses = (rs: Responses) => Object.fromEntries(Object.entries(rs).map(([status, r]) => [status, response(r)]));

function operation(r: Route): Record<string, unknown> {
  const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  const query = r.query as { properties?: Record<string, Schema>; required?: string[] } | undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    params.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema } as never);
  }
  if (r.auth === 'key' && r.beacon) {
    params.push({ name: 'key', in: 'query', required: false, description: 'A public API key (pk_live_…) instead of the Authorization header, for navigator.sendBeacon; a secret key here is 401', schema: { type: 'string' } } as never);
  }
  for (const [name, description] of Object.entries(r.headers ?? {})) {
    params.push({ name, in: 'header', required: false, description, schema: { type: 'string' } } as never);
  }
  if (r.auth === 'session' && r.workspace === 'header') {
    params.push({ name: 'X-Workspace-ID', in: 'header', required: true, schema: { type: 'string' } });
  }
  return {
    operationId: operationId(r.id),
    summary: r.summary,
    ...(r.auth === 'key' ? { description: `Permission: ${r.permissions.join(' or ')}; rate-limit scope ${r.scope}.${r.notImplemented ? ' Not served by this version: 501 after authentication, permission and the workspace budget.' : ''}` } : {}),
    ...(r.auth === 'key' && r.source ? { servers: [{ url: '/' }], description: `The Segment-compatible source, served outside ${API_PREFIX}. The API key is the write key (HTTP Basic user name, empty password; or \`writeKey\` in the body). Permission: ${r.permissions.join(' or ')}; rate-limit scope ${r.scope}.` } : {}),
    ...(r.auth === 'session' && r.keys ? { description: `A dashboard session, or an API key of the path's workspace with ${r.keys.permissions.join(' or ')} (rate-limit scope ${r.keys.scope}).` } : {}),
    ...(r.auth === 'none' ? { servers: [{ url: '/' }], description: `Served outside ${API_PREFIX}, no credential; rate-limit scope ${r.scope} (per IP).` } : {}),
    security: r.auth === 'key' ? [r.source ? { writeKey: [] } : { apiKey: [] }] : r.auth === 'session' ? [{ session: [] }, ...(r.keys ? [{ apiKey: [] }] : [])] : [],
    ...(params.length ? { parameters: params } : {}),
    ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } } : {}),
    responses: responses(RESPONSES[r.id]!),
  };
}

const operationId = (id: string) => id.replace(/[^A-Za-z0-9]+/g, '_').replace(/_$/, '');

export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r);
  // The front answers a preflight on a path whose first route browsers may call.
  for (const [path, item] of Object.entries(paths)) {
    const first = ROUTES.find((r) => r.path === path)!;
    if (first.auth === 'key' && first.cors) {
      item.options = { operationId: operationId(`OPTIONS ${path}`), summary: 'CORS preflight', security: [], responses: responses(PREFLIGHT_RESPONSES) };
    }
  }
  paths['/healthz'] = {
    get: {
      operationId: 'healthz',
      summary: 'Health of Herald and its dependencies (served outside /api/v1)',
      servers: [{ url: '/' }],
      security: [],
      responses: responses(HEALTH_RESPONSES),
    },
  };
  const unrouted = Object.fromEntries(Object.entries(UNROUTED_RESPONSES).map(([name, r]) => [name, response(r)]));
  return {
    openapi: '3.0.3',
    info: {
      title: 'Herald',
      version: VERSION,
      description:
        'Self-hosted, multi-tenant engagement messaging service. Besides the responses of each operation, any request may get ' +
        '`#/components/responses/UnknownRoute` (404, a path no route has), `#/components/responses/MethodNotAllowed` (405, a path ' +
        'served under other methods), `#/components/responses/EdgeRateLimited` (429, the per-IP backstop applied before routing) and ' +
        '`#/components/responses/BadFraming` (400, malformed framing, refused before anything else).',
    },
    servers: [{ url: API_PREFIX }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key `<prefix>.<secret>`' },
        session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Dashboard session token' },
        writeKey: { type: 'http', scheme: 'basic', description: 'The Segment-compatible source: an API key as the user name, empty password' },
      },
      schemas: Object.fromEntries(Object.entries(COMPONENTS).map(([name, schema]) => [name, withRefs(schema, schema)])),
      responses: unrouted,
      headers: Object.fromEntries([...headers].map(([name, description]) => [name, { description, schema: { type: 'string' } }])),
    },
    paths,
  };
}

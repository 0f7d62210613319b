// The OpenAPI 3.0 description, built from the route table and the same schemas ajv uses.
import { API_PREFIX, ROUTES, type Route } from '../routes.js';
import { ERRORS } from '../domain/errors.js';
import { VERSION } from '../version.js';
import type { Schema } from '../../schemas/common.js';

const errorBody: Schema = { type: 'object', additionalProperties: true, description: `Error body; codes: ${Object.keys(ERRORS).join(', ')}` };
const anyBody: Schema = { type: 'object', additionalProperties: true };

function operation(r: Route): Record<string, unknown> {
  const params = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
  const query = r.query as { properties?: Record<string, Schema>; required?: string[] } | undefined;
  for (const [name, schema] of Object.entries(query?.properties ?? {})) {
    params.push({ name, in: 'query', required: query?.required?.includes(name) ?? false, schema } as never);
  }
  if (r.auth === 'session' && r.workspace === 'header') {
    params.push({ name: 'X-Workspace-ID', in: 'header', required: true, schema: { type: 'string' } } as never);
  }
  const responses: Record<string, unknown> = {
    default: { description: 'Error', content: { 'application/json': { schema: errorBody } } },
  };
  responses[r.notImplemented ? '501' : r.method === 'POST' ? '201' : '200'] = {
    description: r.notImplemented ?? 'Success',
    content: { 'application/json': { schema: anyBody } },
  };
  if (r.auth !== 'public') {
    responses['401'] = { description: 'Missing, invalid or expired credential', content: { 'application/json': { schema: errorBody } } };
    responses['403'] = { description: 'Insufficient permissions', content: { 'application/json': { schema: errorBody } } };
    responses['429'] = { description: 'Rate limit exceeded', content: { 'application/json': { schema: errorBody } } };
  }
  return {
    operationId: r.id.replace(/[^A-Za-z0-9]+/g, '_').replace(/_$/, ''),
    summary: r.summary,
    ...(r.auth === 'key' ? { description: `Permission: ${r.permissions.join(' or ')}; rate-limit scope ${r.scope}.` } : {}),
    security: r.auth === 'key' ? [{ apiKey: [] }] : r.auth === 'session' ? [{ session: [] }] : [],
    ...(params.length ? { parameters: params } : {}),
    ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: r.body } } } } : {}),
    responses,
  };
}

export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of ROUTES) (paths[r.path] ??= {})[r.method.toLowerCase()] = operation(r);
  paths['/healthz'] = {
    get: {
      operationId: 'healthz',
      summary: 'Health of Herald and its dependencies (served outside /api/v1)',
      servers: [{ url: '/' }],
      security: [],
      responses: { '200': { description: 'Healthy' }, '503': { description: 'A required dependency is down' } },
    },
  };
  return {
    openapi: '3.0.3',
    info: { title: 'Herald', version: VERSION, description: 'Self-hosted, multi-tenant engagement messaging service.' },
    servers: [{ url: API_PREFIX }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key `<prefix>.<secret>`' },
        session: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Dashboard session token' },
      },
    },
    paths,
  };
}

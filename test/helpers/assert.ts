// Shared expectations of the HTTP tests: the error shapes of README, Errors, and common formats.
import type { Test } from 'tap';
import type { Res } from './server.js';

/** Server env raising every budget the functional tests would otherwise run into. */
export const NO_LIMITS = {
  HERALD_RATE_LIMITS: 'ws-ingest=100000:100000,ws-reads=100000:100000,ws-devices=100000:100000,ip-public=100000:100000,edge=100000:100000',
};

export type Ws = { id: string; owner: string; token: string };

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const FORBIDDEN = { error: 'Forbidden', message: 'Insufficient permissions' };

/** The key-route error body (README, Errors). */
export function keyError(t: Test, r: Res, status: number, code: string): void {
  t.equal(r.status, status, `status ${status}: ${r.text.slice(0, 300)}`);
  t.equal(r.body?.success, false, 'success:false');
  t.type(r.body?.error, 'string', 'error is a human message');
  t.equal(r.body?.code, code, `code ${code}`);
}

/** The session-route error body (README, Errors) with `code`; `field`, if given, must be among the details. */
export function sessionError(t: Test, r: Res, status: number, code: string, field?: string): void {
  t.equal(r.status, status, `status ${status}: ${r.text.slice(0, 400)}`);
  t.equal(r.body?.success, false, 'success:false');
  t.equal(r.body?.error?.code, code, `error.code ${code}`);
  t.type(r.body?.error?.message, 'string', 'error.message is a string');
  t.ok(r.body?.error && 'details' in r.body.error, 'error.details present');
  if (field) t.ok((r.body?.error?.details ?? []).some((d: { field: string }) => d.field === field), `details name ${field}: ${JSON.stringify(r.body?.error?.details)}`);
}

/** The schema-failure body (README, Errors) on key routes; `field` must be among the details. */
export function badRequest(t: Test, r: Res, field?: string): void {
  t.equal(r.status, 400, `status 400: ${r.text.slice(0, 300)}`);
  t.equal(r.body?.error, 'Bad Request');
  t.type(r.body?.message, 'string');
  t.equal(r.body?.code, 400);
  t.ok(Array.isArray(r.body?.details), 'details is an array');
  for (const d of r.body?.details ?? []) {
    t.type(d.field, 'string', 'detail field');
    t.type(d.message, 'string', 'detail message');
  }
  if (field) t.ok((r.body?.details ?? []).some((d: { field: string }) => d.field === field), `details name ${field}: ${JSON.stringify(r.body?.details)}`);
}

// The permission names (README, Permissions), written out here rather than imported from src/, so the tests check the server's lists.
export const ROUTE_PERMISSIONS = [
  'events:read', 'events:write', 'people:read', 'people:write', 'people:identify', 'people:delete',
  'campaigns:trigger', 'devices:register', 'devices:read', 'devices:write', 'push:send', 'push:read',
];
export const INERT = [
  'events:list', 'people:list', 'campaigns:read', 'campaigns:write', 'analytics:read', 'analytics:write',
  'segments:read', 'segments:write', 'webhooks:read', 'webhooks:write', 'workspace:read', 'workspace:write', 'admin',
];

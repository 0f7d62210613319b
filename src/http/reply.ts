// What a handler answers, and the error bodies of DECISIONS §4: which shape depends on the
// kind of route (`key`, `session`, or the flat `{error}` of the campaign trigger).
import type { Refusal } from '../ratelimit/buckets.js';

export type ErrorShape = 'key' | 'session' | 'flat';

export interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Key prefixes whose cached credentials the front must drop before answering. */
  invalidateKeys?: string[];
}

export const ERROR_CODES = [
  'VALIDATION_ERROR', 'INVALID_TRAITS', 'IDENTIFIER_CONFLICT', 'BATCH_TOO_LARGE', 'PAYLOAD_TOO_LARGE',
  'PERSON_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'INVALID_SEND_POLICY', 'INVALID_SUPPRESSION_TYPE',
  'PUBLIC_KEY_PERMISSION', 'ACTIVATION_FAILED', 'INVALID_TRIGGER_CONFIG', 'PROVIDER_ERROR', 'NOT_IMPLEMENTED',
  'SERVICE_UNAVAILABLE', 'INTERNAL_ERROR',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Thrown by handlers; rendered in the route's error shape. */
export class HttpError extends Error {
  constructor(readonly status: number, readonly code: ErrorCode, message: string, readonly details?: unknown) {
    super(message);
  }
}

/** Thrown by handlers for input the schema could not express; rendered like a schema failure. */
export class InvalidRequest extends Error {
  constructor(message: string, readonly details: FieldError[]) {
    super(message);
  }
}

/** Thrown by handlers to refuse with the route's 403 body. */
export class ForbiddenError extends Error {
  constructor() {
    super('Insufficient permissions');
  }
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, body: JSON.stringify(body), headers };
}

export function errorReply(shape: ErrorShape, status: number, code: ErrorCode, message: string, details?: unknown): Reply {
  if (shape === 'flat') return json(status, { error: message });
  if (shape === 'session') return json(status, { success: false, error: { code, message, details: details ?? {} } });
  return json(status, { success: false, error: message, code, ...(details === undefined ? {} : { details }) });
}

export function unauthorized(shape: ErrorShape, details: string): Reply {
  const message = shape === 'session' ? 'Invalid or expired session token' : 'Invalid or expired API key';
  return json(401, { error: 'Unauthorized', message, details });
}

export function forbidden(shape: ErrorShape, why = 'Insufficient permissions'): Reply {
  return shape === 'flat' ? json(403, { error: why }) : json(403, { error: 'Forbidden', message: 'Insufficient permissions' });
}

export function rateLimited(r: Refusal): Reply {
  return json(
    429,
    { error: 'Rate limit exceeded', message: `Too many requests for ${r.scope}; retry after ${r.retryAfter} s`, scope: r.scope, gate: r.gate },
    {
      'Retry-After': String(r.retryAfter),
      'X-RateLimit-Limit': String(r.limit),
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': String(r.resetAt),
      'X-RateLimit-Scope': r.scope,
    },
  );
}

export interface FieldError {
  field: string;
  message: string;
}

/** A request failing its JSON Schema: the `Bad Request` shape on key routes. */
export function invalidRequest(shape: ErrorShape, message: string, details: FieldError[]): Reply {
  if (shape === 'key') return json(400, { error: 'Bad Request', message, code: 400, details });
  return errorReply(shape, 400, 'VALIDATION_ERROR', message, details);
}

export function fromError(shape: ErrorShape, err: unknown): Reply | null {
  if (err instanceof ForbiddenError) return forbidden(shape);
  if (err instanceof InvalidRequest) return invalidRequest(shape, err.message, err.details);
  return err instanceof HttpError ? errorReply(shape, err.status, err.code, err.message, err.details) : null;
}

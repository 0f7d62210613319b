// What a request is answered with, and the error bodies (README, Errors): which shape depends
// on the kind of route (`key`, `session`, or the flat `{error}` of the campaign trigger). The
// front, the actor pipeline and the handlers all answer through these functions.
import { InvalidInput, ERRORS, ERROR_HEADERS, type DomainError, type ErrorCode, type FieldError } from '../domain/errors.js';
import type { Refusal } from '../ratelimit/buckets.js';
import type { ErrorShape } from '../routes.js';

export interface Reply {
  status: number;
  body?: string;
  /** A body of bytes instead (the open pixel's GIF). */
  bytes?: Uint8Array;
  headers?: Record<string, string>;
  /** Key prefixes whose cached credentials every front must drop before answering. */
  invalidateKeys?: string[];
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
  return { status, body: JSON.stringify(body), headers };
}

/** `code` in the route's shape, with the headers the catalog gives it (Retry-After on a 503). */
export function errorReply(shape: ErrorShape, code: ErrorCode, message: string, details?: unknown): Reply {
  const status = ERRORS[code];
  const headers = ERROR_HEADERS[code] && { ...ERROR_HEADERS[code] };
  if (code === 'FORBIDDEN') return forbidden(shape, message);
  if (shape === 'flat') return json(status, { error: message }, headers);
  if (shape === 'session') return json(status, { success: false, error: { code, message, details: details ?? {} } }, headers);
  return json(status, { success: false, error: message, code, ...(details === undefined ? {} : { details }) }, headers);
}

export function unauthorized(shape: ErrorShape, details: string): Reply {
  if (shape === 'source') return json(401, { success: false, error: `Invalid write key: ${details}` });
  const message = shape === 'session' ? 'Invalid or expired session token' : 'Invalid or expired API key';
  return json(401, { error: 'Unauthorized', message, details });
}

/** The fixed 403 body; the trigger route's flat shape carries the reason instead. */
export function forbidden(shape: ErrorShape, why = 'Insufficient permissions'): Reply {
  if (shape === 'source') return json(403, { success: false, error: why });
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

/** A request failing its JSON Schema: the `Bad Request` shape on key routes. */
export function invalidRequest(shape: ErrorShape, message: string, details: FieldError[]): Reply {
  if (shape === 'key') return json(400, { error: 'Bad Request', message, code: 400, details });
  if (shape === 'source') return json(400, { success: false, error: message, details });
  return errorReply(shape, 'VALIDATION_ERROR', message, details);
}

/** The one mapper from a DomainError to the route's error body. */
export function toReply(shape: ErrorShape, err: DomainError): Reply {
  if (err instanceof InvalidInput) return invalidRequest(shape, err.message, err.fields);
  return errorReply(shape, err.code, err.message, err.details);
}

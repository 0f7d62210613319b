// Writing a Reply to a uWS response, with CORS headers for routes browsers may call.
import type { HttpResponse } from './uws.js';
import type { Reply } from '../handlers/reply.js';

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content', 207: 'Multi-Status', 302: 'Found', 400: 'Bad Request', 401: 'Unauthorized',
  403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 409: 'Conflict', 413: 'Payload Too Large', 422: 'Unprocessable Entity',
  429: 'Too Many Requests', 500: 'Internal Server Error', 501: 'Not Implemented', 503: 'Service Unavailable',
};

const CORS_HEADERS: Record<string, string> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, X-RateLimit-Scope',
};

export function preflight(allowed: string[]): Reply {
  return {
    status: 204,
    headers: {
      ...CORS_HEADERS,
      'Access-Control-Allow-Methods': [...allowed, 'OPTIONS'].join(', '),
      'Access-Control-Allow-Headers': 'Authorization, Content-Type',
      'Access-Control-Max-Age': '86400',
    },
  };
}

/**
 * Writes `reply`; call inside res.cork() when outside the request handler's own tick. `close`
 * ends the connection once it is written (uWS adds `Connection: close`).
 */
export function write(res: HttpResponse, reply: Reply, cors: boolean, close = false): void {
  res.writeStatus(`${reply.status} ${STATUS_TEXT[reply.status] ?? ''}`);
  if (reply.body !== undefined && !reply.headers?.['Content-Type']) res.writeHeader('Content-Type', 'application/json');
  if (cors) for (const h in CORS_HEADERS) res.writeHeader(h, CORS_HEADERS[h]!);
  if (reply.headers) for (const h in reply.headers) res.writeHeader(h, reply.headers[h]!);
  res.end(reply.bytes ?? reply.body ?? '', close);
}

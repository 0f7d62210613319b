// One HTTP(S) request to a destination a tenant controls (an FCM token endpoint, a webhook), bounded so
// that the worst the other end can do is fail it: the answer is read up to `maxBytes` (then the
// connection is destroyed, never buffered on), the whole exchange (connect, TLS, answer) has a
// total deadline (not an idle timeout, which a server dripping a byte at a time never trips),
// and the destination rule (destinations.ts) is applied to the literal host and to every address
// DNS answers at connect time. Every failure is one of four kinds, without the socket's text,
// so what a tenant is shown cannot map the operator's network.
import http from 'node:http';
import https from 'node:https';
import type { TransportFailure } from '../domain/push-outcome.js';
import { DestinationRefused, type OutboundPolicy } from './destinations.js';

export class OutboundFailure extends Error {
  constructor(
    readonly kind: TransportFailure,
    /** The underlying error, for the operator's logs; never shown to a tenant. */
    readonly cause?: unknown,
  ) {
    super(kind);
  }
}

export interface BoundedRequest {
  method: string;
  headers?: Record<string, string | number>;
  body?: string;
  /** The destination rule, with the operator's allow-list. */
  outbound: OutboundPolicy;
  /** Trusted CAs instead of the system's (tests). */
  ca?: string | Buffer;
  maxBytes: number;
  deadlineMs: number;
}

export interface BoundedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Sends the request; rejects with an OutboundFailure only. */
export function boundedRequest(url: URL, opts: BoundedRequest): Promise<BoundedAnswer> {
  const secure = url.protocol === 'https:';
  const port = Number(url.port) || (secure ? 443 : 80);
  const refused = opts.outbound.refusal(url.hostname, port);
  if (refused) return Promise.reject(new OutboundFailure('refused', refused));
  return new Promise((resolve, reject) => {
    // The first failure is the one reported; destroying the request may raise another.
    const fail = (f: OutboundFailure) => {
      clearTimeout(deadline);
      reject(f);
      req.destroy();
    };
    const req = (secure ? https : http).request(url, {
      method: opts.method,
      headers: opts.headers,
      lookup: opts.outbound.lookupFor(port),
      ...(opts.ca ? { ca: opts.ca } : {}),
    });
    const deadline = setTimeout(() => fail(new OutboundFailure('timed_out')), opts.deadlineMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('error', (err) => fail(new OutboundFailure(err instanceof DestinationRefused ? 'refused' : 'unreachable', err)));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > opts.maxBytes) return fail(new OutboundFailure('too_large'));
        chunks.push(chunk);
      });
      res.on('error', (err) => fail(new OutboundFailure('unreachable', err)));
      res.on('end', () => {
        clearTimeout(deadline);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      });
    });
    req.end(opts.body);
  });
}

// The FCM OAuth access token of one service account: a JWT-bearer grant (RFC 7523) signed RS256
// with the account's private key, POSTed to the account's own `token_uri` (so a private gateway or
// a test's fake works; google-auth-library always posts to Google). The token is cached until
// shortly before it expires; concurrent callers share one fetch.
//
// The token_uri is the tenant's, so it is a tenant-set destination (docs/isolation.md): on Google's
// host unless the operator changed HERALD_FCM_ENDPOINT, never a private address unless allowed,
// and fetched with a capped answer and a total deadline (net/bounded-request.ts).
import { importPKCS8, SignJWT } from 'jose';
import { classifyTokenEndpoint, parseRetryAfter, transportOutcome, type PushOutcome } from '../../domain/push-outcome.js';
import { boundedRequest, OutboundFailure } from '../../net/bounded-request.js';
import type { OutboundPolicy } from '../../net/destinations.js';
import { logger } from '../../logger.js';

const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

/** The fields of a Google service-account JSON key this layer reads. */
export interface ServiceAccount {
  project_id: string;
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
}

/** The token could not be had: `outcome` is what every device of the send gets. */
export class TokenUnavailable extends Error {
  constructor(readonly outcome: Exclude<PushOutcome, { kind: 'delivered' | 'dead_token' }>) {
    super(outcome.error);
  }
}

/** A token is renewed this long before it expires (or at half its life, when that is sooner). */
const RENEW_MARGIN_MS = 5 * 60_000;

/** Google's token endpoint answers a few hundred bytes; an answer past this is refused unread. */
const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/** Where a service account's token_uri may point (docs/isolation.md). */
export interface TokenUriRule {
  /** HERALD_FCM_ENDPOINT is Google's: the token_uri must be on Google's token host too. */
  googleOnly: boolean;
  outbound: OutboundPolicy;
}

const GOOGLE_TOKEN_HOST = 'oauth2.googleapis.com';

/** What is wrong with `tokenUri` as a service account's token_uri under `rule`, or undefined. */
export function tokenUriProblem(tokenUri: string, rule: TokenUriRule): { refused: boolean; message: string } | undefined {
  let url: URL;
  try {
    url = new URL(tokenUri);
  } catch {
    return { refused: false, message: 'must be an https URL' };
  }
  if (url.protocol !== 'https:') return { refused: false, message: 'must be an https URL' };
  if (rule.googleOnly && (url.hostname !== GOOGLE_TOKEN_HOST || url.port !== '')) {
    return { refused: false, message: `must be on https://${GOOGLE_TOKEN_HOST} (HERALD_FCM_ENDPOINT is Google's)` };
  }
  if (rule.outbound.refusal(url.hostname, Number(url.port) || 443)) return { refused: true, message: 'must not be a private, loopback or link-local address (HERALD_ALLOWED_PRIVATE_HOSTS)' };
  return undefined;
}

export interface TokenSourceOptions {
  rule: TokenUriRule;
  ca?: string | Buffer;
  now?: () => number;
  /** The total deadline of one fetch, connection included (default 10 s). */
  deadlineMs?: number;
}

export class ServiceAccountTokenSource {
  private cached: { token: string; renewAt: number } | undefined;
  private inflight: Promise<string> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly account: ServiceAccount,
    private readonly opts: TokenSourceOptions,
  ) {
    for (const field of ['project_id', 'client_email', 'private_key', 'token_uri'] as const) {
      if (typeof account[field] !== 'string' || account[field] === '') {
        throw new TokenUnavailable({ kind: 'config_error', error: `the FCM service account has no ${field}` });
      }
    }
    // Checked when the channel is set, and again here: the rule or the allow-list may have changed since.
    const problem = tokenUriProblem(account.token_uri, opts.rule);
    if (problem?.refused) throw new TokenUnavailable(transportOutcome('FCM token endpoint', 'refused'));
    if (problem) throw new TokenUnavailable({ kind: 'config_error', error: `FCM token endpoint refused: the service account's token_uri ${problem.message}` });
    this.now = opts.now ?? Date.now;
  }

  /** The current access token, fetched when there is none or it is about to expire. Throws TokenUnavailable. */
  async token(): Promise<string> {
    if (this.cached && this.now() < this.cached.renewAt) return this.cached.token;
    this.inflight ??= this.fetch().finally(() => (this.inflight = undefined));
    return this.inflight;
  }

  /** Forgets the cached token (FCM said 401): the next send fetches a new one. */
  invalidate(): void {
    this.cached = undefined;
  }

  private async fetch(): Promise<string> {
    let assertion: string;
    try {
      const key = await importPKCS8(this.account.private_key, 'RS256');
      const header: { alg: string; typ: string; kid?: string } = { alg: 'RS256', typ: 'JWT' };
      if (this.account.private_key_id) header.kid = this.account.private_key_id;
      const iat = Math.floor(this.now() / 1000);
      assertion = await new SignJWT({ scope: FCM_SCOPE })
        .setProtectedHeader(header)
        .setIssuer(this.account.client_email)
        .setAudience(this.account.token_uri)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 3600)
        .sign(key);
    } catch (err) {
      throw new TokenUnavailable({ kind: 'config_error', error: `the FCM service account's private key is unusable: ${(err as Error).message}` });
    }
    const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString();
    const started = this.now();
    let res;
    try {
      res = await boundedRequest(new URL(this.account.token_uri), {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(form) },
        body: form,
        outbound: this.opts.rule.outbound,
        ca: this.opts.ca,
        maxBytes: MAX_TOKEN_ANSWER_BYTES,
        deadlineMs: this.opts.deadlineMs ?? 10_000,
      });
    } catch (err) {
      const failure = err instanceof OutboundFailure ? err : new OutboundFailure('unreachable', err);
      // The tenant is shown the class; the socket's own words are for the operator, at debug level.
      logger.debug('FCM token fetch failed', { kind: failure.kind, cause: failure.cause });
      throw new TokenUnavailable(transportOutcome('FCM token endpoint', failure.kind));
    }
    let body: unknown;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      body = undefined;
    }
    const b = body as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (res.status !== 200) {
      throw new TokenUnavailable(classifyTokenEndpoint(res.status, body, parseRetryAfter(res.headers['retry-after'], this.now())));
    }
    if (typeof b?.access_token !== 'string') throw new TokenUnavailable({ kind: 'retryable', error: 'FCM token endpoint answered 200 without an access token' });
    const lifeMs = (typeof b.expires_in === 'number' && b.expires_in > 0 ? b.expires_in : 3600) * 1000;
    this.cached = { token: b.access_token, renewAt: started + lifeMs - Math.min(RENEW_MARGIN_MS, lifeMs / 2) };
    return b.access_token;
  }
}

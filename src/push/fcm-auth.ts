// The FCM OAuth access token of one service account: a JWT-bearer grant (RFC 7523) signed RS256
// with the account's private key, POSTed to the account's own `token_uri` (so a private gateway or
// a test's fake works; google-auth-library always posts to Google). The token is cached until
// shortly before it expires; concurrent callers share one fetch.
import https from 'node:https';
import { importPKCS8, SignJWT } from 'jose';
import { classifyTokenEndpoint, parseRetryAfter, type PushOutcome } from '../domain/push-outcome.js';

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

export interface TokenSourceOptions {
  ca?: string | Buffer;
  now?: () => number;
  timeoutMs?: number;
}

export class ServiceAccountTokenSource {
  private cached: { token: string; renewAt: number } | undefined;
  private inflight: Promise<string> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly account: ServiceAccount,
    private readonly opts: TokenSourceOptions = {},
  ) {
    for (const field of ['project_id', 'client_email', 'private_key', 'token_uri'] as const) {
      if (typeof account[field] !== 'string' || account[field] === '') {
        throw new TokenUnavailable({ kind: 'config_error', error: `the FCM service account has no ${field}` });
      }
    }
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
    const res = await this.post(form);
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      body = undefined;
    }
    const b = body as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (res.status !== 200 || typeof b?.access_token !== 'string') {
      throw new TokenUnavailable(
        classifyTokenEndpoint(res.status === 200 ? 502 : res.status, body, parseRetryAfter(res.retryAfter, this.now())) as TokenUnavailable['outcome'],
      );
    }
    const lifeMs = (typeof b.expires_in === 'number' && b.expires_in > 0 ? b.expires_in : 3600) * 1000;
    this.cached = { token: b.access_token, renewAt: started + lifeMs - Math.min(RENEW_MARGIN_MS, lifeMs / 2) };
    return b.access_token;
  }

  private post(form: string): Promise<{ status: number; body: string; retryAfter: string | undefined }> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        this.account.token_uri,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(form) },
          timeout: this.opts.timeoutMs ?? 10_000,
          ...(this.opts.ca ? { ca: this.opts.ca } : {}),
        },
        (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (data += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data, retryAfter: res.headers['retry-after'] }));
          res.on('error', (err) => reject(new TokenUnavailable({ kind: 'retryable', error: `FCM OAuth token endpoint: ${err.message}` })));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (err) => reject(new TokenUnavailable({ kind: 'retryable', error: `FCM OAuth token endpoint unreachable: ${err.message}` })));
      req.end(form);
    });
  }
}

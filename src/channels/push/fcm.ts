// FCM HTTP v1 (docs/channels.md): `POST {endpoint}/v1/projects/<project_id>/messages:send`, one
// request per device, over this credential's own long-lived HTTP/2 session pool, with the
// service account's OAuth access token. firebase-admin is not used: it hard-codes its host and
// opens a session per call.
import { classifyFcm, fcmData, parseRetryAfter, transportOutcome, type PushOutcome } from '../../domain/push-outcome.js';
import { OutboundFailure } from '../../net/bounded-request.js';
import { ServiceAccountTokenSource, TokenUnavailable, type ServiceAccount, type TokenUriRule } from './fcm-auth.js';
import { Http2Pool } from './http2-pool.js';
import { logger } from '../../logger.js';
import type { PushDevice, PushMessage, PushProvider } from './types.js';

export interface FcmProviderOptions {
  /** Base URL (config `HERALD_FCM_ENDPOINT`), e.g. `https://fcm.googleapis.com`. */
  endpoint: string;
  /** Where the service account's token_uri may point (docs/isolation.md). */
  tokenUriRule: TokenUriRule;
  /** Trusted CAs instead of the system's, for the FCM endpoint and the token endpoint (tests). */
  ca?: string | Buffer;
  maxStreamsPerSession?: number;
  /** The total deadline of one token fetch and of one FCM request (default 10 s each). */
  deadlineMs?: number;
  /** For tests: the clock the token cache reads. */
  now?: () => number;
}

/** The FCM v1 request body for one device. */
function fcmRequestBody(message: PushMessage, device: PushDevice): { message: Record<string, unknown> } {
  const out: Record<string, unknown> = { token: device.token };
  const notification: Record<string, string> = {};
  if (message.title !== undefined) notification.title = message.title;
  if (message.body !== undefined) notification.body = message.body;
  if (message.imageUrl !== undefined) notification.image = message.imageUrl;
  if (Object.keys(notification).length > 0) out.notification = notification;
  const data = fcmData(message.data);
  if (message.actionUrl !== undefined) {
    if (device.platform === 'web' && message.actionUrl.startsWith('https://')) out.webpush = { fcm_options: { link: message.actionUrl } };
    else data.action_url ??= message.actionUrl;
  }
  if (Object.keys(data).length > 0) out.data = data;
  if (device.platform === 'android') out.android = { priority: 'high' };
  return { message: out };
}

export class FcmProvider implements PushProvider {
  readonly name = 'fcm';
  private readonly pool: Http2Pool;
  private readonly tokens: ServiceAccountTokenSource | undefined;
  /** Set when the service account is unusable: every device gets this configuration error. */
  private readonly broken: PushOutcome | undefined;
  private readonly path: string;

  constructor(account: ServiceAccount, opts: FcmProviderOptions) {
    try {
      this.tokens = new ServiceAccountTokenSource(account, { rule: opts.tokenUriRule, ca: opts.ca, now: opts.now, deadlineMs: opts.deadlineMs });
    } catch (err) {
      this.broken = err instanceof TokenUnavailable ? err.outcome : { kind: 'config_error', error: `the FCM service account is unusable: ${(err as Error).message}` };
    }
    const base = new URL(opts.endpoint);
    this.path = `${base.pathname.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(account.project_id ?? '')}/messages:send`;
    this.pool = new Http2Pool(base.origin, { ca: opts.ca, maxStreamsPerSession: opts.maxStreamsPerSession, deadlineMs: opts.deadlineMs });
  }

  /** The session pool (tests look at how many sessions it opened). */
  get sessions(): Http2Pool {
    return this.pool;
  }

  send(message: PushMessage, devices: readonly PushDevice[]): Promise<PushOutcome[]> {
    return Promise.all(devices.map((d) => this.sendOne(message, d)));
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async sendOne(message: PushMessage, device: PushDevice): Promise<PushOutcome> {
    if (this.broken || !this.tokens) return this.broken ?? { kind: 'config_error', error: 'no FCM credentials' };
    let token: string;
    try {
      token = await this.tokens.token();
    } catch (err) {
      if (err instanceof TokenUnavailable) return err.outcome;
      return transportOutcome('FCM token endpoint', 'unreachable');
    }
    let res;
    try {
      res = await this.pool.request(
        this.path,
        { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' },
        JSON.stringify(fcmRequestBody(message, device)),
      );
    } catch (err) {
      const failure = err instanceof OutboundFailure ? err : new OutboundFailure('unreachable', err);
      logger.debug('FCM request failed', { kind: failure.kind, cause: failure.cause });
      return transportOutcome('FCM', failure.kind);
    }
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      body = undefined;
    }
    // A revoked or expired access token: fetch a fresh one for the next send.
    if (res.status === 401) this.tokens.invalidate();
    return classifyFcm(res.status, body, parseRetryAfter(res.headers['retry-after'], Date.now()));
  }
}

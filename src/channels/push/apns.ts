// APNs with token auth through @parse/node-apn (docs/channels.md): a .p8 key, key id, team id and
// bundle id (the topic); `production` picks Apple's host, and an endpoint (config
// `HERALD_APNS_ENDPOINT`, a base URL) replaces both hosts. One node-apn Provider (one HTTP/2
// session) per credential, long-lived. node-apn's own retries are off (connectionRetryLimit 0):
// retries are sendWithRetries' alone. node-apn does not pass APNs's Retry-After on (it reads the
// header as `Retry-After`, which HTTP/2 never delivers, and deletes it from its errors), so APNs
// retries use the back-off.
//
// Each device's request has a total deadline (node-apn's requestTimeout is an idle timeout only;
// it is set to the same time, so a stalled stream is cancelled by then too). A request without an
// answer is "APNs unreachable" or "APNs timed out", never node-apn's socket text. node-apn reads
// answer bodies itself, uncapped: the APNs host is Apple's or the operator's HERALD_APNS_ENDPOINT,
// never one a tenant sets.
import apn from '@parse/node-apn';
import { apnsData, classifyApns, transportOutcome, type PushOutcome } from '../../domain/push-outcome.js';
import type { PushDevice, PushMessage, PushProvider } from './types.js';
import { logger } from '../../logger.js';

export interface ApnsCredentials {
  /** The .p8 key's PEM text. */
  keyP8: string;
  keyId: string;
  teamId: string;
  /** The app's bundle id: the `apns-topic`. */
  bundleId: string;
  production: boolean;
}

export interface ApnsProviderOptions {
  /** Base URL replacing both APNs hosts, e.g. `https://127.0.0.1:8443` (config `HERALD_APNS_ENDPOINT`). */
  endpoint?: string;
  /** Trusted CAs instead of the system's (tests). */
  ca?: string | Buffer;
  /** The total deadline of one device's request (default 10 s). */
  deadlineMs?: number;
}

/** The notification node-apn sends for a message: alert, topic, custom data without `aps`. */
function notificationFor(message: PushMessage, bundleId: string): apn.Notification {
  const n = new apn.Notification();
  n.topic = bundleId;
  n.pushType = 'alert';
  const alert: { title?: string; body: string } = { body: message.body ?? '' };
  if (message.title !== undefined) alert.title = message.title;
  n.alert = alert;
  const payload = apnsData(message.data);
  if (message.imageUrl !== undefined) {
    n.mutableContent = true;
    payload.image_url ??= message.imageUrl;
  }
  if (message.actionUrl !== undefined) payload.action_url ??= message.actionUrl;
  n.payload = payload;
  return n;
}

export class ApnsProvider implements PushProvider {
  readonly name = 'apns';
  private readonly provider: apn.Provider | undefined;
  private readonly broken: PushOutcome | undefined;
  private readonly deadlineMs: number;

  constructor(
    private readonly creds: ApnsCredentials,
    opts: ApnsProviderOptions = {},
  ) {
    this.deadlineMs = opts.deadlineMs ?? 10_000;
    const missing = (['keyP8', 'keyId', 'teamId', 'bundleId'] as const).filter((f) => typeof creds[f] !== 'string' || creds[f] === '');
    if (missing.length > 0) {
      this.broken = { kind: 'config_error', error: `the APNs credentials lack ${missing.join(', ')}` };
      return;
    }
    const options: apn.ProviderOptions = {
      token: { key: creds.keyP8, keyId: creds.keyId, teamId: creds.teamId },
      production: creds.production,
      connectionRetryLimit: 0,
      requestTimeout: this.deadlineMs,
    };
    if (opts.endpoint) {
      const url = new URL(opts.endpoint);
      options.address = url.hostname.replace(/^\[|\]$/g, '');
      options.port = url.port ? Number(url.port) : 443;
    }
    if (opts.ca) options.ca = [opts.ca];
    try {
      this.provider = new apn.Provider(options);
    } catch (err) {
      // node-apn signs a provider token at once: an unreadable .p8 fails here.
      this.broken = { kind: 'config_error', error: `the APNs key is unusable: ${(err as Error).message}` };
    }
  }

  async send(message: PushMessage, devices: readonly PushDevice[]): Promise<PushOutcome[]> {
    const provider = this.provider;
    if (!provider) return devices.map(() => this.broken ?? { kind: 'config_error', error: 'no APNs credentials' });
    const notification = notificationFor(message, this.creds.bundleId);
    const byToken = new Map<string, Promise<PushOutcome>>();
    for (const d of devices) if (!byToken.has(d.token)) byToken.set(d.token, this.withinDeadline(this.sendOne(provider, notification, d.token)));
    return Promise.all(devices.map((d) => byToken.get(d.token)!));
  }

  /** One device: each has its own deadline, so the answers that came are kept when another times out. */
  private async withinDeadline(sending: Promise<PushOutcome>): Promise<PushOutcome> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<PushOutcome>((resolve) => (timer = setTimeout(() => resolve(transportOutcome('APNs', 'timed_out')), this.deadlineMs)));
    try {
      return await Promise.race([sending, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async sendOne(provider: apn.Provider, notification: apn.Notification, token: string): Promise<PushOutcome> {
    let result: apn.Responses<apn.ResponseSent, apn.ResponseFailure>;
    try {
      result = await provider.send(notification, token);
    } catch {
      return transportOutcome('APNs', 'unreachable');
    }
    const sent = result.sent[0];
    if (sent) return classifyApns(200, undefined, (sent as { 'apns-id'?: string })['apns-id']);
    const failed = result.failed[0];
    if (typeof failed?.status === 'number') return classifyApns(failed.status, failed.response?.reason);
    // No answer: node-apn's error says why in its own words, which name hosts and ports (for the operator only).
    logger.debug('APNs request failed', { cause: failed?.error });
    return transportOutcome('APNs', /timeout/i.test(failed?.error?.message ?? '') ? 'timed_out' : 'unreachable');
  }

  async close(): Promise<void> {
    await this.provider?.shutdown();
  }
}

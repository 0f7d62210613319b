// APNs with token auth through @parse/node-apn (DECISIONS §9): a .p8 key, key id, team id and
// bundle id (the topic); `production` picks Apple's host, and an endpoint (config
// `HERALD_APNS_ENDPOINT`, a base URL) replaces both hosts. One node-apn Provider (one HTTP/2
// session) per credential, long-lived. node-apn's own retries are off (connectionRetryLimit 0):
// retries are sendWithRetries' alone. node-apn does not pass APNs's Retry-After on (it reads the
// header as `Retry-After`, which HTTP/2 never delivers, and deletes it from its errors), so APNs
// retries use the back-off.
import apn from '@parse/node-apn';
import { apnsData, classifyApns, type PushOutcome } from '../domain/push-outcome.js';
import type { PushDevice, PushMessage, PushProvider } from './types.js';

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
  requestTimeoutMs?: number;
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

  constructor(
    private readonly creds: ApnsCredentials,
    opts: ApnsProviderOptions = {},
  ) {
    const missing = (['keyP8', 'keyId', 'teamId', 'bundleId'] as const).filter((f) => typeof creds[f] !== 'string' || creds[f] === '');
    if (missing.length > 0) {
      this.broken = { kind: 'config_error', error: `the APNs credentials lack ${missing.join(', ')}` };
      return;
    }
    const options: apn.ProviderOptions = {
      token: { key: creds.keyP8, keyId: creds.keyId, teamId: creds.teamId },
      production: creds.production,
      connectionRetryLimit: 0,
      requestTimeout: opts.requestTimeoutMs ?? 10_000,
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
    if (!this.provider) return devices.map(() => this.broken ?? { kind: 'config_error', error: 'no APNs credentials' });
    const tokens = [...new Set(devices.map((d) => d.token))];
    let result: apn.Responses<apn.ResponseSent, apn.ResponseFailure>;
    try {
      result = await this.provider.send(notificationFor(message, this.creds.bundleId), tokens);
    } catch (err) {
      return devices.map(() => ({ kind: 'retryable', error: `APNs: ${(err as Error).message}` }));
    }
    const byToken = new Map<string, PushOutcome>();
    for (const sent of result.sent) {
      byToken.set(sent.device, classifyApns(200, undefined, (sent as { 'apns-id'?: string })['apns-id']));
    }
    for (const failed of result.failed) {
      const reason = failed.response?.reason ?? failed.error?.message;
      byToken.set(failed.device, classifyApns(typeof failed.status === 'number' ? failed.status : undefined, reason));
    }
    return devices.map((d) => byToken.get(d.token) ?? { kind: 'retryable', error: 'APNs: no result for this device' });
  }

  async close(): Promise<void> {
    await this.provider?.shutdown();
  }
}

// What the channels need from the server's settings (docs/channels.md; docs/isolation.md), one per
// actor: where links and callback URLs point, where a tenant's hosts may be, which channels send
// through their sandbox in a workspace that has not configured them, the providers' endpoints,
// the seal of the channels' settings, and how long a test send may wait for a provider. What each
// channel makes of them is its own (channels/<name>/).
import type { AllowList } from '../net/destinations.js';
import type { SecretBox } from '../util/sealing.js';
import { unsubscribeKey } from './email/unsubscribe.js';
import { DEFAULT_RETRY_POLICY } from '../domain/push-outcome.js';

type ProviderMode = 'sandbox' | 'live';

export interface MessagingSettings {
  /** HERALD_PUBLIC_URL without a final slash: the base of unsubscribe links and callback URLs. */
  publicUrl: string;
  /** The private hosts a tenant's destinations may name (HERALD_ALLOWED_PRIVATE_HOSTS). */
  allowedPrivateHosts: AllowList;
  /** By channel name: whether a workspace without the channel configured sends through its sandbox (HERALD_<CHANNEL>_PROVIDER). */
  providerModes: Readonly<Record<string, ProviderMode>>;
  /** By provider name: where its API is (HERALD_TWILIO_ENDPOINT). */
  endpoints: Readonly<Record<string, string>>;
  /** Seals the channels' settings. */
  secrets: SecretBox;
  /** Signs unsubscribe tokens (email/unsubscribe.ts). */
  unsubscribeKey: Buffer;
  /**
   * How long a test send may be with the provider, retries included: half the request timeout
   * (the other half for the reads before and the record after), at most the retry budget. What
   * the provider has not answered by then is recorded and answered `failed`.
   */
  testSendDeadlineMs: number;
}

interface From {
  /** HERALD_PUBLIC_URL, else the address Herald listens on (computed once listening: port 0 is a port picked then). */
  publicUrl: string;
  allowedPrivateHosts: AllowList;
  twilioEndpoint: string;
  emailProvider: ProviderMode;
  smsProvider: ProviderMode;
  requestTimeoutMs: number;
}

export function messagingSettings(cfg: From, secrets: SecretBox, secretsKey: Buffer): MessagingSettings {
  return {
    publicUrl: cfg.publicUrl,
    allowedPrivateHosts: cfg.allowedPrivateHosts,
    providerModes: { email: cfg.emailProvider, sms: cfg.smsProvider },
    endpoints: { twilio: cfg.twilioEndpoint },
    secrets,
    unsubscribeKey: unsubscribeKey(secretsKey),
    testSendDeadlineMs: Math.min(cfg.requestTimeoutMs / 2, DEFAULT_RETRY_POLICY.maxElapsedMs),
  };
}

/** Whether a workspace without `channel` configured sends through its sandbox. */
export const sandboxed = (s: Pick<MessagingSettings, 'providerModes'>, channel: string): boolean => s.providerModes[channel] === 'sandbox';

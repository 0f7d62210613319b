// What the email and SMS channels need from the server's settings (docs/channels.md; docs/isolation.md), one per
// actor: where links and callback URLs point, where a tenant's SMTP host may be, Twilio's host,
// what a workspace without a channel sends through, and how long a test send may wait for a relay.
import { OutboundPolicy, type AllowList } from '../net/destinations.js';
import type { SecretBox } from '../util/sealing.js';
import { unsubscribeKey } from './email/unsubscribe.js';
import { SMTP_PORTS } from './email/transport.js';
import { DEFAULT_RETRY_POLICY } from '../domain/push-outcome.js';

export interface MessagingSettings {
  /** HERALD_PUBLIC_URL without a final slash: the base of unsubscribe links and callback URLs. */
  publicUrl: string;
  /** Where a tenant's SMTP host may be: global addresses on SMTP_PORTS, or what the allow-list names. */
  outbound: OutboundPolicy;
  twilioEndpoint: string;
  emailMode: 'sandbox' | 'live';
  smsMode: 'sandbox' | 'live';
  /** Seals the channels' settings. */
  secrets: SecretBox;
  /** Signs unsubscribe tokens (email/unsubscribe.ts). */
  unsubscribeKey: Buffer;
  /**
   * How long a test send's email may be with the SMTP relay, retries included: half the request
   * timeout (the other half for the reads before and the record after), at most the retry budget.
   * What the relay has not answered by then is recorded and answered `failed` (`smtp_timeout`).
   */
  testSendDeadlineMs: number;
}

interface From {
  /** HERALD_PUBLIC_URL, else the address Herald listens on (computed once listening: port 0 is a port picked then). */
  publicUrl: string;
  allowedPrivateHosts: AllowList;
  twilioEndpoint: string;
  emailProvider: 'sandbox' | 'live';
  smsProvider: 'sandbox' | 'live';
  requestTimeoutMs: number;
}

export function messagingSettings(cfg: From, secrets: SecretBox, secretsKey: Buffer): MessagingSettings {
  return {
    publicUrl: cfg.publicUrl,
    outbound: new OutboundPolicy(cfg.allowedPrivateHosts, SMTP_PORTS),
    twilioEndpoint: cfg.twilioEndpoint,
    emailMode: cfg.emailProvider,
    smsMode: cfg.smsProvider,
    secrets,
    unsubscribeKey: unsubscribeKey(secretsKey),
    testSendDeadlineMs: Math.min(cfg.requestTimeoutMs / 2, DEFAULT_RETRY_POLICY.maxElapsedMs),
  };
}

/** The callback URLs an operator pastes into the provider's console. */
export const callbackUrls = (s: Pick<MessagingSettings, 'publicUrl'>, workspaceId: string) => ({
  email: `${s.publicUrl}/webhooks/email/${workspaceId}`,
  smsStatus: `${s.publicUrl}/webhooks/sms/${workspaceId}/status`,
  smsInbound: `${s.publicUrl}/webhooks/sms/${workspaceId}/inbound`,
});

// What the email and SMS channels need from the server's settings (DECISIONS §13, §15), one per
// actor: where links and callback URLs point, where a tenant's SMTP host may be, Twilio's host,
// and what a workspace without a channel sends through.
import { OutboundPolicy, type AllowList } from '../net/destinations.js';
import type { SecretBox } from '../util/sealing.js';
import { unsubscribeKey } from '../email/unsubscribe.js';

export interface MessagingSettings {
  /** HERALD_PUBLIC_URL without a final slash: the base of unsubscribe links and callback URLs. */
  publicUrl: string;
  outbound: OutboundPolicy;
  twilioEndpoint: string;
  emailMode: 'sandbox' | 'live';
  smsMode: 'sandbox' | 'live';
  /** Seals the channels' settings. */
  secrets: SecretBox;
  /** Signs unsubscribe tokens (email/unsubscribe.ts). */
  unsubscribeKey: Buffer;
}

interface From {
  /** HERALD_PUBLIC_URL, else the address Herald listens on (computed once listening: port 0 is a port picked then). */
  publicUrl: string;
  allowedPrivateHosts: AllowList;
  twilioEndpoint: string;
  emailProvider: 'sandbox' | 'live';
  smsProvider: 'sandbox' | 'live';
}

export function messagingSettings(cfg: From, secrets: SecretBox, secretsKey: Buffer): MessagingSettings {
  return {
    publicUrl: cfg.publicUrl,
    outbound: new OutboundPolicy(cfg.allowedPrivateHosts),
    twilioEndpoint: cfg.twilioEndpoint,
    emailMode: cfg.emailProvider,
    smsMode: cfg.smsProvider,
    secrets,
    unsubscribeKey: unsubscribeKey(secretsKey),
  };
}

/** The callback URLs an operator pastes into the provider's console. */
export const callbackUrls = (s: Pick<MessagingSettings, 'publicUrl'>, workspaceId: string) => ({
  email: `${s.publicUrl}/webhooks/email/${workspaceId}`,
  smsStatus: `${s.publicUrl}/webhooks/sms/${workspaceId}/status`,
  smsInbound: `${s.publicUrl}/webhooks/sms/${workspaceId}/inbound`,
});

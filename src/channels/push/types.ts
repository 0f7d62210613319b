// The push provider layer's one interface (docs/channels.md): a provider takes one message and the
// devices to send it to, and answers one classified outcome per device, in order. Providers never
// throw for a provider's answer or a lost connection: that is an outcome.
import type { PushOutcome } from '../../domain/push-outcome.js';
import type { DevicePlatform } from '../../domain/tokens.js';

/** What is sent, already rendered (templates are the caller's). */
export interface PushMessage {
  title?: string;
  body?: string;
  imageUrl?: string;
  actionUrl?: string;
  /** Custom data, carried verbatim; each provider strips the keys it reserves. */
  data?: Record<string, unknown>;
}

export interface PushDevice {
  token: string;
  platform: DevicePlatform;
}

export interface PushProvider {
  /** The provider's code, as a push send result's `provider` reports it: `fcm`, `apns`, `sandbox`. */
  readonly name: string;
  /** One outcome per device, in the order of `devices`. */
  send(message: PushMessage, devices: readonly PushDevice[]): Promise<PushOutcome[]>;
  /** Closes connections; sends after this fail. */
  close(): Promise<void>;
}

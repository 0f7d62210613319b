// A platform with no usable credentials in its workspace (docs/channels.md): none configured while
// the sandbox is not in use, or stored ones that cannot be opened. Every device is a
// configuration error naming the channel; nothing is sent.
import type { PushOutcome } from '../../domain/push-outcome.js';
import type { PushDevice, PushMessage, PushProvider } from './types.js';

export class UnconfiguredProvider implements PushProvider {
  constructor(
    readonly name: string,
    channel: string,
    /** Why the stored credentials are unusable; by default there are none. */
    private readonly reason = `no ${channel} credentials are configured in this workspace`,
  ) {}

  async send(_message: PushMessage, devices: readonly PushDevice[]): Promise<PushOutcome[]> {
    return devices.map(() => ({ kind: 'config_error', error: this.reason }));
  }

  async close(): Promise<void> {}
}

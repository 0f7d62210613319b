// A platform with no credentials in its workspace while the sandbox is not in use (DECISIONS
// §11): every device is a configuration error naming the missing channel; nothing is sent.
import type { PushOutcome } from '../domain/push-outcome.js';
import type { PushDevice, PushMessage, PushProvider } from './types.js';

export class UnconfiguredProvider implements PushProvider {
  constructor(
    readonly name: string,
    private readonly channel: string,
  ) {}

  async send(_message: PushMessage, devices: readonly PushDevice[]): Promise<PushOutcome[]> {
    return devices.map(() => ({ kind: 'config_error', error: `no ${this.channel} credentials are configured in this workspace` }));
  }

  async close(): Promise<void> {}
}

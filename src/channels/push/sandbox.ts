// The sandbox provider (docs/channels.md): accepts every send, with test tokens in the manner of card
// test numbers: `fail-…` is refused by the "provider", `unregistered-…` is a dead token.
import { randomUUID } from 'node:crypto';
import type { PushOutcome } from '../../domain/push-outcome.js';
import type { PushDevice, PushMessage, PushProvider } from './types.js';

export class SandboxProvider implements PushProvider {
  readonly name = 'sandbox';

  async send(_message: PushMessage, devices: readonly PushDevice[]): Promise<PushOutcome[]> {
    return devices.map((d): PushOutcome => {
      if (d.token.startsWith('fail-')) return { kind: 'rejected', error: 'provider refused the message (sandbox test token fail-…)' };
      if (d.token.startsWith('unregistered-')) {
        return { kind: 'dead_token', suppression: 'uninstalled', error: 'token no longer valid (sandbox test token unregistered-…)' };
      }
      return { kind: 'delivered', providerMessageId: `sandbox-${randomUUID()}` };
    });
  }

  async close(): Promise<void> {}
}

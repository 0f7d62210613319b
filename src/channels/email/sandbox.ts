// The email sandbox (docs/channels.md), in the manner of Amazon SES's mailbox simulator: a
// message to any address is accepted; what the provider would report of it later is applied
// through the callback applier (channels/callbacks.ts), so the message, the address
// suppressions and the person change as a real provider's callback changes them.
import type { ProviderEventKind } from '../../domain/messages.js';

export function sandboxEmailEvent(address: string): Extract<ProviderEventKind, 'hard_bounce' | 'complaint' | 'delivered'> {
  switch (address.toLowerCase()) {
    case 'bounce@simulator.herald.test':
      return 'hard_bounce';
    case 'complaint@simulator.herald.test':
      return 'complaint';
    default:
      return 'delivered';
  }
}

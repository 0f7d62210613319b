// A push provider call under the channels' retry rule (channels/retry.ts): the devices whose
// outcome is `retryable` are sent again, timed for the providers metric.
import type { PushOutcome } from '../../domain/push-outcome.js';
import type { PushDevice, PushMessage, PushProvider } from './types.js';
import { timedProviderCall } from '../../metrics/index.js';
import { withRetries, type RetryOptions } from '../retry.js';

export async function sendWithRetries(provider: PushProvider, message: PushMessage, devices: readonly PushDevice[], opts: RetryOptions = {}): Promise<PushOutcome[]> {
  const send = (some: readonly PushDevice[]) => timedProviderCall(provider.name, () => provider.send(message, some));
  return withRetries(devices, send, (o) => (o.kind === 'retryable' ? { retryAfterMs: o.retryAfterMs } : undefined), opts);
}

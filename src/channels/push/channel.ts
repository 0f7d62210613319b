// The push channel (docs/channels.md): a person's sendable devices, each through its platform's
// provider (channels/push/registry.ts); sent by the push engine (channels/push/engine.ts) through
// the decisions every channel shares, the whole send policy included.
import type { Channel } from '../channel.js';

export const push: Channel = { name: 'push', stopsAtBounce: false, policy: 'all' };

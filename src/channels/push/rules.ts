// What the push channel declares to the decisions (docs/channels.md): a `bounced` person still
// gets pushes, and the whole send policy applies (quiet hours and both caps).
import type { ChannelRules } from '../channel.js';

export const PUSH_RULES: ChannelRules = { name: 'push', stopsAtBounce: false, policy: 'all' };

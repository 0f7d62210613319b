// The channel registry (docs/channels.md, "The channel model"): every channel a message goes out
// with one address a person, by its name (push, sent to devices, is channels/push/). Adding a
// channel is its folder, a line here and its migration.
import type { AddressChannel } from '../domain/messages.js';
import type { AddressedChannel } from './channel.js';
import { email } from './email/index.js';
import { sms } from './sms/index.js';

export const ADDRESSED_CHANNELS: Readonly<Record<AddressChannel, AddressedChannel>> = {
  email,
  sms,
};

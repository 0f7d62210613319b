// The channel registry (docs/channels.md, "The channel model"): every channel by its name, each
// the one entry its nodes are sent through. Push addresses a person's devices through its engine
// (channels/push/); the channels that send a person one message at one address declare that
// address and their providers, and share the send path (channels/send.ts). Adding a channel is
// its folder, a line here and its migration.
import type { AddressChannel, Channel as ChannelName } from '../domain/messages.js';
import type { AddressedChannel, Channel } from './channel.js';
import { push } from './push/channel.js';
import { email } from './email/index.js';
import { sms } from './sms/index.js';
import { webhook } from './webhook/index.js';

export const ADDRESSED_CHANNELS: Readonly<Record<AddressChannel, AddressedChannel>> = {
  email,
  sms,
};

export const CHANNELS: Readonly<Record<ChannelName, Channel>> = { push, ...ADDRESSED_CHANNELS, webhook };

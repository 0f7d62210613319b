// Channel settings (docs/channels.md), session routes: PUT /channels/<name> (owners and admins) is
// partial, a field omitted keeps its stored value, `null` removes an optional one, and the
// provider's key set to `null` (`smtp: null`, `twilio: null`) removes the channel. GET /channels
// (any member) answers every channel with its non-secret identifiers and the callback URLs to
// paste into the provider's console; passwords, tokens and keys are never echoed. What a channel's
// settings hold and how they are checked is the channel's (channels/<name>/settings.ts); they are
// stored sealed under HERALD_SECRETS_KEY (store/channel-settings.ts).
import type { Handler, Handlers, Ctx } from './context.js';
import { json } from './reply.js';
import { requireManager } from './workspaces.js';
import { describePush } from './channels.js';
import { loadPushChannels, type Queryable } from '../store/index.js';
import { ADDRESSED_CHANNELS } from '../channels/index.js';
import type { AddressedChannel, SettingsDeps } from '../channels/channel.js';

const depsOf = (ctx: Pick<Ctx, 'messaging' | 'pools'>): SettingsDeps => ({ settings: ctx.messaging, pools: ctx.pools });

/** GET /channels, and what each PUT answers. */
async function present(q: Queryable, deps: SettingsDeps, workspaceId: string) {
  const channels = Object.values(ADDRESSED_CHANNELS);
  const [push, ...described] = await Promise.all([loadPushChannels(q, deps.settings.secrets, workspaceId), ...channels.map((c) => c.settings.describe(q, deps, workspaceId))]);
  return json(200, { success: true, data: { push: describePush(push), ...Object.fromEntries(channels.map((c, i) => [c.name, described[i]])) } });
}

const get: Handler = (ctx) => present(ctx.db, depsOf(ctx), ctx.workspaceId);

/** PUT /channels/<name>: the channel's settings changed within one transaction, its row locked. */
const put =
  (channel: AddressedChannel): Handler =>
  async (ctx) => {
    requireManager(ctx);
    const deps = depsOf(ctx);
    await ctx.db.tx((q) => channel.settings.put(q, deps, ctx.workspaceId, ctx.body));
    return present(ctx.db, deps, ctx.workspaceId);
  };

export const messageChannelHandlers = {
  'PUT /workspaces/{workspaceId}/channels/email': put(ADDRESSED_CHANNELS.email),
  'PUT /workspaces/{workspaceId}/channels/sms': put(ADDRESSED_CHANNELS.sms),
  'GET /workspaces/{workspaceId}/channels': get,
} satisfies Handlers;

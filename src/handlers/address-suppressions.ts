// Address suppressions (docs/channels.md), session routes for the dashboard: the email addresses
// and phone numbers a workspace sends nothing to, whether bounces, complaints, dead numbers and
// STOPs put them there or a person did (`manual`). Any member reads; owners and admins write.
import type { Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { requireManager } from './workspaces.js';
import { DomainError } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { isUuid } from '../ids.js';
import { ADDRESSED_CHANNELS } from '../channels/index.js';
import { addressSuppression, deleteAddressSuppression, listAddressSuppressions, suppressAddress, type AddressSuppressionRow } from '../store/index.js';
import type { AddressChannel } from '../domain/messages.js';

const MAX_LIMIT = 200;

const present = (r: AddressSuppressionRow) => ({ id: r.id, channel: r.channel, address: r.address, suppression_type: r.suppression_type, reason: r.reason, created_at: iso(r.created_at) });

const list: Handler = async (ctx) => {
  const { channel, limit, offset, q } = ctx.query as { channel?: AddressChannel; limit: number; offset: number; q?: string };
  // Stored in lower case (email) or E.164 (no letters): the search is too.
  const { rows, total } = await listAddressSuppressions(ctx.db, ctx.workspaceId, channel, Math.min(limit, MAX_LIMIT), offset, q?.trim().toLowerCase() || undefined);
  return json(200, { success: true, suppressions: rows.map(present), total });
};

const create: Handler = async (ctx) => {
  requireManager(ctx);
  const { channel, address, reason } = ctx.body as { channel: AddressChannel; address: string; reason?: string };
  // As the channel stores its addresses (email in lower case, numbers in E.164).
  const stored = ADDRESSED_CHANNELS[channel].suppressionAddress(address);
  const row = await ctx.db.tx(async (q) => {
    await suppressAddress(q, ctx.workspaceId, channel, stored, 'manual', reason ?? null);
    return addressSuppression(q, ctx.workspaceId, channel, stored, 'manual');
  });
  return json(201, { success: true, suppression: present(row) });
};

const remove: Handler<'DELETE /workspaces/{workspaceId}/suppressions/{suppressionId}'> = async (ctx) => {
  requireManager(ctx);
  const id = ctx.params.suppressionId;
  if (!isUuid(id) || !(await deleteAddressSuppression(ctx.db, ctx.workspaceId, id.toLowerCase()))) throw new DomainError('NOT_FOUND', 'Suppression not found');
  return json(200, { success: true, message: 'Suppression lifted' });
};

export const addressSuppressionHandlers = {
  'GET /workspaces/{workspaceId}/suppressions': list,
  'POST /workspaces/{workspaceId}/suppressions': create,
  'DELETE /workspaces/{workspaceId}/suppressions/{suppressionId}': remove,
} satisfies Handlers;

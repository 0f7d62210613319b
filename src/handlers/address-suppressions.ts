// Address suppressions (docs/channels.md), session routes for the dashboard: the email addresses
// and phone numbers a workspace sends nothing to, whether bounces, complaints, dead numbers and
// STOPs put them there or a person did (`manual`). Any member reads; owners and admins write.
import type { Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { compileBody } from './validation.js';
import { requireManager } from './workspaces.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { isUuid } from '../ids.js';
import { e164 } from '../sms/phone.js';
import { addressSuppression, deleteAddressSuppression, listAddressSuppressions, suppressAddress, type AddressSuppressionRow } from '../store/index.js';
import type { AddressChannel } from '../domain/messages.js';
import { email } from '../../schemas/message-channels.js';

const MAX_LIMIT = 200;
const isEmail = compileBody(email);

const present = (r: AddressSuppressionRow) => ({ id: r.id, channel: r.channel, address: r.address, suppression_type: r.suppression_type, reason: r.reason, created_at: iso(r.created_at) });

const list: Handler = async (ctx) => {
  const { channel, limit, offset, q } = ctx.query as { channel?: AddressChannel; limit: number; offset: number; q?: string };
  // Stored in lower case (email) or E.164 (no letters): the search is too.
  const { rows, total } = await listAddressSuppressions(ctx.db, ctx.workspaceId, channel, Math.min(limit, MAX_LIMIT), offset, q?.trim().toLowerCase() || undefined);
  return json(200, { success: true, suppressions: rows.map(present), total });
};

/** `address` as suppressions store it: a number in E.164, an email address in lower case. */
function storedAddress(channel: AddressChannel, address: string): string {
  if (channel === 'sms') {
    const number = e164(address);
    if (!number) throw new InvalidInput('Request body is invalid: address must be a phone number in E.164 (+ and the country code)', [{ field: 'address', message: 'must be a phone number in E.164' }]);
    return number;
  }
  const lower = address.trim().toLowerCase();
  if (!isEmail(lower)) throw new InvalidInput('Request body is invalid: address must be an email address', [{ field: 'address', message: 'must be an email address' }]);
  return lower;
}

const create: Handler = async (ctx) => {
  requireManager(ctx);
  const { channel, address, reason } = ctx.body as { channel: AddressChannel; address: string; reason?: string };
  const stored = storedAddress(channel, address);
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

// Token suppression and validation (docs/channels.md; README, Request bodies and Routes), in the key's
// workspace (the front has checked the path's); the dashboard lists, suppresses and lifts by
// session under /push/suppressions. What the bodies may hold is the schemas'
// (schemas/push.ts); a token is only ever echoed masked.
import type { Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { maskToken, tokenFormatValid, tokenProblem } from '../domain/tokens.js';
import { isUuid } from '../ids.js';
import { devicesByTokens, liftSuppression, listSuppressions, pushMessageExists, suppressedAmong, suppressToken } from '../store/index.js';

const suppress: Handler<'POST /workspaces/{workspaceId}/push/tokens/suppress'> = async (ctx) => {
  const ws = ctx.workspaceId;
  // Only these fields: a `workspace_id` in the body is ignored.
  const { device_token, platform, suppression_type, reason, source_push_id, source_campaign_id } = ctx.body;
  if (source_push_id && !(await pushMessageExists(ctx.db, ws, source_push_id))) {
    throw new InvalidInput('source_push_id names no push record of this workspace', [{ field: 'source_push_id', message: 'is not a push record (message_id) of this workspace' }]);
  }
  const { row, created } = await suppressToken(ctx.db, ws, { device_token, platform, suppression_type, reason, source_push_id, source_campaign_id });
  // The body is the record, at the top level (README, Routes).
  return json(created ? 201 : 200, {
    success: true,
    id: row.id,
    device_token: maskToken(row.device_token),
    platform: row.platform,
    suppression_type: row.suppression_type,
    suppressed_at: iso(row.suppressed_at),
    already_suppressed: !created,
  });
};

const lift: Handler<'DELETE /workspaces/{workspaceId}/push/tokens/suppress/{id}' | 'DELETE /workspaces/{workspaceId}/push/suppressions/{id}'> = async (ctx) => {
  const id = ctx.params.id;
  const lifted = isUuid(id) ? await liftSuppression(ctx.db, ctx.workspaceId, id) : undefined;
  if (!lifted) throw new DomainError('NOT_FOUND', 'No such token suppression in this workspace');
  return json(200, { success: true, message: 'Suppression lifted', id: lifted });
};

/** The dashboard's list (session): newest first, tokens masked; `q` keeps the tokens starting with it. */
const list: Handler<'GET /workspaces/{workspaceId}/push/suppressions'> = async (ctx) => {
  const limit = Math.min(ctx.query.limit as number, 100);
  const offset = ctx.query.offset as number;
  const { rows, total } = await listSuppressions(ctx.db, ctx.workspaceId, limit, offset, ctx.query.q?.trim() || undefined);
  const suppressions = rows.map((r) => ({ id: r.id, device_token: maskToken(r.device_token), platform: r.platform, suppression_type: r.suppression_type, reason: r.reason, suppressed_at: iso(r.suppressed_at) }));
  return json(200, { success: true, suppressions, total, limit, offset });
};

/** Two lookups for the whole request, whatever its size: suppressions and devices of the well-formed tokens. */
const validate: Handler<'POST /workspaces/{workspaceId}/push/tokens/validate'> = async (ctx) => {
  const ws = ctx.workspaceId;
  const entries = ctx.body.tokens;
  const wellFormed = [...new Set(entries.filter((e) => tokenFormatValid(e.token, e.platform)).map((e) => e.token))];
  const [suppressed, devices] = await Promise.all([suppressedAmong(ctx.db, ws, wellFormed), devicesByTokens(ctx.db, ws, wellFormed)]);
  const results = entries.map((e, index) => {
    const reason = tokenProblem(e.token, e.platform, { suppressed, devices });
    return { index, device_token: maskToken(e.token), platform: e.platform, valid: reason === undefined, ...(reason ? { reason } : {}) };
  });
  const valid = results.filter((r) => r.valid).length;
  return json(200, { success: true, results, summary: { total: results.length, valid, invalid: results.length - valid } });
};

export const pushTokenHandlers = {
  'POST /workspaces/{workspaceId}/push/tokens/suppress': suppress,
  'DELETE /workspaces/{workspaceId}/push/tokens/suppress/{id}': lift,
  'POST /workspaces/{workspaceId}/push/tokens/validate': validate,
  // The same suppress and lift for the dashboard (session).
  'GET /workspaces/{workspaceId}/push/suppressions': list,
  'POST /workspaces/{workspaceId}/push/suppressions': suppress,
  'DELETE /workspaces/{workspaceId}/push/suppressions/{id}': lift,
} satisfies Handlers;

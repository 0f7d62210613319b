// Segments (docs/audiences.md): session routes on the path's workspace. Creating one, or
// changing its conditions, answers at once: the actor's segment runner (audiences/segments.ts)
// computes its members in the background, and the status and progress say how far it is.
import type { Handler, Handlers, PathCtx } from './context.js';
import { json } from './reply.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { isUuid, newId } from '../ids.js';
import { listsNamed, segmentTreeProblems, type SegmentTree } from '../domain/segments.js';
import { deleteSegment, listsOfWorkspace, findSegment, insertSegment, saveSegment, segmentMembers, segmentsOf, type SegmentRow } from '../store/segments.js';
import { liveCampaignsTargeting, type Queryable } from '../store/index.js';

const present = (s: SegmentRow) => ({
  id: s.id,
  workspace_id: s.workspace_id,
  name: s.name,
  conditions: s.conditions,
  status: s.state === 'ready' ? 'ready' : s.state === 'failed' ? 'failed' : 'computing',
  count: Number(s.members),
  progress: { walked: Number(s.walked), total: Math.max(Number(s.total), Number(s.walked)) },
  error: s.error,
  computed_at: s.computed_at === null ? null : iso(s.computed_at),
  created_at: iso(s.created_at),
  updated_at: iso(s.updated_at),
});

async function loadSegment(q: Queryable, ctx: PathCtx<'segmentId'>, lock = false): Promise<SegmentRow> {
  const id = ctx.params.segmentId;
  const segment = isUuid(id) ? await findSegment(q, ctx.workspaceId, id, lock) : null;
  if (!segment) throw new DomainError('NOT_FOUND', 'Segment not found');
  return segment;
}

/** The tree checked (shape and limits), its lists the workspace's own. */
async function checkedTree(q: Queryable, workspaceId: string, tree: unknown): Promise<SegmentTree> {
  const problems = segmentTreeProblems(tree);
  if (problems.length > 0) throw new InvalidInput(`conditions are invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
  const lists = [...new Set(listsNamed(tree as SegmentTree).map((l) => l.toLowerCase()))];
  if (lists.length > 0) {
    const found = new Set(await listsOfWorkspace(q, workspaceId, lists));
    const missing = lists.filter((l) => !found.has(l));
    if (missing.length > 0) throw new InvalidInput(`conditions name lists not of this workspace: ${missing.join(', ')}`, missing.map((l) => ({ field: 'conditions', message: `in_list ${l} is not a list of this workspace` })));
  }
  return tree as SegmentTree;
}

const SEGMENTS = '/workspaces/{workspaceId}/segments';

const create: Handler<`POST ${typeof SEGMENTS}`> = async (ctx) => {
  const tree = await checkedTree(ctx.db, ctx.workspaceId, ctx.body.conditions);
  const segment = await insertSegment(ctx.db, newId(), ctx.workspaceId, ctx.body.name, tree);
  ctx.segments.changed(ctx.workspaceId);
  return json(201, { success: true, data: { segment: present(segment) } });
};

const list: Handler = async (ctx) => {
  const segments = (await segmentsOf(ctx.db, ctx.workspaceId)).map(present);
  return json(200, { success: true, segments, total: segments.length });
};

const get: Handler<`GET ${typeof SEGMENTS}/{segmentId}`> = async (ctx) => json(200, { success: true, data: { segment: present(await loadSegment(ctx.db, ctx)) } });

const update: Handler<`PUT ${typeof SEGMENTS}/{segmentId}`> = async (ctx) => {
  const tree = ctx.body.conditions === undefined ? undefined : await checkedTree(ctx.db, ctx.workspaceId, ctx.body.conditions);
  const saved = await ctx.db.tx(async (q) => {
    const current = await loadSegment(q, ctx, true);
    return saveSegment(q, ctx.workspaceId, current.id, ctx.body.name ?? current.name, tree);
  });
  if (tree !== undefined) ctx.segments.changed(ctx.workspaceId);
  return json(200, { success: true, data: { segment: present(saved) } });
};

const remove: Handler<`DELETE ${typeof SEGMENTS}/{segmentId}`> = async (ctx) => {
  const name = await ctx.db.tx(async (q) => {
    // A campaign naming the segment locks it too (handlers/campaigns.ts): it committed before
    // (found here) or finds the segment gone, never both.
    const s = await loadSegment(q, ctx, true);
    const using = await liveCampaignsTargeting(q, ctx.workspaceId, s.id);
    if (using.length > 0) throw new DomainError('SEGMENT_IN_USE', `The segment is the audience of live campaigns (${using.join(', ')}): pause them or change their audience first`);
    await deleteSegment(q, ctx.workspaceId, s.id);
    return s.name;
  });
  ctx.segments.changed(ctx.workspaceId);
  return json(200, { success: true, message: `Segment ${name} deleted` });
};

const MAX_PAGE = 1_000;

const people: Handler<`GET ${typeof SEGMENTS}/{segmentId}/people`> = async (ctx) => {
  const s = await loadSegment(ctx.db, ctx);
  const limit = Math.min(ctx.query.limit ?? 100, MAX_PAGE);
  const members = await segmentMembers(ctx.db, s.id, limit, ctx.query.after?.toLowerCase());
  const next = members.length === limit && limit > 0 ? members.at(-1)!.id : null;
  return json(200, { success: true, people: members.map((m) => ({ id: m.id, external_id: m.external_id, email: m.email, entered_at: iso(m.entered_at) })), next });
};

export const segmentHandlers = {
  [`POST ${SEGMENTS}`]: create,
  [`GET ${SEGMENTS}`]: list,
  [`GET ${SEGMENTS}/{segmentId}`]: get,
  [`PUT ${SEGMENTS}/{segmentId}`]: update,
  [`DELETE ${SEGMENTS}/{segmentId}`]: remove,
  [`GET ${SEGMENTS}/{segmentId}/people`]: people,
} satisfies Handlers;

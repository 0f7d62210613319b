// Workspaces and membership (DECISIONS §2). Every route here is session-authenticated;
// the pipeline has already checked that the caller is a member of the workspace in the path.
import type { Ctx, Handler } from '../actors/context.js';
import { ForbiddenError, HttpError, json } from '../http/reply.js';
import type { Queryable } from '../store/db.js';
import { newWorkspaceId } from '../ids.js';
import { iso } from './time.js';
import { isTimeZone, sendPolicyProblems } from './send-policy.js';

interface WorkspaceRow {
  id: string;
  name: string;
  settings: { timezone?: string; send_policy?: unknown };
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'w.id, w.name, w.settings, w.created_at, w.updated_at';
const DEFAULT_SETTINGS = { timezone: 'UTC', send_policy: null };

function present(w: WorkspaceRow) {
  return { id: w.id, name: w.name, settings: { ...DEFAULT_SETTINGS, ...w.settings }, created_at: iso(w.created_at), updated_at: iso(w.updated_at) };
}

export function requireManager(ctx: Ctx): void {
  if (ctx.role !== 'owner' && ctx.role !== 'admin') throw new ForbiddenError();
}

async function load(q: Queryable, id: string): Promise<WorkspaceRow> {
  const r = await q.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces w WHERE w.id = $1`, [id]);
  return r.rows[0]!;
}

const create: Handler = async (ctx) => {
  const id = newWorkspaceId();
  const workspace = await ctx.db.tx(async (q) => {
    await q.query('INSERT INTO workspaces (id, name, settings) VALUES ($1, $2, $3::text::jsonb)', [id, ctx.body.name, JSON.stringify(DEFAULT_SETTINGS)]);
    await q.query(`INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')`, [id, ctx.user!.sub]);
    return load(q, id);
  });
  return json(201, { success: true, data: { workspace: present(workspace) } });
};

const list: Handler = async (ctx) => {
  const r = await ctx.db.query<WorkspaceRow>(
    `SELECT ${COLUMNS} FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id WHERE m.user_id = $1 ORDER BY w.created_at, w.id`,
    [ctx.user!.sub],
  );
  return json(200, { success: true, workspaces: r.rows.map(present), total: r.rows.length });
};

const get: Handler = async (ctx) => json(200, { success: true, data: { workspace: present(await load(ctx.db, ctx.workspaceId!)) } });

const update: Handler = async (ctx) => {
  requireManager(ctx);
  const { name, settings } = ctx.body as { name?: string; settings?: { timezone?: string; send_policy?: unknown } };
  if (settings?.timezone !== undefined && !isTimeZone(settings.timezone)) {
    throw new HttpError(400, 'VALIDATION_ERROR', 'settings.timezone must be an IANA time zone name', [{ field: 'settings.timezone', message: 'is not an IANA time zone name' }]);
  }
  if (settings && 'send_policy' in settings) {
    const problems = sendPolicyProblems(settings.send_policy);
    if (problems.length > 0) throw new HttpError(400, 'INVALID_SEND_POLICY', `Invalid send policy: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
  }
  const workspace = await ctx.db.tx(async (q) => {
    const current = await q.query<WorkspaceRow>('SELECT settings FROM workspaces WHERE id = $1 FOR UPDATE', [ctx.workspaceId]);
    // Settings merge key by key; send_policy, one of those keys, is replaced whole.
    const merged = { ...DEFAULT_SETTINGS, ...current.rows[0]!.settings, ...(settings ?? {}) };
    await q.query('UPDATE workspaces SET name = COALESCE($2, name), settings = $3::text::jsonb, updated_at = now() WHERE id = $1', [ctx.workspaceId, name ?? null, JSON.stringify(merged)]);
    return load(q, ctx.workspaceId!);
  });
  return json(200, { success: true, data: { workspace: present(workspace) } });
};

interface MemberRow {
  workspace_id: string;
  user_id: string;
  role: string;
  created_at: Date;
}
const presentMember = (m: MemberRow) => ({ workspace_id: m.workspace_id, user_id: m.user_id, role: m.role, created_at: iso(m.created_at) });

const addMember: Handler = async (ctx) => {
  requireManager(ctx);
  const { user_id, role } = ctx.body as { user_id: string; role: 'admin' | 'member' };
  return ctx.db.tx(async (q) => {
    const existing = await q.query<MemberRow>('SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2 FOR UPDATE', [ctx.workspaceId, user_id]);
    if (existing.rows[0]?.role === 'owner') throw new HttpError(400, 'VALIDATION_ERROR', "The owner's role cannot be changed");
    const r = await q.query<MemberRow>(
      `INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role
       RETURNING workspace_id, user_id, role, created_at`,
      [ctx.workspaceId, user_id, role],
    );
    return json(existing.rows[0] ? 200 : 201, { success: true, data: { member: presentMember(r.rows[0]!) } });
  });
};

const removeMember: Handler = async (ctx) => {
  const target = ctx.params.userId!;
  // Owners and admins remove anyone but the owner; any member may leave.
  if (target !== ctx.user!.sub) requireManager(ctx);
  const r = await ctx.db.query<MemberRow>('SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [ctx.workspaceId, target]);
  if (!r.rows[0]) throw new HttpError(404, 'NOT_FOUND', `User ${target} is not a member of this workspace`);
  if (r.rows[0].role === 'owner') throw new HttpError(400, 'VALIDATION_ERROR', 'The owner cannot be removed from the workspace');
  await ctx.db.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [ctx.workspaceId, target]);
  return json(200, { success: true, message: `Removed ${target} from the workspace` });
};

export const workspaceHandlers: Record<string, Handler> = {
  'POST /workspaces': create,
  'GET /workspaces': list,
  'GET /workspaces/{workspaceId}': get,
  'PUT /workspaces/{workspaceId}': update,
  'POST /workspaces/{workspaceId}/members': addMember,
  'DELETE /workspaces/{workspaceId}/members/{userId}': removeMember,
};

// Workspaces and membership (README, Sessions and the Default workspace). Every route here is session-authenticated; the
// pipeline has already checked that the caller is a member of the workspace in the path.
import type { Ctx, Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { DomainError, fieldProblems } from '../domain/errors.js';
import { canManage } from '../domain/roles.js';
import { sendPolicyConflicts } from '../domain/send-policy.js';
import { trackingOf } from '../domain/tracking.js';
import { iso } from '../domain/time.js';
import { createWorkspace, DEFAULT_SETTINGS, loadWorkspace, memberRole, membersOf, putMember, removeMember as deleteMember, saveWorkspace, workspacesOf, type MemberRow, type WorkspaceRow } from '../store/index.js';

function present(w: WorkspaceRow) {
  return { id: w.id, name: w.name, settings: { ...DEFAULT_SETTINGS, ...w.settings, tracking: trackingOf(w.settings.tracking) }, created_at: iso(w.created_at), updated_at: iso(w.updated_at) };
}

const presentMember = (m: MemberRow) => ({ workspace_id: m.workspace_id, user_id: m.user_id, role: m.role, created_at: iso(m.created_at) });

/** Owners and admins manage the workspace, its members and its keys. */
export function requireManager(ctx: Ctx): void {
  if (!canManage(ctx.role)) throw new DomainError('FORBIDDEN', 'Only owners and admins manage the workspace');
}

const create: Handler<'POST /workspaces'> = async (ctx) => {
  const workspace = await ctx.db.tx((q) => createWorkspace(q, ctx.body.name, ctx.user!.sub));
  return json(201, { success: true, data: { workspace: present(workspace) } });
};

const list: Handler<'GET /workspaces'> = async (ctx) => {
  const workspaces = (await workspacesOf(ctx.db, ctx.user!.sub)).map(present);
  return json(200, { success: true, workspaces, total: workspaces.length });
};

const get: Handler = async (ctx) => json(200, { success: true, data: { workspace: present((await loadWorkspace(ctx.db, ctx.workspaceId))!) } });

const update: Handler<'PUT /workspaces/{workspaceId}'> = async (ctx) => {
  requireManager(ctx);
  const { name, settings } = ctx.body;
  if (settings?.send_policy !== undefined) {
    const problems = sendPolicyConflicts(settings.send_policy);
    if (problems.length > 0) throw fieldProblems('INVALID_SEND_POLICY', 'Invalid send policy', problems);
  }
  const workspace = await ctx.db.tx(async (q) => {
    const current = (await loadWorkspace(q, ctx.workspaceId, true))!;
    // Settings merge key by key; send_policy, one of those keys, is replaced whole; tracking merges its own keys.
    const tracking = trackingOf({ ...current.settings.tracking, ...settings?.tracking });
    await saveWorkspace(q, ctx.workspaceId, name, { ...DEFAULT_SETTINGS, ...current.settings, ...(settings ?? {}), tracking });
    return (await loadWorkspace(q, ctx.workspaceId))!;
  });
  return json(200, { success: true, data: { workspace: present(workspace) } });
};

/** Any member reads who else is in the workspace (the pipeline has checked the caller is one). */
const listMembers: Handler = async (ctx) => {
  const members = (await membersOf(ctx.db, ctx.workspaceId)).map(presentMember);
  return json(200, { success: true, members, total: members.length });
};

const addMember: Handler<'POST /workspaces/{workspaceId}/members'> = async (ctx) => {
  requireManager(ctx);
  const { user_id, role } = ctx.body;
  return ctx.db.tx(async (q) => {
    const existing = await memberRole(q, ctx.workspaceId, user_id, true);
    if (existing === 'owner') throw new DomainError('VALIDATION_ERROR', "The owner's role cannot be changed");
    const member = await putMember(q, ctx.workspaceId, user_id, role);
    return json(existing ? 200 : 201, { success: true, data: { member: presentMember(member) } });
  });
};

const removeMember: Handler<'DELETE /workspaces/{workspaceId}/members/{userId}'> = async (ctx) => {
  const target = ctx.params.userId;
  // Owners and admins remove anyone but the owner; any member may leave.
  if (target !== ctx.user!.sub) requireManager(ctx);
  const role = await memberRole(ctx.db, ctx.workspaceId, target);
  if (!role) throw new DomainError('NOT_FOUND', `User ${target} is not a member of this workspace`);
  if (role === 'owner') throw new DomainError('VALIDATION_ERROR', 'The owner cannot be removed from the workspace');
  await deleteMember(ctx.db, ctx.workspaceId, target);
  return json(200, { success: true, message: `Removed ${target} from the workspace` });
};

export const workspaceHandlers = {
  'POST /workspaces': create,
  'GET /workspaces': list,
  'GET /workspaces/{workspaceId}': get,
  'PUT /workspaces/{workspaceId}': update,
  'GET /workspaces/{workspaceId}/members': listMembers,
  'POST /workspaces/{workspaceId}/members': addMember,
  'DELETE /workspaces/{workspaceId}/members/{userId}': removeMember,
} satisfies Handlers;

// Workspaces and their members (README, Sessions and the Default workspace).
import type { Queryable } from './db.js';
import { newWorkspaceId } from '../ids.js';
import type { Role } from '../domain/roles.js';
import { DEFAULT_TRACKING, type TrackingSettings } from '../domain/tracking.js';

export interface WorkspaceRow {
  id: string;
  name: string;
  settings: { timezone?: string; send_policy?: unknown; tracking?: Partial<TrackingSettings> };
  created_at: Date;
  updated_at: Date;
}

export interface MemberRow {
  workspace_id: string;
  user_id: string;
  role: Role;
  created_at: Date;
}

/** A new workspace's settings (and what a stored one lacks reads as). */
export const DEFAULT_SETTINGS = { timezone: 'UTC', send_policy: null, tracking: DEFAULT_TRACKING };

const COLUMNS = 'w.id, w.name, w.settings, w.created_at, w.updated_at';

/** Creates a workspace owned by `owner`. */
export async function createWorkspace(q: Queryable, name: string, owner: string): Promise<WorkspaceRow> {
  const id = newWorkspaceId();
  await q.query('INSERT INTO workspaces (id, name, settings) VALUES ($1, $2, $3::text::jsonb)', [id, name, JSON.stringify(DEFAULT_SETTINGS)]);
  await q.query(`INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, 'owner')`, [id, owner]);
  return (await loadWorkspace(q, id))!;
}

export async function loadWorkspace(q: Queryable, id: string, lock = false): Promise<WorkspaceRow | null> {
  const r = await q.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces w WHERE w.id = $1${lock ? ' FOR UPDATE' : ''}`, [id]);
  return r.rows[0] ?? null;
}

/** The user's workspaces, oldest first; `role` narrows to those where the user has it. */
export async function workspacesOf(q: Queryable, user: string, role?: Role): Promise<WorkspaceRow[]> {
  const r = await q.query<WorkspaceRow>(
    `SELECT ${COLUMNS} FROM workspaces w JOIN workspace_members m ON m.workspace_id = w.id
     WHERE m.user_id = $1 AND ($2::text IS NULL OR m.role = $2) ORDER BY w.created_at, w.id`,
    [user, role ?? null],
  );
  return r.rows;
}

export async function saveWorkspace(q: Queryable, id: string, name: string | undefined, settings: WorkspaceRow['settings']): Promise<void> {
  await q.query('UPDATE workspaces SET name = COALESCE($2, name), settings = $3::text::jsonb, updated_at = now() WHERE id = $1', [id, name ?? null, JSON.stringify(settings)]);
}

export async function memberRole(q: Queryable, workspaceId: string, user: string, lock = false): Promise<Role | null> {
  const r = await q.query<{ role: Role }>(`SELECT role FROM workspace_members WHERE workspace_id = $1 AND user_id = $2${lock ? ' FOR UPDATE' : ''}`, [workspaceId, user]);
  return r.rows[0]?.role ?? null;
}

export async function putMember(q: Queryable, workspaceId: string, user: string, role: Role): Promise<MemberRow> {
  const r = await q.query<MemberRow>(
    `INSERT INTO workspace_members (workspace_id, user_id, role) VALUES ($1, $2, $3)
     ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role
     RETURNING workspace_id, user_id, role, created_at`,
    [workspaceId, user, role],
  );
  return r.rows[0]!;
}

/** The workspace's members: the owner first, then in the order they were added. */
export async function membersOf(q: Queryable, workspaceId: string): Promise<MemberRow[]> {
  const r = await q.query<MemberRow>(
    `SELECT workspace_id, user_id, role, created_at FROM workspace_members WHERE workspace_id = $1
     ORDER BY role <> 'owner', created_at, user_id`,
    [workspaceId],
  );
  return r.rows;
}

export async function removeMember(q: Queryable, workspaceId: string, user: string): Promise<void> {
  await q.query('DELETE FROM workspace_members WHERE workspace_id = $1 AND user_id = $2', [workspaceId, user]);
}

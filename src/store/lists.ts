// Lists and their members (docs/audiences.md). Members are written by CSV imports
// (store/list-imports.ts) and read here, a page at a time.
import type { Queryable } from './db.js';

export interface ListRow {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  /** Kept by reading the members' primary key: a list is counted on read (lists are read rarely, written in bulk). */
  members: number;
  created_at: Date;
  updated_at: Date;
}

export type ListFields = Pick<ListRow, 'name' | 'description'>;

const COLUMNS = `l.id, l.workspace_id, l.name, l.description, (SELECT count(*)::int FROM list_members m WHERE m.list_id = l.id) AS members, l.created_at, l.updated_at`;

export async function insertList(q: Queryable, id: string, workspaceId: string, f: ListFields): Promise<ListRow> {
  await q.query('INSERT INTO lists (id, workspace_id, name, description) VALUES ($1, $2, $3, $4)', [id, workspaceId, f.name, f.description]);
  return (await findList(q, workspaceId, id))!;
}

/** A list of the workspace (the caller has checked `id` is a UUID); `lock` holds it until the transaction ends. */
export async function findList(q: Queryable, workspaceId: string, id: string, lock = false): Promise<ListRow | null> {
  const r = await q.query<ListRow>(`SELECT ${COLUMNS} FROM lists l WHERE l.id = $1 AND l.workspace_id = $2${lock ? ' FOR UPDATE OF l' : ''}`, [id, workspaceId]);
  return r.rows[0] ?? null;
}

export async function listsOf(q: Queryable, workspaceId: string): Promise<ListRow[]> {
  return (await q.query<ListRow>(`SELECT ${COLUMNS} FROM lists l WHERE l.workspace_id = $1 ORDER BY l.created_at DESC, l.id DESC`, [workspaceId])).rows;
}

export async function saveList(q: Queryable, workspaceId: string, id: string, f: ListFields): Promise<ListRow> {
  await q.query('UPDATE lists SET name = $3, description = $4, updated_at = now() WHERE id = $1 AND workspace_id = $2', [id, workspaceId, f.name, f.description]);
  return (await findList(q, workspaceId, id))!;
}

/** Deletes the list, its members and its imports; the imports' staged files are the caller's to remove. */
export async function deleteList(q: Queryable, workspaceId: string, id: string): Promise<string[]> {
  const files = await q.query<{ file: string }>('SELECT file FROM list_imports WHERE list_id = $1 AND workspace_id = $2', [id, workspaceId]);
  await q.query('DELETE FROM lists WHERE id = $1 AND workspace_id = $2', [id, workspaceId]);
  return files.rows.map((r) => r.file);
}

export interface ListMember {
  id: string;
  external_id: string;
  email: string | null;
  added_at: Date;
}

/** A keyset page of the list's members, in person id order, after `after` (a person id). */
export async function listMembers(q: Queryable, listId: string, limit: number, after: string | undefined): Promise<ListMember[]> {
  const r = await q.query<ListMember>(
    `SELECT p.id, p.external_id, p.email, m.added_at FROM list_members m JOIN people p ON p.id = m.person_id
     WHERE m.list_id = $1 AND ($2::uuid IS NULL OR m.person_id > $2::uuid) ORDER BY m.person_id LIMIT $3`,
    [listId, after ?? null, limit],
  );
  return r.rows;
}

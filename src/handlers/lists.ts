// Lists and their CSV imports (docs/audiences.md): session routes on the path's workspace. An
// import's body reaches the handler as a file the front staged (src/http/upload.ts); answering
// 202 takes the file over, and the actor's import runner (audiences/list-imports.ts) reads it.
import { unlink } from 'node:fs/promises';
import type { Handler, Handlers, PathCtx } from './context.js';
import { json } from './reply.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { isUuid, newId } from '../ids.js';
import { deleteList, findList, insertList, listMembers, listsOf, saveList, type ListRow } from '../store/lists.js';
import { createImport, findImport, importsOf, type ImportRecord } from '../store/list-imports.js';
import type { Queryable } from '../store/index.js';

const present = (l: ListRow) => ({ id: l.id, workspace_id: l.workspace_id, name: l.name, description: l.description, members: l.members, created_at: iso(l.created_at), updated_at: iso(l.updated_at) });

const presentImport = (i: ImportRecord) => ({
  id: i.id, list_id: i.list_id, status: i.status, rows_read: i.rows_read, rows_added: i.rows_added, rows_failed: i.rows_failed, errors: i.errors, error: i.error,
  created_at: iso(i.created_at), finished_at: i.finished_at === null ? null : iso(i.finished_at),
});

async function loadList(q: Queryable, ctx: PathCtx<'listId'>, lock = false): Promise<ListRow> {
  const id = ctx.params.listId;
  const list = isUuid(id) ? await findList(q, ctx.workspaceId, id, lock) : null;
  if (!list) throw new DomainError('NOT_FOUND', 'List not found');
  return list;
}

const LISTS = '/workspaces/{workspaceId}/lists';

const create: Handler<`POST ${typeof LISTS}`> = async (ctx) => {
  const list = await insertList(ctx.db, newId(), ctx.workspaceId, { name: ctx.body.name, description: ctx.body.description ?? null });
  return json(201, { success: true, data: { list: present(list) } });
};

const list: Handler = async (ctx) => {
  const lists = (await listsOf(ctx.db, ctx.workspaceId)).map(present);
  return json(200, { success: true, lists, total: lists.length });
};

const get: Handler<`GET ${typeof LISTS}/{listId}`> = async (ctx) => json(200, { success: true, data: { list: present(await loadList(ctx.db, ctx)) } });

const update: Handler<`PUT ${typeof LISTS}/{listId}`> = async (ctx) => {
  const saved = await ctx.db.tx(async (q) => {
    const current = await loadList(q, ctx, true);
    return saveList(q, ctx.workspaceId, current.id, { name: ctx.body.name ?? current.name, description: ctx.body.description === undefined ? current.description : ctx.body.description });
  });
  return json(200, { success: true, data: { list: present(saved) } });
};

const remove: Handler<`DELETE ${typeof LISTS}/{listId}`> = async (ctx) => {
  const { name, files } = await ctx.db.tx(async (q) => {
    const l = await loadList(q, ctx, true);
    return { name: l.name, files: await deleteList(q, ctx.workspaceId, l.id) };
  });
  await Promise.all(files.map((f) => unlink(f).catch(() => undefined)));
  return json(200, { success: true, message: `List ${name} deleted` });
};

/** `text/csv`, with or without parameters (`; charset=utf-8`). */
const isCsv = (values: readonly string[] | undefined): boolean => values?.length === 1 && /^text\/csv\s*(;|$)/i.test(values[0]!.trim());

const importCsv: Handler<`POST ${typeof LISTS}/{listId}/import`> = async (ctx) => {
  if (!isCsv(ctx.headers['content-type'])) throw new InvalidInput('The body must be a CSV sent with Content-Type: text/csv', [{ field: 'Content-Type', message: 'must be text/csv' }]);
  if (ctx.upload === null) throw new InvalidInput('The body is empty: send a CSV with a header row', [{ field: 'body', message: 'is empty' }]);
  const l = await loadList(ctx.db, ctx);
  const id = newId();
  await createImport(ctx.db, id, ctx.workspaceId, l.id, ctx.upload, ctx.imports.stagedOn);
  ctx.imports.nudge();
  return json(202, { success: true, import_id: id });
};

const imports: Handler<`GET ${typeof LISTS}/{listId}/imports`> = async (ctx) => {
  const l = await loadList(ctx.db, ctx);
  return json(200, { success: true, imports: (await importsOf(ctx.db, ctx.workspaceId, l.id)).map(presentImport) });
};

const MAX_PAGE = 1_000;

const people: Handler<`GET ${typeof LISTS}/{listId}/people`> = async (ctx) => {
  const l = await loadList(ctx.db, ctx);
  const limit = Math.min(ctx.query.limit ?? 100, MAX_PAGE);
  const members = await listMembers(ctx.db, l.id, limit, ctx.query.after?.toLowerCase());
  const next = members.length === limit && limit > 0 ? members.at(-1)!.id : null;
  return json(200, { success: true, people: members.map((m) => ({ id: m.id, external_id: m.external_id, email: m.email, added_at: iso(m.added_at) })), next });
};

const getImport: Handler<'GET /workspaces/{workspaceId}/imports/{importId}'> = async (ctx) => {
  const id = ctx.params.importId;
  const found = isUuid(id) ? await findImport(ctx.db, ctx.workspaceId, id) : null;
  if (!found) throw new DomainError('NOT_FOUND', 'Import not found');
  return json(200, { success: true, ...presentImport(found) });
};

export const listHandlers = {
  [`POST ${LISTS}`]: create,
  [`GET ${LISTS}`]: list,
  [`GET ${LISTS}/{listId}`]: get,
  [`PUT ${LISTS}/{listId}`]: update,
  [`DELETE ${LISTS}/{listId}`]: remove,
  [`POST ${LISTS}/{listId}/import`]: importCsv,
  [`GET ${LISTS}/{listId}/imports`]: imports,
  [`GET ${LISTS}/{listId}/people`]: people,
  'GET /workspaces/{workspaceId}/imports/{importId}': getImport,
} satisfies Handlers;

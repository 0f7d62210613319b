// Lists and their CSV imports (docs/audiences.md): request bodies and what the routes answer.
import { nonEmptyString, object, queryLimit, uuid } from './common.js';
import { closed, count, enumOf, isoTime, nullableIsoTime, nullableStr, ok, str, uuidText, message, type HandlerErrors, type ResponseDoc, type RouteResponses } from './response-parts.js';
import { IMPORT_STATES } from '../src/domain/lists.js';

const description = { type: 'string', maxLength: 2_000, nullable: true } as const;

/** POST /workspaces/{workspaceId}/lists */
export const listCreate = object({ name: nonEmptyString(255), description }, ['name'], { additionalProperties: false });
/** PUT /workspaces/{workspaceId}/lists/{listId}: the fields sent replace; `description: null` clears it. */
export const listUpdate = object({ name: nonEmptyString(255), description }, [], { additionalProperties: false });
/** GET /workspaces/{workspaceId}/lists/{listId}/people: a keyset page in person id order. */
export const listPeople = object({ limit: queryLimit(100), after: { ...uuid, description: 'The last person id of the previous page (its `next`)' } });

const LISTS = '/workspaces/{workspaceId}/lists';
const IMPORTS = '/workspaces/{workspaceId}/imports';

const list = closed({ id: uuidText, workspace_id: uuidText, name: str, description: nullableStr, members: count, created_at: isoTime, updated_at: isoTime });
const listBody = (what: string): ResponseDoc => ok(what, { data: closed({ list }) });
const listNotFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: "No such list in the workspace (unknown, another workspace's, or not a UUID)" };

const rowError = closed({ row: { type: 'integer', minimum: 1, description: 'The data row (1 is the first row after the header)' }, error: str });
const importFields = {
  id: uuidText,
  list_id: uuidText,
  status: { ...enumOf(...IMPORT_STATES), description: '`waiting` or `running` while rows remain, then `done` or `failed` (`error` says why)' },
  rows_read: count,
  rows_added: count,
  rows_failed: count,
  errors: { type: 'array', items: rowError, maxItems: 100, description: 'The first 100 rows refused, with why' },
  error: { ...nullableStr, description: 'Why the import ended failed (the rows before it were imported)' },
  created_at: isoTime,
  finished_at: nullableIsoTime,
};
const listImport = closed(importFields);
const member = closed({ id: uuidText, external_id: str, email: nullableStr, added_at: isoTime });

export const audienceResponses: Record<string, RouteResponses> = {
  [`POST ${LISTS}`]: { success: { 201: listBody('The list') } },
  [`GET ${LISTS}`]: { success: { 200: ok('The lists, newest first', { lists: { type: 'array', items: list }, total: count }) } },
  [`GET ${LISTS}/{listId}`]: { success: { 200: listBody('The list') }, errors: { 404: listNotFound } },
  [`PUT ${LISTS}/{listId}`]: { success: { 200: listBody('The updated list') }, errors: { 404: listNotFound } },
  [`DELETE ${LISTS}/{listId}`]: { success: { 200: message('Deleted with its memberships and imports; the people stay') }, errors: { 404: listNotFound } },
  [`POST ${LISTS}/{listId}/import`]: {
    success: { 202: ok('The file is staged and imported in the background: read its progress at /workspaces/{workspaceId}/imports/{import_id}', { import_id: uuidText }) },
    errors: { 404: listNotFound },
    badRequest: 'Content-Type other than text/csv, or no body',
  },
  [`GET ${LISTS}/{listId}/imports`]: { success: { 200: ok("The list's latest 100 imports, newest first", { imports: { type: 'array', items: listImport } }) }, errors: { 404: listNotFound } },
  [`GET ${LISTS}/{listId}/people`]: {
    success: { 200: ok("A page of the list's members, in person id order", { people: { type: 'array', items: member }, next: { ...uuidText, nullable: true, description: 'Pass as `after` for the next page; null on the last' } }) },
    errors: { 404: listNotFound },
  },
  [`GET ${IMPORTS}/{importId}`]: {
    success: { 200: ok('The import, readable while it runs', importFields) },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'No such import in the workspace' } },
  },
};

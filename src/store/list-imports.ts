// CSV imports into lists (docs/audiences.md), as jobs of the one job mechanism
// (store/job-queue.ts): a claim reads some pages of the staged file from `byte_offset`, each page's
// people, memberships and progress committed in one transaction, so a restart (or kill -9)
// resumes at the first row not committed: none twice, none lost.
import type { Queryable } from './db.js';
import { sqlLiterals } from './db.js';
import type { JobTable } from './job-queue.js';
import { DEDICATED_FIELDS } from '../domain/traits.js';
import { IMPORT_STATES, type ImportState } from '../domain/lists.js';
import type { ImportRow } from '../domain/csv-import.js';
import { newId } from '../ids.js';

const S = sqlLiterals(IMPORT_STATES);

/** At most this many row errors are kept per import (the first ones). */
export const KEPT_ERRORS = 100;

/**
 * The import jobs this process may claim: those staged on its own disk (`stagedOn`), which is
 * where the file is.
 */
export function importJobs(stagedOn: string): JobTable {
  return {
    name: 'list-imports',
    table: 'list_imports',
    state: 'state',
    values: { waiting: S.waiting, running: S.running },
    due: 'due_at',
    returning: 'id, workspace_id, list_id, file, columns, byte_offset, rows_read, rows_added, rows_failed, jsonb_array_length(errors) AS errors_kept',
    eligible: `j.staged_on = '${stagedOn.replace(/'/g, "''")}'`,
    notCompleted: { retry: true },
  };
}

export interface ImportJob {
  id: string;
  workspace_id: string;
  list_id: string;
  file: string;
  columns: string[] | null;
  byte_offset: string;
  rows_read: number;
  rows_added: number;
  rows_failed: number;
  errors_kept: number;
}

export interface ImportRecord {
  id: string;
  list_id: string;
  status: ImportState;
  rows_read: number;
  rows_added: number;
  rows_failed: number;
  errors: { row: number; error: string }[];
  error: string | null;
  created_at: Date;
  finished_at: Date | null;
}

const RECORD = 'id, list_id, state AS status, rows_read, rows_added, rows_failed, errors, error, created_at, finished_at';

export async function createImport(q: Queryable, id: string, workspaceId: string, listId: string, file: string, stagedOn: string): Promise<void> {
  await q.query(`INSERT INTO list_imports (id, workspace_id, list_id, state, file, staged_on) VALUES ($1, $2, $3, ${S.waiting}, $4, $5)`, [id, workspaceId, listId, file, stagedOn]);
}

export async function findImport(q: Queryable, workspaceId: string, id: string): Promise<ImportRecord | null> {
  return (await q.query<ImportRecord>(`SELECT ${RECORD} FROM list_imports WHERE id = $1 AND workspace_id = $2`, [id, workspaceId])).rows[0] ?? null;
}

/** The list's imports, newest first (its import history). */
export async function importsOf(q: Queryable, workspaceId: string, listId: string): Promise<ImportRecord[]> {
  return (await q.query<ImportRecord>(`SELECT ${RECORD} FROM list_imports WHERE list_id = $1 AND workspace_id = $2 ORDER BY created_at DESC, id DESC LIMIT 100`, [listId, workspaceId])).rows;
}

/** Dedicated fields: a blank cell (absent here) keeps the person's value. */
const keepOrSet = DEDICATED_FIELDS.map((f) => `${f} = COALESCE(EXCLUDED.${f}, p.${f})`).join(', ');

/**
 * Upserts a page's people and adds them to the list, set-based: one statement. A row naming its
 * person by email only is the oldest person with that address, else a new one whose external_id
 * is the address. Two rows of the page naming one person: the later wins.
 */
export async function importPage(q: Queryable, workspaceId: string, listId: string, rows: readonly ImportRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const input = rows.map((r, ord) => ({ id: newId(), ord, external_id: r.external_id, email_key: r.email_key, f: r.f, traits: r.traits }));
  const r = await q.query<{ id: string }>(
    `WITH input AS (
       SELECT * FROM jsonb_to_recordset($3::text::jsonb) AS x(id uuid, ord int, external_id text, email_key text, f jsonb, traits jsonb)
     ), resolved AS (
       SELECT DISTINCT ON (external_id) * FROM (
         SELECT i.id, i.ord, i.f, i.traits, COALESCE(i.external_id,
           (SELECT p.external_id FROM people p WHERE p.workspace_id = $1 AND lower(p.email) = i.email_key AND p.email IS NOT NULL ORDER BY p.created_at, p.id LIMIT 1),
           i.email_key) AS external_id
         FROM input i) r
       ORDER BY external_id, ord DESC
     ), upserted AS (
       INSERT INTO people AS p (id, workspace_id, external_id, ${DEDICATED_FIELDS.join(', ')}, traits)
       SELECT id, $1, external_id, ${DEDICATED_FIELDS.map((f) => `f->>'${f}'`).join(', ')}, traits FROM resolved
       ON CONFLICT (workspace_id, external_id) DO UPDATE SET ${keepOrSet}, traits = p.traits || EXCLUDED.traits, updated_at = now()
       RETURNING p.id
     ), added AS (
       INSERT INTO list_members (list_id, person_id) SELECT $2, id FROM upserted ON CONFLICT DO NOTHING
     )
     SELECT id::text FROM upserted`,
    [workspaceId, listId, JSON.stringify(input)],
  );
  // The page's people (their traits or lists changed): what segments evaluate again.
  return r.rows.map((x) => x.id);
}

export interface Progress {
  columns: readonly string[] | null;
  /** The byte offset of the first row not yet read. */
  offset: number;
  read: number;
  added: number;
  failed: number;
  /** New row errors, already cut to what is left of KEPT_ERRORS. */
  errors: readonly { row: number; error: string }[];
  /** Set when the import ends with this page. */
  end?: { state: Extract<ImportState, 'done' | 'failed'>; error?: string };
  /** Not ended: the job waits again (true: its claim is over), or stays claimed (false: more pages follow now). */
  release: boolean;
}

/** Records a page (in the transaction that wrote it): the counters, the offset of the next row, and the state. */
export async function recordProgress(q: Queryable, id: string, p: Progress): Promise<void> {
  const state = p.end ? S[p.end.state] : p.release ? S.waiting : S.running;
  await q.query(
    `UPDATE list_imports SET columns = $2, byte_offset = $3, rows_read = rows_read + $4, rows_added = rows_added + $5, rows_failed = rows_failed + $6,
       errors = errors || $7::text::jsonb, error = $8, state = ${state}, claims = 0,
       claimed_by = CASE WHEN ${state} = ${S.running} THEN claimed_by END, claimed_at = CASE WHEN ${state} = ${S.running} THEN now() END,
       due_at = now(), finished_at = CASE WHEN ${state} IN (${S.done}, ${S.failed}) THEN now() END
     WHERE id = $1 AND state = ${S.running}`,
    [id, p.columns, p.offset, p.read, p.added, p.failed, JSON.stringify(p.errors), p.end?.error ?? null],
  );
}

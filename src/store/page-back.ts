// Paging back through a newest-first list read in (created_at DESC, id DESC) index order: the
// dashboard's events and a campaign's messages (schemas/common.ts pageBack).

/**
 * Where a page back starts: the rows created before `at`, or, with `id` (the last row shown),
 * the rows after that one in the list's order, so the rest of a millisecond shared by a batch
 * is kept.
 */
export interface PageBack {
  at: string;
  id?: string;
}

/**
 * The WHERE term (with its leading AND; none without a page) on `alias`'s created_at and id,
 * numbering its parameters after `params`'s. With an id, the row's own created_at is read back
 * from `table` (within `scope`, the list's own key, so another list's row positions nothing):
 * `at` is the created_at as shown, to the millisecond, while the column may hold microseconds.
 * A row comparison, so the index's range starts there; a row no longer there falls back to `at`.
 */
export function pageBackTerm(alias: string, table: string, scope: string, page: PageBack | null | undefined, params: unknown[]): string {
  if (!page) return '';
  const at = `$${params.push(page.at)}::timestamptz`;
  if (page.id === undefined) return ` AND ${alias}.created_at < ${at}`;
  const id = `$${params.push(page.id)}::uuid`;
  return ` AND (${alias}.created_at, ${alias}.id) < (COALESCE((SELECT c.created_at FROM ${table} c WHERE c.id = ${id} AND c.${scope}), ${at}), ${id})`;
}

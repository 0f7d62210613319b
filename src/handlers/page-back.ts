// The query of a page back (schemas/common.ts pageBack) as the store reads it (store/page-back.ts).
import { InvalidInput } from '../domain/errors.js';
import { normalizeTimestamp } from '../domain/time.js';
import type { PageBack } from '../store/index.js';

/** `before` and `before_id` as a page back, or null for the first page; `before_id` needs `before`. */
export function pageBack(query: { before?: string; before_id?: string }): PageBack | null {
  if (query.before === undefined) {
    if (query.before_id !== undefined) throw new InvalidInput('before_id needs before (the created_at of that row)', [{ field: 'before_id', message: 'needs before' }]);
    return null;
  }
  return { at: normalizeTimestamp(query.before, 'before'), id: query.before_id };
}

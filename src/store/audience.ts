// Campaign audiences (docs/campaigns-runtime.md): audience_config `{filters, match}` compiled to one
// parameterised SQL condition over people (traits through jsonb paths, person fields, and
// performed_count_* through person_event_counts), read in keyset pages of person ids so that
// no audience is ever held in memory whole. The rules are domain/conditions.ts's, which the
// unit and store tests hold to the same cases.
import type { Queryable } from './db.js';
import { COUNT_OPERATORS, PERSON_FIELDS, type AudienceConfig, type Condition } from '../domain/conditions.js';

export const FIRST_ID = '00000000-0000-0000-0000-000000000000';

/** Collects parameter values; `add` answers the placeholder of one. */
export class Params {
  readonly values: unknown[] = [];
  add(v: unknown): string {
    this.values.push(v);
    return `$${this.values.length}`;
  }
}

/** The field's value as jsonb, SQL NULL when missing or JSON null. */
function fieldExpr(field: string, p: Params): string {
  const dot = field.indexOf('.');
  const root = field.slice(0, dot);
  const rest = field.slice(dot + 1);
  if (dot > 0 && root === 'traits') return `NULLIF(p.traits #> ${p.add(rest.split('.'))}::text[], 'null'::jsonb)`;
  if (root === 'person' && PERSON_FIELDS.includes(rest)) return `to_jsonb(p.${rest})`;
  // parameters.* (no event here) and anything else read nothing
  return 'NULL::jsonb';
}

function countCondition(c: Condition, p: Params): string {
  const bounds = (typeof c.value === 'object' && c.value !== null ? c.value : {}) as { count?: unknown; count_max?: unknown };
  const n = `COALESCE((SELECT c.count FROM person_event_counts c WHERE c.person_id = p.id AND c.type = ${p.add(c.field)}), 0)`;
  const count = p.add(Number(bounds.count));
  switch (c.operator) {
    case 'performed_count_gte':
      return `${n} >= ${count}::bigint`;
    case 'performed_count_lte':
      return `${n} <= ${count}::bigint`;
    case 'performed_count_eq':
      return `${n} = ${count}::bigint`;
    default:
      return `${n} BETWEEN ${count}::bigint AND ${p.add(Number(bounds.count_max))}::bigint`;
  }
}

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** One condition as a boolean SQL expression over `people p` that is never NULL (segments compile theirs with it too). */
export function condition(c: Condition, p: Params): string {
  if ((COUNT_OPERATORS as readonly string[]).includes(c.operator)) return countCondition(c, p);
  const v = fieldExpr(c.field, p);
  const value = c.value;
  const str = `(${v} #>> '{}')`;
  const ordered = (op: string) => {
    if (typeof value === 'number') return `CASE WHEN jsonb_typeof(${v}) = 'number' THEN (${v})::numeric ${op} ${p.add(String(value))}::numeric ELSE false END`;
    if (typeof value === 'string') return `CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${str} COLLATE "C" ${op} ${p.add(value)}::text COLLATE "C" ELSE false END`;
    return 'false';
  };
  const eq = () => (value === null || value === undefined ? `${v} IS NULL` : `COALESCE(${v} = ${p.add(JSON.stringify(value))}::jsonb, false)`);
  const contains = () =>
    isScalar(value)
      ? `CASE jsonb_typeof(${v}) WHEN 'string' THEN strpos(${str}, ${p.add(String(value))}::text) > 0 WHEN 'array' THEN ${v} @> ${p.add(JSON.stringify([value]))}::jsonb ELSE false END`
      : 'false';
  const isIn = () =>
    Array.isArray(value) ? `CASE WHEN jsonb_typeof(${v}) IN ('string', 'number', 'boolean') THEN ${p.add(JSON.stringify(value))}::jsonb @> jsonb_build_array(${v}) ELSE false END` : 'false';
  const affix = (starts: boolean) => {
    if (typeof value !== 'string') return 'false';
    const s = p.add(value);
    return `CASE WHEN jsonb_typeof(${v}) = 'string' THEN ${starts ? 'left' : 'right'}(${str}, length(${s}::text)) = ${s}::text ELSE false END`;
  };
  switch (c.operator) {
    case 'eq':
      return eq();
    case 'neq':
      return `NOT ${eq()}`;
    case 'gt':
      return ordered('>');
    case 'gte':
      return ordered('>=');
    case 'lt':
      return ordered('<');
    case 'lte':
      return ordered('<=');
    case 'contains':
      return contains();
    case 'not_contains':
      return `NOT (${contains()})`;
    case 'starts_with':
      return affix(true);
    case 'ends_with':
      return affix(false);
    case 'in':
      return isIn();
    case 'not_in':
      return `NOT (${isIn()})`;
    case 'exists':
      return `${v} IS NOT NULL`;
    case 'not_exists':
      return `${v} IS NULL`;
    default:
      // activation refuses unknown operators: one here is a campaign stored around it
      throw new Error(`unknown condition operator ${c.operator}`);
  }
}

/** The audience as a SQL condition over `people p` (true when it has no filters). */
export function audienceWhere(audience: AudienceConfig | null, p: Params): string {
  // A segment's members are kept (store/segments.ts): the audience reads them.
  if (typeof audience?.segment_id === 'string') return `EXISTS (SELECT 1 FROM segment_members sm WHERE sm.segment_id = ${p.add(audience.segment_id)}::uuid AND sm.person_id = p.id)`;
  const filters = audience?.filters ?? [];
  if (filters.length === 0) return 'true';
  return `(${filters.map((c) => `(${condition(c, p)})`).join(audience?.match === 'any' ? ' OR ' : ' AND ')})`;
}

/**
 * The workspace's people matching the audience, in pages of at most `pageSize` ids (ascending),
 * at most `limit` in all, from the first id after `after` (a walk resumed). Each page is one
 * statement resuming after the last id of the one before (keyset), so a page costs the same
 * wherever it falls and people added meanwhile with a higher id are included.
 */
export async function* audiencePages(q: Queryable, workspaceId: string, audience: AudienceConfig | null, opts: { pageSize: number; limit: number; after?: string }): AsyncGenerator<string[]> {
  const p = new Params();
  const ws = p.add(workspaceId);
  const after = p.add(null);
  const size = p.add(null);
  const sql = `SELECT p.id FROM people p WHERE p.workspace_id = ${ws} AND p.id > ${after}::uuid AND ${audienceWhere(audience, p)} ORDER BY p.id LIMIT ${size}`;
  let cursor = opts.after ?? FIRST_ID;
  let left = opts.limit;
  while (left > 0) {
    const n = Math.min(opts.pageSize, left);
    const params = p.values.slice();
    params[1] = cursor;
    params[2] = n;
    const ids = (await q.query<{ id: string }>(sql, params)).rows.map((r) => r.id);
    if (ids.length === 0) return;
    left -= ids.length;
    cursor = ids[ids.length - 1]!;
    yield ids;
    if (ids.length < n) return;
  }
}

/** Whether more than `limit` people match the audience (what `audience_truncated` reports). */
export async function audienceExceeds(q: Queryable, workspaceId: string, audience: AudienceConfig | null, limit: number): Promise<boolean> {
  const p = new Params();
  const ws = p.add(workspaceId);
  const where = audienceWhere(audience, p);
  const r = await q.query(`SELECT 1 FROM people p WHERE p.workspace_id = ${ws} AND ${where} OFFSET ${p.add(limit)} LIMIT 1`, p.values);
  return r.rowCount > 0;
}

/**
 * How many of the workspace's people match the audience, counted up to `max`: `capped` when
 * more match (the count is then `max`). One statement that stops at `max + 1` rows, so a count
 * costs at most what a trigger's truncation check does.
 */
export async function countAudience(q: Queryable, workspaceId: string, audience: AudienceConfig | null, max: number): Promise<{ count: number; capped: boolean }> {
  const p = new Params();
  const ws = p.add(workspaceId);
  const where = audienceWhere(audience, p);
  const r = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT 1 FROM people p WHERE p.workspace_id = ${ws} AND ${where} LIMIT ${p.add(max + 1)}) m`, p.values);
  const n = r.rows[0]?.n ?? 0;
  return n > max ? { count: max, capped: true } : { count: n, capped: false };
}

/** Which of these people of the workspace match the audience now: one statement for a page of people (a journey's split). */
export async function matchingPeople(q: Queryable, workspaceId: string, audience: AudienceConfig, personIds: readonly string[]): Promise<Set<string>> {
  if (personIds.length === 0) return new Set();
  const p = new Params();
  const ws = p.add(workspaceId);
  const ids = p.add(personIds);
  const r = await q.query<{ id: string }>(`SELECT p.id FROM people p WHERE p.workspace_id = ${ws} AND p.id = ANY (${ids}::uuid[]) AND ${audienceWhere(audience, p)}`, p.values);
  return new Set(r.rows.map((row) => row.id));
}

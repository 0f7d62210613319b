// Segments and their kept members (docs/audiences.md). A tree (domain/segments.ts) compiles to
// one SQL condition over `people p`, so membership is computed set-based: a computation from
// scratch walks the workspace's people a keyset page per statement (insert who matches, delete
// who no longer does), and the people who just changed are evaluated for every segment of their
// workspace in one statement. The count is kept by triggers on segment_members (migration 500).
import { sqlLiterals, type Queryable } from './db.js';
import type { JobTable } from './job-queue.js';
import { condition, Params } from './audience.js';
import { SEGMENT_STATES, windowSeconds, type SegmentNode, type SegmentState, type SegmentTree } from '../domain/segments.js';

const S = sqlLiterals(SEGMENT_STATES);

export interface SegmentRow {
  id: string;
  workspace_id: string;
  name: string;
  conditions: SegmentTree;
  state: SegmentState;
  generation: number;
  walked: string;
  total: string;
  error: string | null;
  members: string;
  computed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `s.id, s.workspace_id, s.name, s.conditions, s.state, s.generation, s.walked, s.total, s.error,
  COALESCE((SELECT sum(c.members) FROM segment_counters c WHERE c.segment_id = s.id), 0)::bigint AS members, s.computed_at, s.created_at, s.updated_at`;

const COUNT_SQL = { gte: '>=', gt: '>', lte: '<=', lt: '<', eq: '=' } as const;

/** The tree as a boolean SQL expression over `people p` (never NULL). */
function segmentWhere(node: SegmentNode, p: Params): string {
  if ('all' in node) return `(${node.all.map((n) => segmentWhere(n, p)).join(' AND ')})`;
  if ('any' in node) return `(${node.any.map((n) => segmentWhere(n, p)).join(' OR ')})`;
  if ('event' in node) {
    const { name, count, within } = node.event;
    const seconds = within === undefined ? undefined : windowSeconds(within);
    const n =
      seconds === undefined
        ? `COALESCE((SELECT c.count FROM person_event_counts c WHERE c.person_id = p.id AND c.type = ${p.add(name)}::text), 0)`
        : `(SELECT count(*) FROM events e WHERE e.person_id = p.id AND e.type = ${p.add(name)}::text AND e.created_at > now() - make_interval(secs => ${p.add(seconds)}::int))`;
    return `(${n} ${COUNT_SQL[count.op]} ${p.add(count.value)}::bigint)`;
  }
  if ('has_channel' in node) {
    switch (node.has_channel) {
      case 'push':
        return 'EXISTS (SELECT 1 FROM devices d WHERE d.person_id = p.id AND d.is_active AND d.is_valid)';
      case 'email':
        return `(p.email IS NOT NULL AND p.email <> '' AND p.status = 'active')`;
      default:
        return `(p.phone IS NOT NULL AND p.phone <> '' AND p.status = 'active')`;
    }
  }
  if ('in_list' in node) return `EXISTS (SELECT 1 FROM list_members m WHERE m.list_id = ${p.add(node.in_list)}::uuid AND m.person_id = p.id)`;
  return `(${condition(node, p)})`;
}

export async function insertSegment(q: Queryable, id: string, workspaceId: string, name: string, conditions: SegmentTree): Promise<SegmentRow> {
  await q.query(
    `INSERT INTO segments (id, workspace_id, name, conditions, state, total) VALUES ($1, $2, $3, $4::text::jsonb, ${S.waiting}, (SELECT count(*) FROM people WHERE workspace_id = $2))`,
    [id, workspaceId, name, JSON.stringify(conditions)],
  );
  return (await findSegment(q, workspaceId, id))!;
}

/** A segment of the workspace (the caller has checked `id` is a UUID); `lock` holds it until the transaction ends. */
export async function findSegment(q: Queryable, workspaceId: string, id: string, lock = false): Promise<SegmentRow | null> {
  const r = await q.query<SegmentRow>(`SELECT ${COLUMNS} FROM segments s WHERE s.id = $1 AND s.workspace_id = $2${lock ? ' FOR UPDATE OF s' : ''}`, [id, workspaceId]);
  return r.rows[0] ?? null;
}

export async function segmentsOf(q: Queryable, workspaceId: string): Promise<SegmentRow[]> {
  return (await q.query<SegmentRow>(`SELECT ${COLUMNS} FROM segments s WHERE s.workspace_id = $1 ORDER BY s.created_at DESC, s.id DESC`, [workspaceId])).rows;
}

/** Renames; with `conditions`, the tree is replaced and computed again from scratch (a new generation). */
export async function saveSegment(q: Queryable, workspaceId: string, id: string, name: string, conditions: SegmentTree | undefined): Promise<SegmentRow> {
  if (conditions === undefined) await q.query('UPDATE segments SET name = $3, updated_at = now() WHERE id = $1 AND workspace_id = $2', [id, workspaceId, name]);
  else {
    await q.query(
      `UPDATE segments SET name = $3, conditions = $4::text::jsonb, generation = generation + 1, state = ${S.waiting}, after_person = NULL, walked = 0, error = NULL,
         total = (SELECT count(*) FROM people WHERE workspace_id = $2), due_at = now(), claims = 0, claimed_by = NULL, claimed_at = NULL, expired_to = NULL, updated_at = now()
       WHERE id = $1 AND workspace_id = $2`,
      [id, workspaceId, name, JSON.stringify(conditions)],
    );
  }
  return (await findSegment(q, workspaceId, id))!;
}

export async function deleteSegment(q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return (await q.query('DELETE FROM segments WHERE id = $1 AND workspace_id = $2', [id, workspaceId])).rowCount > 0;
}

export interface SegmentMember {
  id: string;
  external_id: string;
  email: string | null;
  entered_at: Date;
}

/** A keyset page of the segment's members, in person id order, after `after` (a person id). */
export async function segmentMembers(q: Queryable, segmentId: string, limit: number, after: string | undefined): Promise<SegmentMember[]> {
  const r = await q.query<SegmentMember>(
    `SELECT p.id, p.external_id, p.email, m.entered_at FROM segment_members m JOIN people p ON p.id = m.person_id
     WHERE m.segment_id = $1 AND ($2::uuid IS NULL OR m.person_id > $2::uuid) ORDER BY m.person_id LIMIT $3`,
    [segmentId, after ?? null, limit],
  );
  return r.rows;
}

/** Computations from scratch, as jobs of the one job mechanism. */
export const SEGMENT_JOBS: JobTable = {
  name: 'segments',
  table: 'segments',
  state: 'state',
  values: { waiting: S.waiting, running: S.running },
  due: 'due_at',
  returning: 'id, workspace_id, generation, conditions, after_person',
  notCompleted: { retry: true },
};

export interface SegmentJob {
  id: string;
  workspace_id: string;
  generation: number;
  conditions: SegmentTree;
  after_person: string | null;
}

/**
 * One page of a computation: the next `size` people of the workspace after the cursor, those
 * matching added and the others removed, in one statement with the cursor's move. A page of a
 * tree changed since the claim (another generation) changes nothing: answers null. Answers
 * whether the walk has ended.
 */
export async function computePage(q: Queryable, job: SegmentJob, size: number): Promise<boolean | null> {
  const current = await q.query<{ generation: number }>(`SELECT generation FROM segments WHERE id = $1 AND state = ${S.running} FOR UPDATE`, [job.id]);
  if (current.rows[0]?.generation !== job.generation) return null;
  const p = new Params();
  const seg = p.add(job.id);
  const ws = p.add(job.workspace_id);
  const after = p.add(job.after_person);
  const n = p.add(size);
  const where = segmentWhere(job.conditions, p);
  const r = await q.query<{ last: string | null; walked: string }>(
    `WITH page AS MATERIALIZED (
       SELECT p.id FROM people p WHERE p.workspace_id = ${ws}::uuid AND (${after}::uuid IS NULL OR p.id > ${after}::uuid) ORDER BY p.id LIMIT ${n}::int
     ), matching AS MATERIALIZED (
       SELECT p.id FROM people p WHERE p.id IN (SELECT id FROM page) AND ${where}
     ), added AS (
       INSERT INTO segment_members (segment_id, person_id) SELECT ${seg}::uuid, id FROM matching ON CONFLICT DO NOTHING
     ), removed AS (
       DELETE FROM segment_members m WHERE m.segment_id = ${seg}::uuid AND m.person_id IN (SELECT id FROM page) AND m.person_id NOT IN (SELECT id FROM matching)
     )
     SELECT (SELECT id::text FROM page ORDER BY id DESC LIMIT 1) AS last, (SELECT count(*) FROM page) AS walked`,
    p.values,
  );
  const row = r.rows[0]!;
  const done = Number(row.walked) < size;
  await q.query(
    `UPDATE segments SET after_person = COALESCE($2::uuid, after_person), walked = walked + $3, claims = 0,
       state = CASE WHEN $4 THEN ${S.ready} ELSE state END, computed_at = CASE WHEN $4 THEN now() ELSE computed_at END,
       expired_to = CASE WHEN $4 THEN COALESCE(expired_to, now()) ELSE expired_to END,
       claimed_by = CASE WHEN $4 THEN NULL ELSE claimed_by END, claimed_at = CASE WHEN $4 THEN NULL ELSE now() END
     WHERE id = $1`,
    [job.id, row.last, Number(row.walked), done],
  );
  job.after_person = row.last ?? job.after_person;
  return done;
}

/** A claim's computation stops for its turn: it waits again, due now, behind the other workspaces' jobs. */
export async function yieldSegmentJob(q: Queryable, id: string, generation: number): Promise<void> {
  await q.query(`UPDATE segments SET state = ${S.waiting}, claimed_by = NULL, claimed_at = NULL, due_at = now() WHERE id = $1 AND generation = $2 AND state = ${S.running}`, [id, generation]);
}

export async function failSegmentJob(q: Queryable, id: string, generation: number, error: string): Promise<void> {
  await q.query(`UPDATE segments SET state = ${S.failed}, error = $3, claimed_by = NULL, claimed_at = NULL WHERE id = $1 AND generation = $2`, [id, generation, error]);
}

/** A segment of the workspace, as the evaluation of changed people reads it. */
export interface LiveSegment {
  id: string;
  conditions: SegmentTree;
}

export async function liveSegments(q: Queryable, workspaceId: string): Promise<LiveSegment[]> {
  return (await q.query<LiveSegment>(`SELECT id, conditions FROM segments WHERE workspace_id = $1 AND state <> ${S.failed} ORDER BY id`, [workspaceId])).rows;
}

export interface MembershipChange {
  segment_id: string;
  person_id: string;
  external_id: string;
  entered: boolean;
}

/**
 * Evaluates `people` of the workspace for each of its `segments`, in one statement: those who
 * match and were not members enter, members who no longer match leave. Answers the changes.
 */
/** A segment and the people to evaluate for it. */
export interface Evaluating {
  segment: LiveSegment;
  people: readonly string[];
}

export async function evaluatePeople(q: Queryable, workspaceId: string, evaluating: readonly Evaluating[]): Promise<MembershipChange[]> {
  const asked = evaluating.filter((e) => e.people.length > 0);
  if (asked.length === 0) return [];
  const p = new Params();
  const ws = p.add(workspaceId);
  const matching = asked
    .map((e) => `SELECT ${p.add(e.segment.id)}::uuid AS segment_id, p.id AS person_id FROM people p WHERE p.workspace_id = ${ws}::uuid AND p.id = ANY (${p.add(e.people)}::uuid[]) AND ${segmentWhere(e.segment.conditions, p)}`)
    .join('\nUNION ALL\n');
  // The (segment, person) pairs evaluated: a member among them no longer matching leaves.
  const pairSegments = p.add(asked.flatMap((e) => e.people.map(() => e.segment.id)));
  const pairPeople = p.add(asked.flatMap((e) => e.people));
  const r = await q.query<MembershipChange>(
    `WITH matching AS MATERIALIZED (${matching}
     ), added AS (
       INSERT INTO segment_members (segment_id, person_id)
       SELECT m.segment_id, m.person_id FROM matching m WHERE EXISTS (SELECT 1 FROM segments s WHERE s.id = m.segment_id) ORDER BY 1, 2
       ON CONFLICT DO NOTHING RETURNING segment_id, person_id
     ), removed AS (
       DELETE FROM segment_members sm USING unnest(${pairSegments}::uuid[], ${pairPeople}::uuid[]) AS x(segment_id, person_id)
       WHERE sm.segment_id = x.segment_id AND sm.person_id = x.person_id
         AND NOT EXISTS (SELECT 1 FROM matching m WHERE m.segment_id = sm.segment_id AND m.person_id = sm.person_id)
       RETURNING sm.segment_id, sm.person_id
     )
     SELECT c.segment_id::text, c.person_id::text, p.external_id, c.entered FROM (
       SELECT segment_id, person_id, true AS entered FROM added UNION ALL SELECT segment_id, person_id, false FROM removed
     ) c JOIN people p ON p.id = c.person_id`,
    p.values,
  );
  return r.rows;
}

/** Windowed segments whose expiry is due: the people whose events aged past a window since `expired_to`. */
export interface ExpiryDue {
  id: string;
  workspace_id: string;
  conditions: SegmentTree;
  expired_to: Date;
}

export async function windowedSegments(q: Queryable): Promise<ExpiryDue[]> {
  return (await q.query<ExpiryDue>(`SELECT id, workspace_id, conditions, expired_to FROM segments WHERE state = ${S.ready} AND expired_to IS NOT NULL ORDER BY id`)).rows;
}

/** The people with an event of one of `names` in [from, to): their events just left a window. */
export async function peopleWithEventsBetween(q: Queryable, workspaceId: string, names: readonly string[], from: Date, to: Date): Promise<string[]> {
  const r = await q.query<{ person_id: string }>(
    `SELECT DISTINCT person_id::text FROM events WHERE workspace_id = $1 AND type = ANY ($2::text[]) AND created_at >= $3 AND created_at < $4 AND person_id IS NOT NULL`,
    [workspaceId, names, from, to],
  );
  return r.rows.map((x) => x.person_id);
}

export async function markExpired(q: Queryable, id: string, to: Date): Promise<void> {
  await q.query('UPDATE segments SET expired_to = $2 WHERE id = $1', [id, to]);
}

/** Which of `ids` are lists of the workspace (a tree may name only those). */
export async function listsOfWorkspace(q: Queryable, workspaceId: string, ids: readonly string[]): Promise<string[]> {
  return (await q.query<{ id: string }>('SELECT id::text FROM lists WHERE workspace_id = $1 AND id = ANY ($2::uuid[])', [workspaceId, ids])).rows.map((r) => r.id);
}

// Herald's one durable job mechanism (issue 24): campaign runs, enrolments (a workflow's steps)
// and scheduled single sends are jobs, each kind in its own table because each job is also the
// record read elsewhere (a run's cursor, a person's entries, a push record), so a job costs no row
// of its own. What makes them jobs is here, once:
//
// - one state enumeration: a job is `waiting` (due at its due time) or `running` (claimed); each
//   table names its values for the two (JobTable), and every other value is finished;
// - one claim: a page of one workspace's due jobs, oldest due first, FOR UPDATE SKIP LOCKED, so
//   each job has one claimer whatever the number of actors and replicas; which workspaces an
//   actor serves is part of the statement (herald_shard, migration 420, is util/shard.ts in SQL);
// - one lease (store/leases.ts): a claim names its holder and is renewed while it works; it
//   lapses when the holder is gone or its lease is older than LEASE.staleMs;
// - one rule for a claim not completed (lapsed, or given back by a page that failed): a job that
//   may run again waits again, due after a back-off that grows with its claims; a job that must
//   not run twice (a send the provider may have had) ends failed.
//
// graphile-worker and pg-boss were read and not adopted (bench/README.md: neither claims by a
// predicate on the job's workspace, neither knows a holder is gone, both need a row per job).
import { prepared, type Prepared, type Queryable } from './db.js';
import { lapsed, type Shard } from './leases.js';
import { JOB_STATES } from '../domain/campaigns.js';

/** The lease of every job: renewed this often while its holder works on it… */
export const LEASE = {
  renewMs: 5_000,
  /** …and lapsed, though its holder lives (a wedged thread), when not renewed for this long. */
  staleMs: 30_000,
} as const;

type JobState = (typeof JOB_STATES)[number];

/** A kind of job: its table, and the columns and values the mechanism reads. */
export interface JobTable {
  /** Names the kind in the log. */
  readonly name: string;
  readonly table: string;
  /** The state column and its values (SQL literals) for each job state. */
  readonly state: string;
  readonly values: Readonly<Record<JobState, string>>;
  /** The column of the time a waiting job is due. */
  readonly due: string;
  /** Columns the claim returns. */
  readonly returning: string;
  /** SQL ANDed into the choice of jobs to claim (the job's alias is `j`). */
  readonly eligible?: string;
  /** SQL: whether the workspace `ws` (an SQL expression) has jobs of this kind for a claimer at all; ANDed into the look and the claim. */
  readonly workspace?: (ws: string) => string;
  /** A job is claimed only once it has been due this long (default 0). */
  readonly claimableAfterMs?: number;
  /**
   * A claim not completed: `retry` waits again, due after the back-off, which reads the
   * `claims` column (claims since the job last moved on, the mechanism counts them); `fail`
   * is the SET clause that ends it failed.
   */
  readonly notCompleted: { retry: true } | { fail: string };
}

/**
 * When a job claimed `claims` times without completing is due again: after the first, when it
 * was due (its holder was lost, and a restart takes the work up at once, in its place); after
 * more, 1 s from now, doubling, at most a minute (the work itself fails).
 */
const retryDue = (due: string): string =>
  `CASE WHEN claims <= 1 THEN ${due} ELSE now() + make_interval(secs => LEAST(60, power(2, claims - 2))) END`;

/** The statements of one kind, prepared once per connection. */
interface Statements {
  workspaces: Prepared;
  claim: Prepared;
}
const statements = new WeakMap<JobTable, Statements>();

function statementsOf(t: JobTable): Statements {
  let s = statements.get(t);
  if (!s) {
    const waiting = `${t.state} = ${t.values.waiting}`;
    const counted = 'retry' in t.notCompleted ? ', claims = claims + 1' : '';
    const dueBy = t.claimableAfterMs ? `now() - make_interval(secs => ${t.claimableAfterMs / 1000})` : 'now()';
    s = {
      // The shard's workspaces with jobs to claim: a skip scan of the table's (workspace_id, due)
      // index of waiting jobs, then a probe of each workspace's first due job, so a workspace
      // whose jobs wait for later (a delay node's days) costs no claim a look.
      workspaces: prepared(
        `jobs-workspaces-${t.name}`,
        `WITH RECURSIVE ws(workspace_id) AS (
             (SELECT workspace_id FROM ${t.table} WHERE ${waiting} ORDER BY workspace_id LIMIT 1)
             UNION ALL
             SELECT (SELECT j.workspace_id FROM ${t.table} j WHERE j.${waiting} AND j.workspace_id > ws.workspace_id ORDER BY j.workspace_id LIMIT 1)
             FROM ws WHERE ws.workspace_id IS NOT NULL
           )
           SELECT workspace_id FROM ws WHERE workspace_id IS NOT NULL AND (herald_shard(workspace_id::text, $1) = $2) = $3
             AND EXISTS (SELECT 1 FROM ${t.table} j WHERE j.workspace_id = ws.workspace_id AND j.${waiting} AND j.${t.due} <= ${dueBy})${t.workspace ? `
             AND ${t.workspace('ws.workspace_id')}` : ''}`,
      ),
      // The jobs are chosen by a subquery along the due index, not a join (a joined plan once
      // sorted 110,000 waiting enrolments to take 250), and updated by key from an array (with
      // `id IN (…)` a generic plan hashed them against every waiting job).
      claim: prepared(
        `jobs-claim-${t.name}`,
        `UPDATE ${t.table} SET ${t.state} = ${t.values.running}, claimed_by = $3, claimed_at = now()${counted}
           WHERE id = ANY (ARRAY(SELECT j.id FROM ${t.table} j
                        WHERE j.workspace_id = $1 AND j.${waiting} AND j.${t.due} <= ${dueBy}${t.eligible ? ` AND ${t.eligible}` : ''}${t.workspace ? ` AND ${t.workspace('$1')}` : ''}
                        ORDER BY j.${t.due} LIMIT $2 FOR UPDATE SKIP LOCKED))
             AND ${waiting}
           RETURNING ${t.returning}`,
      ),
    };
    statements.set(t, s);
  }
  return s;
}

/** The workspaces with jobs to claim now of the shard, or (`others`) of every other shard. */
export async function workspacesWaiting(q: Queryable, t: JobTable, shard: Shard, of: 'shard' | 'others' = 'shard'): Promise<string[]> {
  const r = await q.query<{ workspace_id: string }>(statementsOf(t).workspaces, [shard.count, shard.index, of === 'shard']);
  return r.rows.map((x) => x.workspace_id);
}

/** Claims up to `limit` of the workspace's due jobs for `instance`, oldest due first. */
export async function claimJobs<J>(q: Queryable, t: JobTable, workspaceId: string, limit: number, instance: number): Promise<J[]> {
  const r = await q.query<J & object>(statementsOf(t).claim, [workspaceId, limit, instance]);
  return r.rows;
}

/** The claim statement of a kind (its plan is tested: test/integration/query-plans.test.ts). */
export function claimStatement(t: JobTable): string {
  return statementsOf(t).claim.text;
}

/**
 * Renews the leases of the jobs `ids` its holder still works on. Rows another statement holds
 * are skipped, never waited for: they are being completed, which needs no renewal, and waiting
 * for one while holding rows that statement locks next deadlocked the two (an enrolment
 * heartbeat and a move-on, in a 250,000-person fan-out).
 */
export async function renewLeases(q: Queryable, t: JobTable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await q.query(
    `UPDATE ${t.table} SET claimed_at = now()
     WHERE id = ANY (ARRAY(SELECT id FROM ${t.table} WHERE id = ANY ($1::uuid[]) AND ${t.state} = ${t.values.running} FOR UPDATE SKIP LOCKED))`,
    [ids],
  );
}

/** What a claim not completed becomes (see the top): the SET clause. */
function notCompletedSet(t: JobTable): string {
  return 'retry' in t.notCompleted
    ? `${t.state} = ${t.values.waiting}, claimed_by = NULL, claimed_at = NULL, ${t.due} = ${retryDue(t.due)}`
    : `claimed_by = NULL, claimed_at = NULL, ${t.notCompleted.fail}`;
}

/** Ends the lapsed claims of every holder (gone, or not renewed for LEASE.staleMs) as a claim not completed; how many. */
export async function endLapsed(q: Queryable, t: JobTable): Promise<number> {
  const r = await q.query(
    `UPDATE ${t.table} SET ${notCompletedSet(t)} WHERE ${t.state} = ${t.values.running} AND ${lapsed('claimed_by', 'claimed_at', '$1')}`,
    [LEASE.staleMs],
  );
  return r.rowCount;
}

/** Gives back the jobs `ids` its holder could not complete (their page failed), as a claim not completed. */
export async function giveBack(q: Queryable, t: JobTable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await q.query(`UPDATE ${t.table} SET ${notCompletedSet(t)} WHERE id = ANY ($1::uuid[]) AND ${t.state} = ${t.values.running}`, [ids]);
}

// Enrolments as the workflow executor moves them (campaigns/executor.ts; migration 8): jobs
// (store/job-queue.ts) claimed when due, moved to their next node, delayed, finished or stopped;
// a claim not completed (its holder gone, its lease stale, its page failed) waits again.
import { prepared, sqlLiterals, type Queryable } from './db.js';
import type { JobTable } from './job-queue.js';
import { CAMPAIGN_STATUSES, ENROLMENT_STATES, NODE_TYPES } from '../domain/campaigns.js';
import { CAP_FIELDS } from '../domain/send-policy.js';

const E = sqlLiterals(ENROLMENT_STATES);
const C = sqlLiterals(CAMPAIGN_STATUSES);
const N = sqlLiterals(NODE_TYPES);
/** How long an enrolment waits for its owner before other actors may take it. */
const SHARED_AFTER_MS = 1_000;
/** The nodes any actor may run for a workspace without caps. */
const SHARED_NODES = [N.push, N.delay].join(', ');
/** The statuses whose enrolments wait where they are; the others' are claimed (and stopped when archived or failed). */
const HELD = `(${C.draft}, ${C.paused})`;

export interface EnrolContext {
  /** Template scope `event` = parameters; the push records carry the event id. */
  event?: { id: string; name: string; parameters: Record<string, unknown> };
  /** Template scope `trigger` (webhook trigger_data). */
  trigger?: Record<string, unknown>;
  variables?: Record<string, unknown>;
}

/** Limits on entering a campaign (README, Request bodies). */
export interface EnrolRules {
  /** entry <= maxPerUser (first_occurrence callers pass 1 and check first-seen themselves). */
  maxPerUser?: number;
  /** No enrolment when the person's latest enrolment in this campaign is younger than this. */
  debounceSeconds?: number;
}

/** One enrolment to insert: its deterministic id, its run and person, and its context (an index into the statement's contexts). */
export interface NewEnrolment {
  id: string;
  runId: string;
  personId: string;
  context: number;
}

/**
 * Inserts each enrolment of the campaign's workspace, as its person's next entry, unless its run
 * enrolled that person already or the rules refuse; ON CONFLICT DO NOTHING on both unique keys.
 * Answers each candidate (rules passed) by id and whether it was inserted: one not inserted lost
 * a key to a concurrent enrolment, or to one of the same person in this statement.
 */
export async function insertEnrolments(
  q: Queryable,
  c: { campaignId: string; workspaceId: string },
  rows: readonly NewEnrolment[],
  contexts: readonly EnrolContext[],
  opts: { rules?: EnrolRules; startAt?: Date },
): Promise<{ id: string; inserted: boolean }[]> {
  // A few rows (an event group's matches) reuse the prepared plan; a schedule run's page of
  // thousands is planned for its size, which a generic plan cannot see.
  const r = await q.query<{ id: string; inserted: boolean }>(rows.length <= PREPARED_ROWS ? INSERT_ENROLMENTS : INSERT_ENROLMENTS.text, [
    c.campaignId,
    c.workspaceId,
    rows.map((e) => e.id),
    rows.map((e) => e.personId),
    rows.map((e) => e.runId),
    rows.map((e) => e.context + 1), // PostgreSQL's arrays count from 1
    contexts.map((x) => JSON.stringify(x)),
    opts.rules?.maxPerUser ?? null,
    opts.rules?.debounceSeconds ?? null,
    opts.startAt?.toISOString() ?? null,
  ]);
  return r.rows;
}

// The runtime's statements run per page or per matched event, and planning the larger ones cost
// as much as running them (0.4 ms of an event's enrolment's 0.7): prepared once per connection.
const PREPARED_ROWS = 64;
export const INSERT_ENROLMENTS = prepared(
  'insert-enrolments',
  `WITH input AS (SELECT * FROM unnest($3::uuid[], $4::uuid[], $5::text[], $6::int[]) AS x(id, person_id, run_id, ctx)),
     -- each person's latest entry (rules and the next entry number) and whether this run
     -- enrolled them already: one probe each along a unique key, (campaign_id, person_id,
     -- entry) backwards and (campaign_id, run_id, person_id). A single read of all of the
     -- people's entries (person_id = ANY) got the generic plan of the (campaign_id, run_id,
     -- person_id) key on a table not yet analysed, which reads every enrolment of the campaign
     -- (5 ms a statement for an event's few people in a /track bench); and an anti-join of the
     -- run's check was planned over all of them (578 ms a 2,000-person page of a fan-out). The
     -- person is a probe too (LIMIT 1 keeps it one): joined, a page hashed all of the
     -- workspace's people.
     candidates AS (
       SELECT i.id, i.person_id, i.run_id, i.ctx, COALESCE(last.entry, 0) + 1 AS entry
       FROM input i
       CROSS JOIN LATERAL (SELECT 1 FROM people p WHERE p.id = i.person_id AND p.workspace_id = $2 LIMIT 1) p
       LEFT JOIN LATERAL (
         SELECT e.entry, e.enrolled_at FROM campaign_enrolments e
         WHERE e.campaign_id = $1 AND e.person_id = i.person_id ORDER BY e.entry DESC LIMIT 1
       ) last ON true
       LEFT JOIN LATERAL (
         SELECT true AS yes FROM campaign_enrolments d
         WHERE d.campaign_id = $1 AND d.run_id = i.run_id AND d.person_id = i.person_id LIMIT 1
       ) same ON true
       WHERE same.yes IS NULL
         AND ($8::int IS NULL OR COALESCE(last.entry, 0) < $8)
         AND ($9::double precision IS NULL OR last.enrolled_at IS NULL OR last.enrolled_at <= now() - make_interval(secs => $9))
     ),
     ins AS (
       INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry, state, due_at, context)
       SELECT id, $2, $1, person_id, run_id, entry, ${E.waiting}, COALESCE($10::timestamptz, now()), (($7::text[])[ctx])::jsonb FROM candidates
       ON CONFLICT DO NOTHING
       RETURNING id
     )
     -- Each candidate, inserted when among ins's ids: grouped, not joined. The two have no
     -- statistics; on tables not analysed (a workspace seeded through the API) the join was
     -- planned as a nested loop, 4,000,000 comparisons for a 2,000-person page (600 ms, 95 ms
     -- hashed), however the tables below looked.
     SELECT id, bool_or(inserted) AS inserted
     FROM (SELECT id, false AS inserted FROM candidates UNION ALL SELECT id, true FROM ins) x GROUP BY id`,
);

export interface ClaimedEnrolment {
  id: string;
  campaign_id: string;
  person_id: string;
  /** Null: not started, the workflow's first node. */
  next_node: string | null;
  context: EnrolContext;
  /** Claims at this node, this one included: more than one means an earlier claim was interrupted. */
  claims: number;
  /** At a wait_for_event node: null until its wait starts, then the deadline (this claim: its timeout). */
  wait_until: Date | null;
}

/**
 * Enrolments as jobs (store/job-queue.ts): claimed when due, oldest due first, but not those of
 * a draft or paused campaign. The campaign's status is a subquery per enrolment, not a join:
 * joined, the planner could (and in a 250,000-person fan-out did, its statistics taken while the
 * table was small) hash the join and sort every waiting enrolment for each claim.
 */
export const ENROLMENT_JOBS: JobTable = {
  name: 'enrolments',
  table: 'campaign_enrolments',
  state: 'state',
  values: { waiting: E.waiting, running: E.running },
  due: 'due_at',
  returning: 'id, campaign_id, person_id, next_node, context, claims, wait_until',
  eligible: `(SELECT c.status FROM campaigns c WHERE c.id = j.campaign_id) NOT IN ${HELD}`,
  notCompleted: { retry: true },
};

/**
 * The enrolments an actor other than the workspace's owner may claim (campaigns/executor.ts):
 * those due for SHARED_AFTER_MS already (the owner is behind: a fan-out's backlog, not an
 * event's few enrolments, which the owner takes at once), at a push or delay node (email and
 * SMS keep to their owner's connection pools), of a workspace whose send policy sets no cap,
 * whose counters only its owner keeps (delivery/counters.ts). The policy is read once per look
 * and claim, the node's kind per enrolment from its campaign's workflow (the first node while
 * next_node is null).
 */
export const SHARED_ENROLMENT_JOBS: JobTable = {
  ...ENROLMENT_JOBS,
  name: 'enrolments-shared',
  claimableAfterMs: SHARED_AFTER_MS,
  workspace: (ws) =>
    `NOT EXISTS (SELECT 1 FROM workspaces w WHERE w.id = ${ws} AND (${CAP_FIELDS.map((f) => `COALESCE((w.settings->'send_policy'->>'${f}')::numeric, 0) > 0`).join(' OR ')}))`,
  eligible: `${ENROLMENT_JOBS.eligible}
    AND (SELECT n.node->>'type' FROM campaigns c, jsonb_array_elements(c.workflow_definition->'nodes') WITH ORDINALITY AS n(node, i)
         WHERE c.id = j.campaign_id AND CASE WHEN j.next_node IS NULL THEN n.i = 1 ELSE n.node->>'id' = j.next_node END LIMIT 1) IN (${SHARED_NODES})`,
};

/**
 * Moves the claimed enrolments past a node: to `next` (a node id), due `delaySeconds` after
 * they became due (a delay node) or now, or done when there is no next node.
 */
export async function moveOn(q: Queryable, ids: readonly string[], from: string | null, next: string | null, delaySeconds?: number): Promise<void> {
  if (ids.length === 0) return;
  await q.query(MOVE_ON, [ids, next, delaySeconds ?? null, from]);
}

/**
 * Counts the rows of `moved` (a statement's CTE returning campaign_id) on the edge from `from`
 * to `to` (SQL expressions; migration 511), into a row of the statement's backend.
 */
export const countOnEdge = (from: string, to: string): string => `INSERT INTO journey_edges AS c (campaign_id, from_node, to_node, slot, n)
   SELECT campaign_id, ${from}, ${to}, pg_backend_pid(), count(*) FROM moved WHERE ${from} IS NOT NULL GROUP BY campaign_id ORDER BY campaign_id
   ON CONFLICT (campaign_id, from_node, to_node, slot) DO UPDATE SET n = c.n + excluded.n`;

/** When a moved enrolment is due at its next node: `delay` seconds after it was due here, or now. */
const DUE_NEXT = 'CASE WHEN $3::double precision IS NULL THEN now() ELSE due_at + make_interval(secs => $3::double precision) END';

/** The move and its count on the edge from $4 to $2, in one statement; a wait left is over (wait_until). */
const MOVE_ON = prepared(
  'move-on-enrolments',
  `WITH moved AS (
     UPDATE campaign_enrolments SET claimed_by = NULL, claimed_at = NULL, claims = 0,
       state = CASE WHEN $2::text IS NULL THEN ${E.done} ELSE ${E.waiting} END, next_node = $2,
       due_at = ${DUE_NEXT}, entered_at = ${DUE_NEXT}, wait_until = NULL
     WHERE id = ANY ($1::uuid[]) AND state = ${E.running} RETURNING campaign_id)
   ${countOnEdge('$4::text', "COALESCE($2::text, '')")}`,
);

/** A campaign's edge counts (migration 511): how many enrolments went from each node to each next ('' the end). */
export async function journeyEdges(q: Queryable, campaignId: string): Promise<{ from_node: string; to_node: string; n: number }[]> {
  const r = await q.query<{ from_node: string; to_node: string; n: number }>(
    'SELECT from_node, to_node, sum(n)::int AS n FROM journey_edges WHERE campaign_id = $1 GROUP BY from_node, to_node',
    [campaignId],
  );
  return r.rows;
}

/** Stops the claimed enrolments (their campaign was archived or failed, or their node is gone from the workflow). */
export async function stopEnrolments(q: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await q.query(`UPDATE campaign_enrolments SET state = ${E.stopped}, claimed_by = NULL, claimed_at = NULL WHERE id = ANY ($1::uuid[]) AND state = ${E.running}`, [ids]);
}

/**
 * Holds the claimed enrolments out of their campaign (holdout_percent): they end `held_out`, sent
 * nothing, and the same statement counts them in the campaign's enrolment counters (migration 510).
 */
export async function holdOut(q: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await q.query(HOLD_OUT, [ids]);
}

const HOLD_OUT = `WITH h AS (
    UPDATE campaign_enrolments SET state = ${E.held_out}, claimed_by = NULL, claimed_at = NULL WHERE id = ANY ($1::uuid[]) AND state = ${E.running} RETURNING campaign_id)
  INSERT INTO enrolment_counters AS c (campaign_id, slot, enrolled, triggered, held_out)
  SELECT campaign_id, pg_backend_pid(), 0, 0, count(*) FROM h GROUP BY campaign_id ORDER BY campaign_id
  ON CONFLICT (campaign_id, slot) DO UPDATE SET held_out = c.held_out + excluded.held_out`;

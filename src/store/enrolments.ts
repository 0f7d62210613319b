// Enrolments as the workflow executor moves them (campaigns/executor.ts; migration 8): claimed
// when due, moved to their next node, delayed, finished or stopped. A claim is a lease:
// claimed_at is refreshed while the executor works on the enrolment, and a claim left stale
// (its process died) is released to be claimed again.
import type { Queryable } from './db.js';

/** The statuses whose enrolments run: a `completed` schedule campaign's enrolments still finish their workflow. */
const RUNNABLE = `('active', 'scheduled', 'completed')`;
/** The statuses whose enrolments stop where they are; others (draft, paused) wait. */
const ENDED = `('archived', 'failed')`;

/** What an enrolment's templates read besides the person (DECISIONS §6). */
export interface EnrolContext {
  /** Template scope `event` = parameters; the push records carry the event id. */
  event?: { id: string; name: string; parameters: Record<string, unknown> };
  /** Template scope `trigger` (webhook trigger_data). */
  trigger?: Record<string, unknown>;
  variables?: Record<string, unknown>;
}

/** Limits on entering a campaign (INTERFACE 2.7). */
export interface EnrolRules {
  /** entry <= maxPerUser (first_occurrence callers pass 1 and check first-seen themselves). */
  maxPerUser?: number;
  /** No enrolment when the person's latest enrolment in this campaign is younger than this. */
  debounceSeconds?: number;
}

/**
 * Inserts one enrolment per (id, person) pair of the campaign's workspace, as the person's next
 * entry, unless this run enrolled them already or the rules refuse; ON CONFLICT DO NOTHING on
 * both unique keys. Answers each candidate (rules passed) and whether it was inserted: one not
 * inserted lost a key to a concurrent enrolment.
 */
export async function insertEnrolments(
  q: Queryable,
  c: { campaignId: string; workspaceId: string; runId: string },
  ids: readonly string[],
  personIds: readonly string[],
  opts: { rules?: EnrolRules; context?: EnrolContext; startAt?: Date },
): Promise<{ person_id: string; inserted: boolean }[]> {
  const r = await q.query<{ person_id: string; inserted: boolean }>(
    `WITH input AS (SELECT * FROM unnest($4::uuid[], $5::uuid[]) AS x(id, person_id)),
     candidates AS (
       SELECT i.id, i.person_id, COALESCE(prev.last_entry, 0) + 1 AS entry
       FROM input i
       JOIN people p ON p.id = i.person_id AND p.workspace_id = $2
       LEFT JOIN LATERAL (SELECT max(e.entry) AS last_entry, max(e.enrolled_at) AS last_at FROM campaign_enrolments e
                          WHERE e.campaign_id = $1 AND e.person_id = i.person_id) prev ON true
       WHERE NOT EXISTS (SELECT 1 FROM campaign_enrolments e WHERE e.campaign_id = $1 AND e.run_id = $3 AND e.person_id = i.person_id)
         AND ($6::int IS NULL OR COALESCE(prev.last_entry, 0) < $6)
         AND ($7::double precision IS NULL OR prev.last_at IS NULL OR prev.last_at <= now() - make_interval(secs => $7))
     ),
     ins AS (
       INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry, state, due_at, context)
       SELECT id, $2, $1, person_id, $3, entry, 'waiting', COALESCE($8::timestamptz, now()), $9::text::jsonb FROM candidates
       ON CONFLICT DO NOTHING
       RETURNING person_id
     )
     SELECT c.person_id, EXISTS (SELECT 1 FROM ins WHERE ins.person_id = c.person_id) AS inserted FROM candidates c`,
    [c.campaignId, c.workspaceId, c.runId, ids, personIds, opts.rules?.maxPerUser ?? null, opts.rules?.debounceSeconds ?? null, opts.startAt?.toISOString() ?? null, JSON.stringify(opts.context ?? {})],
  );
  return r.rows;
}

export interface ClaimedEnrolment {
  id: string;
  campaign_id: string;
  person_id: string;
  /** Null: not started, the workflow's first node. */
  next_node: string | null;
  context: EnrolContext;
}

/**
 * The workspaces with waiting enrolments, due or not: a skip scan of the due index, one
 * index probe per workspace however many enrolments each has.
 */
export async function workspacesWaiting(q: Queryable): Promise<string[]> {
  const r = await q.query<{ workspace_id: string }>(
    `WITH RECURSIVE ws(workspace_id) AS (
       (SELECT workspace_id FROM campaign_enrolments WHERE state = 'waiting' ORDER BY workspace_id LIMIT 1)
       UNION ALL
       SELECT (SELECT e.workspace_id FROM campaign_enrolments e WHERE e.state = 'waiting' AND e.workspace_id > ws.workspace_id ORDER BY e.workspace_id LIMIT 1)
       FROM ws WHERE ws.workspace_id IS NOT NULL
     )
     SELECT workspace_id FROM ws WHERE workspace_id IS NOT NULL`,
  );
  return r.rows.map((x) => x.workspace_id);
}

/** Stops the workspace's due enrolments whose campaign was archived or failed. */
export async function stopEnded(q: Queryable, workspaceId: string): Promise<number> {
  const r = await q.query(
    `UPDATE campaign_enrolments e SET state = 'stopped' FROM campaigns c
     WHERE c.id = e.campaign_id AND e.workspace_id = $1 AND e.state = 'waiting' AND e.due_at <= now() AND c.status IN ${ENDED}`,
    [workspaceId],
  );
  return r.rowCount;
}

/** Claims up to `limit` of the workspace's due enrolments of runnable campaigns, oldest due first; one claimer each whatever the number of actors and replicas. */
export async function claimDue(q: Queryable, workspaceId: string, limit: number): Promise<ClaimedEnrolment[]> {
  const r = await q.query<ClaimedEnrolment>(
    `UPDATE campaign_enrolments SET state = 'running', claimed_at = now()
     WHERE id IN (SELECT e.id FROM campaign_enrolments e JOIN campaigns c ON c.id = e.campaign_id
                  WHERE e.workspace_id = $1 AND e.state = 'waiting' AND e.due_at <= now() AND c.status IN ${RUNNABLE}
                  ORDER BY e.due_at LIMIT $2 FOR UPDATE OF e SKIP LOCKED)
       AND state = 'waiting'
     RETURNING id, campaign_id, person_id, next_node, context`,
    [workspaceId, limit],
  );
  return r.rows;
}

/** Keeps the claims alive while their executor works on them. */
export async function refreshClaims(q: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await q.query(`UPDATE campaign_enrolments SET claimed_at = now() WHERE id = ANY ($1::uuid[]) AND state = 'running'`, [ids]);
}

/** Claims not refreshed for `staleMs` (their process died) go back to waiting, due at once. */
export async function releaseStale(q: Queryable, staleMs: number): Promise<number> {
  const r = await q.query(
    `UPDATE campaign_enrolments SET state = 'waiting', claimed_at = NULL
     WHERE state = 'running' AND claimed_at < now() - make_interval(secs => $1::double precision / 1000)`,
    [staleMs],
  );
  return r.rowCount;
}

/**
 * Moves the claimed enrolments past a node: to `next` (a node id), due `delayMinutes` after
 * they became due (a delay node) or now, or done when there is no next node.
 */
export async function moveOn(q: Queryable, ids: readonly string[], next: string | null, delayMinutes?: number): Promise<void> {
  if (ids.length === 0) return;
  await q.query(
    `UPDATE campaign_enrolments SET claimed_at = NULL,
       state = CASE WHEN $2::text IS NULL THEN 'done' ELSE 'waiting' END, next_node = $2,
       due_at = CASE WHEN $3::double precision IS NULL THEN now() ELSE due_at + make_interval(secs => $3::double precision * 60) END
     WHERE id = ANY ($1::uuid[]) AND state = 'running'`,
    [ids, next, delayMinutes ?? null],
  );
}

/** Stops the claimed enrolments (their node is gone from the workflow). */
export async function stopEnrolments(q: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length > 0) await q.query(`UPDATE campaign_enrolments SET state = 'stopped', claimed_at = NULL WHERE id = ANY ($1::uuid[]) AND state = 'running'`, [ids]);
}

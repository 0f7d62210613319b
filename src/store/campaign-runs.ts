// Schedule runs (campaigns/schedule-runs.ts; migrations 8, 420): one campaign_runs row per run
// key, inserted once whatever the number of replicas, and a job (store/job-queue.ts) that walks
// the run's audience; the row records how far the walk got, so a run a crash interrupted resumes there.
import { sqlLiterals, type Queryable } from './db.js';
import type { JobTable } from './job-queue.js';
import type { Shard } from './leases.js';
import type { CampaignRow } from './campaigns.js';
import { audienceWhere, Params } from './audience.js';
import type { AudienceConfig } from '../domain/conditions.js';
import { CAMPAIGN_RUN_STATES, type CampaignStatus, type FinishedRunState } from '../domain/campaigns.js';

const R = sqlLiterals(CAMPAIGN_RUN_STATES);

export interface LiveSchedule extends CampaignRow {
  live_since: Date | null;
}

/** Live `schedule` and `dynamic_schedule` campaigns of the shard's workspaces. */
export async function liveSchedules(q: Queryable, shard: Shard): Promise<LiveSchedule[]> {
  const r = await q.query<LiveSchedule>(
    `SELECT id, workspace_id, name, status, trigger_type, trigger_config, audience_config, workflow_definition, template_id, created_at, updated_at, live_since
     FROM campaigns WHERE status IN ('active', 'scheduled') AND trigger_type IN ('schedule', 'dynamic_schedule') AND herald_shard(workspace_id::text, $1) = $2`,
    [shard.count, shard.index],
  );
  return r.rows;
}

/** A run as its walk sees it when claimed. */
export interface RunJob {
  id: string;
  campaign_id: string;
  run_key: string;
  workspace_id: string;
  /** The last person enrolled so far (keyset cursor), null at the start. */
  after_person: string | null;
  /** People walked so far (counted against the ceiling). */
  enrolled: number;
}

/**
 * Runs as jobs (store/job-queue.ts): a run waits, is claimed for a page of its audience, and
 * waits again after it (runProgress) until its walk ends (finishRun). A claim not completed
 * waits again and resumes after the last page written.
 */
export const RUN_JOBS: JobTable = {
  name: 'campaign-runs',
  table: 'campaign_runs',
  state: 'state',
  values: { waiting: R.waiting, running: R.running },
  due: 'due_at',
  returning: 'id, campaign_id, run_key, workspace_id, after_person, enrolled',
  notCompleted: { retry: true },
};

/** Starts a run, due now: true for the one caller that inserted it; every other caller, now or later, gets false. */
export async function startRun(q: Queryable, workspaceId: string, campaignId: string, runKey: string): Promise<boolean> {
  const r = await q.query(`INSERT INTO campaign_runs (campaign_id, run_key, workspace_id, state) VALUES ($1, $2, $3, ${R.waiting}) ON CONFLICT DO NOTHING`, [
    campaignId, runKey, workspaceId,
  ]);
  return r.rowCount === 1;
}

/** Records a page of the walk (in the transaction that enrolled it); the run waits, due now, for its next page. */
export async function runProgress(q: Queryable, runId: string, afterPerson: string, walked: number): Promise<void> {
  await q.query(
    `UPDATE campaign_runs SET after_person = $2, enrolled = enrolled + $3, state = ${R.waiting}, claimed_by = NULL, claimed_at = NULL, claims = 0, due_at = now()
     WHERE id = $1 AND state = ${R.running}`,
    [runId, afterPerson, walked],
  );
}

/** Ends the run; `progress` records its last page (in the transaction that enrolled it). */
export async function finishRun(
  q: Queryable,
  runId: string,
  outcome: { state: FinishedRunState; truncated?: boolean; error?: string; progress?: { after: string | null; walked: number } },
): Promise<void> {
  await q.query(
    `UPDATE campaign_runs SET state = $2, truncated = $3, error = $4, after_person = COALESCE($5, after_person), enrolled = enrolled + $6,
       finished_at = now(), claimed_by = NULL, claimed_at = NULL
     WHERE id = $1`,
    [runId, outcome.state, outcome.truncated ?? false, outcome.error ?? null, outcome.progress?.after ?? null, outcome.progress?.walked ?? 0],
  );
}

/** A status the system sets (`completed`, `failed`), only from one of `from` (a user's pause meanwhile stays). */
export async function setSystemStatus(q: Queryable, campaignId: string, from: readonly CampaignStatus[], to: Extract<CampaignStatus, 'completed' | 'failed'>): Promise<void> {
  await q.query('UPDATE campaigns SET status = $3, updated_at = now() WHERE id = $1 AND status = ANY ($2::text[])', [campaignId, from, to]);
}

/**
 * A page of a dynamic_schedule campaign's people who are due and not yet enrolled for their
 * date: the instant in the trait at `path`, shifted by `offsetMinutes`, is after `since` (the
 * campaign went live) and at or before now. By person id after `after`; each with the date's
 * instant (ISO), which names the run that enrols them.
 */
export async function dynamicDue(
  q: Queryable,
  c: { workspaceId: string; campaignId: string; audience: AudienceConfig | null },
  path: readonly string[],
  offsetMinutes: number,
  since: Date | null,
  after: string,
  limit: number,
): Promise<{ id: string; instant: string }[]> {
  const p = new Params();
  const sql = `SELECT id, to_char(instant AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS instant FROM (
      SELECT p.id, herald_instant(p.traits #>> ${p.add(path)}::text[]) AS instant FROM people p
      WHERE p.workspace_id = ${p.add(c.workspaceId)} AND p.id > ${p.add(after)}::uuid AND ${audienceWhere(c.audience, p)}) d
    WHERE instant + make_interval(secs => ${p.add(offsetMinutes * 60)}::double precision) <= now()
      AND (${p.add(since?.toISOString() ?? null)}::timestamptz IS NULL OR instant + make_interval(secs => ${p.add(offsetMinutes * 60)}::double precision) > ${p.add(since?.toISOString() ?? null)}::timestamptz)
      AND NOT EXISTS (SELECT 1 FROM campaign_enrolments e WHERE e.campaign_id = ${p.add(c.campaignId)} AND e.person_id = d.id
                      AND e.run_id = 'dyn:' || to_char(instant AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
    ORDER BY id LIMIT ${p.add(limit)}`;
  return (await q.query<{ id: string; instant: string }>(sql, p.values)).rows;
}

/** When the next of a dynamic_schedule campaign's people becomes due (after now), or null. */
export async function dynamicNext(q: Queryable, c: { workspaceId: string; audience: AudienceConfig | null }, path: readonly string[], offsetMinutes: number): Promise<Date | null> {
  const p = new Params();
  const sql = `SELECT min(fire) AS next FROM (
      SELECT herald_instant(p.traits #>> ${p.add(path)}::text[]) + make_interval(secs => ${p.add(offsetMinutes * 60)}::double precision) AS fire FROM people p
      WHERE p.workspace_id = ${p.add(c.workspaceId)} AND ${audienceWhere(c.audience, p)}) d
    WHERE fire > now()`;
  return (await q.query<{ next: Date | null }>(sql, p.values)).rows[0]?.next ?? null;
}

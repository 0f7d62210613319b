// Schedule runs (campaigns/schedule-runs.ts; migration 8): one campaign_runs row per run key, whose
// insertion is the lease that makes a run start once whatever the number of replicas; the row
// then records how far the audience walk got, so a run a crash interrupted resumes there.
import { sqlLiterals, type Queryable } from './db.js';
import { lapsed } from './leases.js';
import type { CampaignRow } from './campaigns.js';
import { audienceWhere, Params } from './audience.js';
import type { AudienceConfig } from '../domain/conditions.js';
import { CAMPAIGN_RUN_STATES, type CampaignStatus, type FinishedRunState } from '../domain/campaigns.js';

const R = sqlLiterals(CAMPAIGN_RUN_STATES);

export interface LiveSchedule extends CampaignRow {
  live_since: Date | null;
}

/** Live `schedule` and `dynamic_schedule` campaigns, every workspace's. */
export async function liveSchedules(q: Queryable): Promise<LiveSchedule[]> {
  const r = await q.query<LiveSchedule>(
    `SELECT id, workspace_id, name, status, trigger_type, trigger_config, audience_config, workflow_definition, template_id, created_at, updated_at, live_since
     FROM campaigns WHERE status IN ('active', 'scheduled') AND trigger_type IN ('schedule', 'dynamic_schedule')`,
  );
  return r.rows;
}

export interface RunLease {
  campaign_id: string;
  run_key: string;
  workspace_id: string;
  /** The last person enrolled so far (keyset cursor), null at the start. */
  after_person: string | null;
  /** People walked so far (counted against the ceiling). */
  enrolled: number;
}

/** Starts a run: true for the one caller that inserted it; every other caller, now or later, gets false. */
export async function startRun(q: Queryable, workspaceId: string, campaignId: string, runKey: string, instance: number): Promise<boolean> {
  const r = await q.query(`INSERT INTO campaign_runs (campaign_id, run_key, workspace_id, state, claimed_by) VALUES ($1, $2, $3, ${R.enrolling}, $4) ON CONFLICT DO NOTHING`, [
    campaignId, runKey, workspaceId, instance,
  ]);
  return r.rowCount === 1;
}

/** Takes over runs still enrolling whose lease lapsed (store/leases.ts: their holder gone, or not refreshed for `staleMs`). */
export async function takeOverLapsed(q: Queryable, staleMs: number, owns: (workspaceId: string) => boolean, instance: number): Promise<RunLease[]> {
  const stale = await q.query<{ campaign_id: string; run_key: string; workspace_id: string }>(
    `SELECT campaign_id, run_key, workspace_id FROM campaign_runs WHERE state = ${R.enrolling} AND ${lapsed('claimed_by', 'claimed_at', '$1')}`,
    [staleMs],
  );
  const taken: RunLease[] = [];
  for (const s of stale.rows.filter((x) => owns(x.workspace_id))) {
    const r = await q.query<RunLease>(
      `UPDATE campaign_runs SET claimed_by = $4, claimed_at = now() WHERE campaign_id = $1 AND run_key = $2 AND state = ${R.enrolling} AND ${lapsed('claimed_by', 'claimed_at', '$3')}
       RETURNING campaign_id, run_key, workspace_id, after_person, enrolled`,
      [s.campaign_id, s.run_key, staleMs, instance],
    );
    taken.push(...r.rows);
  }
  return taken;
}

/** Records a page of the walk (in the transaction that enrolled it) and renews the lease. */
export async function runProgress(q: Queryable, campaignId: string, runKey: string, afterPerson: string, walked: number): Promise<void> {
  await q.query('UPDATE campaign_runs SET after_person = $3, enrolled = enrolled + $4, claimed_at = now() WHERE campaign_id = $1 AND run_key = $2', [campaignId, runKey, afterPerson, walked]);
}

export async function finishRun(q: Queryable, campaignId: string, runKey: string, outcome: { state: FinishedRunState; truncated?: boolean; error?: string }): Promise<void> {
  await q.query('UPDATE campaign_runs SET state = $3, truncated = $4, error = $5, finished_at = now() WHERE campaign_id = $1 AND run_key = $2', [
    campaignId, runKey, outcome.state, outcome.truncated ?? false, outcome.error ?? null,
  ]);
}

/** A status the system sets (INTERFACE 3.1: `completed`, `failed`), only from one of `from` (a user's pause meanwhile stays). */
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

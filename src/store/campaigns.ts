// Campaigns (README, Request bodies); their enrolments' counters are store/enrolment-counters.ts,
// their messages' store/channel-stats.ts.
import { prepared, type Queryable } from './db.js';
import { DELETE_COUNTERS, enrolmentStats, type EnrolmentStats } from './enrolment-counters.js';
import { LIVE_STATUSES, type CampaignStatus, type TriggerType, type Workflow } from '../domain/campaigns.js';
import type { Goal } from '../domain/goals.js';

export interface CampaignRow {
  id: string;
  workspace_id: string;
  name: string;
  status: CampaignStatus;
  trigger_type: TriggerType;
  trigger_config: Record<string, unknown>;
  audience_config: Record<string, unknown>;
  workflow_definition: Workflow;
  template_id: string | null;
  /** The share of enrolments held out (0 to 50): sent nothing, counted (docs/campaigns-runtime.md, Journeys). */
  holdout_percent: number;
  /** The goal whose event converts a person (docs/campaigns-runtime.md, Goals and conversions), or null. */
  goal: Goal | null;
  created_at: Date;
  updated_at: Date;
}

/** What an update may change. */
export type CampaignFields = Pick<CampaignRow, 'name' | 'status' | 'trigger_config' | 'audience_config' | 'workflow_definition' | 'holdout_percent' | 'goal'>;

const LIVE = LIVE_STATUSES.map((s) => `'${s}'`).join(', ');
const COLUMNS = 'id, workspace_id, name, status, trigger_type, trigger_config, audience_config, workflow_definition, template_id, holdout_percent, goal, created_at, updated_at';

export async function insertCampaign(q: Queryable, c: Omit<CampaignRow, 'created_at' | 'updated_at'>): Promise<CampaignRow> {
  const r = await q.query<CampaignRow>(
    `INSERT INTO campaigns (id, workspace_id, name, status, trigger_type, trigger_config, audience_config, workflow_definition, template_id, holdout_percent, goal)
     VALUES ($1, $2, $3, $4, $5, $6::text::jsonb, $7::text::jsonb, $8::text::jsonb, $9, $10, $11::text::jsonb) RETURNING ${COLUMNS}`,
    [c.id, c.workspace_id, c.name, c.status, c.trigger_type, JSON.stringify(c.trigger_config), JSON.stringify(c.audience_config), JSON.stringify(c.workflow_definition), c.template_id, c.holdout_percent, c.goal ? JSON.stringify(c.goal) : null],
  );
  return r.rows[0]!;
}

/** A campaign of the workspace (the caller has checked `id` is a UUID); `lock` holds it until the transaction ends. */
export async function findCampaign(q: Queryable, workspaceId: string, id: string, lock = false): Promise<CampaignRow | null> {
  const r = await q.query<CampaignRow>(`SELECT ${COLUMNS} FROM campaigns WHERE id = $1 AND workspace_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, workspaceId]);
  return r.rows[0] ?? null;
}

/** The workspace's campaigns among `ids`, by id. */
export async function loadCampaignsByIds(q: Queryable, workspaceId: string, ids: readonly string[]): Promise<Map<string, CampaignRow>> {
  const r = await q.query<CampaignRow>(CAMPAIGNS_BY_IDS, [workspaceId, ids]);
  return new Map(r.rows.map((c) => [c.id, c]));
}

/** Read for every page the workflow executor claims: prepared. */
const CAMPAIGNS_BY_IDS = prepared('campaigns-by-ids', `SELECT ${COLUMNS} FROM campaigns WHERE workspace_id = $1 AND id = ANY ($2::uuid[])`);

export interface CampaignFilter {
  status?: CampaignStatus;
  trigger_type?: TriggerType;
  /** Text the name contains, in any case. */
  q?: string;
  limit: number;
  offset: number;
}

const MATCHING = 'workspace_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR trigger_type = $3) AND ($4::text IS NULL OR strpos(lower(name), lower($4)) > 0)';

/** A page of the workspace's campaigns, newest first, and how many match in all. */
export async function listCampaigns(q: Queryable, workspaceId: string, f: CampaignFilter): Promise<{ campaigns: CampaignRow[]; total: number }> {
  const params = [workspaceId, f.status ?? null, f.trigger_type ?? null, f.q || null];
  const total = (await q.query<{ total: number }>(`SELECT count(*)::int AS total FROM campaigns WHERE ${MATCHING}`, params)).rows[0]!.total;
  const page = await q.query<CampaignRow>(`SELECT ${COLUMNS} FROM campaigns WHERE ${MATCHING} ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6`, [...params, f.limit, f.offset]);
  return { campaigns: page.rows, total };
}

export async function saveCampaign(q: Queryable, id: string, c: CampaignFields): Promise<CampaignRow> {
  const r = await q.query<CampaignRow>(
    `UPDATE campaigns SET name = $2, status = $3, trigger_config = $4::text::jsonb, audience_config = $5::text::jsonb, workflow_definition = $6::text::jsonb, holdout_percent = $7, goal = $8::text::jsonb, updated_at = now(),
       live_since = CASE WHEN $3 IN (${LIVE}) AND status NOT IN (${LIVE}) THEN now() ELSE live_since END
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, c.name, c.status, JSON.stringify(c.trigger_config), JSON.stringify(c.audience_config), JSON.stringify(c.workflow_definition), c.holdout_percent, c.goal ? JSON.stringify(c.goal) : null],
  );
  return r.rows[0]!;
}

/** Deletes the campaign with its enrolments (cascade) and their counters; the messages attributed to it stay. */
export async function deleteCampaign(q: Queryable, id: string): Promise<void> {
  await q.query(`WITH counters AS (${DELETE_COUNTERS}), edges AS (DELETE FROM journey_edges WHERE campaign_id = $1) DELETE FROM campaigns WHERE id = $1`, [id]);
}

/** Names of the workspace's live campaigns whose audience is the segment. */
export async function liveCampaignsTargeting(q: Queryable, workspaceId: string, segmentId: string): Promise<string[]> {
  const r = await q.query<{ name: string }>(
    `SELECT name FROM campaigns WHERE workspace_id = $1 AND status IN (${LIVE}) AND audience_config @> jsonb_build_object('segment_id', $2::text) ORDER BY created_at`,
    [workspaceId, segmentId],
  );
  return r.rows.map((c) => c.name);
}

/** Names of the workspace's live campaigns whose push nodes, or creation template, use the template. */
export async function liveCampaignsUsing(q: Queryable, workspaceId: string, templateId: string): Promise<string[]> {
  const r = await q.query<{ name: string }>(
    `SELECT name FROM campaigns
     WHERE workspace_id = $1 AND status IN (${LIVE})
       AND (template_id = $2::uuid OR workflow_definition @> jsonb_build_object('nodes', jsonb_build_array(jsonb_build_object('template_id', $2::text))))
     ORDER BY created_at`,
    [workspaceId, templateId],
  );
  return r.rows.map((c) => c.name);
}

/** A campaign's enrolment stats (store/enrolment-counters.ts). */
export async function campaignStats(q: Queryable, id: string): Promise<EnrolmentStats> {
  return (await enrolmentStats(q, [id])).get(id)!;
}

/** How many people one run (a webhook trigger, a schedule run) enrolled in the campaign. */
export async function countRunEnrolments(q: Queryable, campaignId: string, runId: string): Promise<number> {
  const r = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM campaign_enrolments WHERE campaign_id = $1 AND run_id = $2', [campaignId, runId]);
  return r.rows[0]!.n;
}

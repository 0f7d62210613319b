// The enrolments waiting at a wait_for_event node (docs/campaigns-runtime.md, Journeys;
// migration 540): the wait starts when the executor claims the enrolment there (its deadline
// becomes its due time, so the timeout is its own delayed job), and the awaited event resumes it
// to `on_event`. Each move is one conditional UPDATE on the row's node and state, so the event and
// the timeout cannot both move it: the timeout's claim leaves it `running` with its deadline set,
// which the resume does not touch, and a resumed enrolment is no longer at the wait node.
import { prepared, sqlLiterals, type Queryable } from './db.js';
import { countOnEdge } from './enrolments.js';
import { ENROLMENT_STATES } from '../domain/campaigns.js';
import type { Workflow } from '../domain/campaigns.js';

const E = sqlLiterals(ENROLMENT_STATES);

/** A campaign whose workflow has a wait_for_event node, and whose enrolments the executor runs. */
export interface WaitingCampaignRow {
  id: string;
  workspace_id: string;
  holdout_percent: number;
  workflow_definition: Workflow;
}

/** The campaigns (of one workspace, or all) with a wait_for_event node whose enrolments move on: not draft, paused, archived or failed. */
export async function waitingCampaigns(q: Queryable, workspaceId?: string): Promise<WaitingCampaignRow[]> {
  const r = await q.query<WaitingCampaignRow>(
    `SELECT id, workspace_id, holdout_percent, workflow_definition FROM campaigns
     WHERE status IN ('active', 'scheduled', 'completed') AND ($1::uuid IS NULL OR workspace_id = $1)
       AND workflow_definition @> '{"nodes": [{"type": "wait_for_event"}]}'`,
    [workspaceId ?? null],
  );
  return r.rows;
}

/**
 * Starts the wait of the claimed enrolments at wait node `nodeId`: due (and timed out) `seconds`
 * after they became due there. Not those an event resumed meanwhile (no longer at the node).
 */
export async function startWaits(q: Queryable, ids: readonly string[], nodeId: string, seconds: number): Promise<void> {
  if (ids.length > 0) await q.query(START_WAITS, [ids, nodeId, seconds]);
}

const START_WAITS = prepared(
  'start-waits',
  `UPDATE campaign_enrolments SET claimed_by = NULL, claimed_at = NULL, claims = 0, state = ${E.waiting}, next_node = $2,
     wait_until = due_at + make_interval(secs => $3::double precision), due_at = due_at + make_interval(secs => $3::double precision)
   WHERE id = ANY ($1::uuid[]) AND state = ${E.running} AND wait_until IS NULL AND (next_node IS NULL OR next_node = $2)`,
);

/** The people's enrolments not yet started at the campaign's first node (a holdout decides some of them out). */
export async function notStarted(q: Queryable, campaignId: string, personIds: readonly string[]): Promise<{ id: string }[]> {
  const r = await q.query<{ id: string }>(
    `SELECT id FROM campaign_enrolments WHERE campaign_id = $1 AND person_id = ANY ($2::uuid[]) AND next_node IS NULL AND state IN (${E.waiting}, ${E.running})`,
    [campaignId, personIds],
  );
  return r.rows;
}

export interface Resume {
  campaignId: string;
  /** The wait node, and whether it is the workflow's first (its enrolments not started have no next_node). */
  nodeId: string;
  first: boolean;
  onEvent: string;
  personIds: readonly string[];
  /** Enrolments never resumed (held out). */
  except: readonly string[];
}

/**
 * Moves the people's enrolments at the wait node to `on_event`, due now, with their count on the
 * edge; answers whether any moved. An enrolment is at the node once due there: waiting (its wait started,
 * or due and not yet claimed) or claimed to start its wait (which then finds it moved). One whose
 * timeout is claimed (running, deadline set) is the timeout's.
 */
export async function resumeWaits(q: Queryable, r: Resume): Promise<boolean> {
  // The statement's rows are the edge's counter row, written only when some moved.
  const res = await q.query(RESUME_WAITS, [r.campaignId, r.personIds, r.nodeId, r.onEvent, r.first, r.except]);
  return (res.rowCount ?? 0) > 0;
}

const RESUME_WAITS = prepared(
  'resume-waits',
  `WITH moved AS (
     UPDATE campaign_enrolments SET claimed_by = NULL, claimed_at = NULL, claims = 0, state = ${E.waiting}, next_node = $4,
       due_at = now(), entered_at = now(), wait_until = NULL
     WHERE campaign_id = $1 AND person_id = ANY ($2::uuid[]) AND id <> ALL ($6::uuid[])
       AND (next_node = $3 OR (next_node IS NULL AND $5::boolean))
       AND ((state = ${E.waiting} AND (wait_until IS NOT NULL OR due_at <= now())) OR (state = ${E.running} AND wait_until IS NULL))
     RETURNING campaign_id)
   ${countOnEdge('$3::text', '$4::text')}`,
);

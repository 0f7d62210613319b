// Campaign goals and conversions (docs/campaigns-runtime.md, Goals and conversions; migration
// 530): the goals the actors index, and the one statement that records a request's conversions.
import { prepared, sqlLiterals, type Queryable } from './db.js';
import { CAMPAIGN_STATUSES, ENROLMENT_STATES } from '../domain/campaigns.js';
import type { Goal } from '../domain/goals.js';

const C = sqlLiterals(CAMPAIGN_STATUSES);
const E = sqlLiterals(ENROLMENT_STATES);

export interface GoalRow {
  id: string;
  workspace_id: string;
  goal: Goal;
}

/**
 * The goals of campaigns that may still convert, of one workspace or of all: live, paused, or
 * completed (a broadcast is completed once its audience is enrolled, and its people convert after).
 */
export async function campaignGoals(q: Queryable, workspaceId?: string): Promise<GoalRow[]> {
  const r = await q.query<GoalRow>(
    `SELECT id, workspace_id, goal FROM campaigns
     WHERE goal IS NOT NULL AND status IN (${[C.active, C.scheduled, C.paused, C.completed].join(', ')}) AND ($1::uuid IS NULL OR workspace_id = $1)`,
    [workspaceId ?? null],
  );
  return r.rows;
}

/** A person performed a campaign's goal event. */
export interface GoalEvent {
  campaignId: string;
  personId: string;
  eventId: string;
  /** The event's time (ISO). */
  at: string;
  withinSeconds: number;
}

/**
 * Records the conversions among `reached`: each (campaign, person) whose event came within the
 * goal's window after the person's first message of the campaign (the first a provider took),
 * once: the conversion's key refuses a second (another event, a redelivery). The same statement
 * adds a `converted` event to that first message, ends the person's enrolments still running
 * and counts the conversions in the enrolment counters. Answers how many were recorded.
 */
export async function recordConversions(q: Queryable, workspaceId: string, reached: readonly GoalEvent[]): Promise<number> {
  if (reached.length === 0) return 0;
  const r = await q.query(RECORD_CONVERSIONS, [
    workspaceId,
    reached.map((g) => g.campaignId),
    reached.map((g) => g.personId),
    reached.map((g) => g.eventId),
    reached.map((g) => g.at),
    reached.map((g) => g.withinSeconds),
  ]);
  return r.rowCount;
}

/**
 * Per request whose events a goal listens to: prepared. The first message is read along the
 * person's messages (messages_by_person): an index of its own would cost every campaign send a
 * write, for a read only goal events make.
 */
const RECORD_CONVERSIONS = prepared(
  'record-conversions',
  `WITH input AS (SELECT * FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::double precision[]) AS x(campaign_id, person_id, event_id, at, within)),
     reached AS (
       SELECT DISTINCT ON (i.campaign_id, i.person_id) i.campaign_id, i.person_id, i.event_id, i.at, f.id AS message_id
       FROM input i
       CROSS JOIN LATERAL (
         SELECT m.id, m.sent_at FROM messages m
         WHERE m.person_id = i.person_id AND m.campaign_id = i.campaign_id::text AND m.sent_at IS NOT NULL AND m.workspace_id = $1
         ORDER BY m.sent_at, m.id LIMIT 1
       ) f
       -- A campaign deleted since the index was read converts no one.
       WHERE EXISTS (SELECT 1 FROM campaigns c WHERE c.id = i.campaign_id AND c.workspace_id = $1)
         AND i.at::timestamptz >= f.sent_at AND i.at::timestamptz <= f.sent_at + make_interval(secs => i.within)
       ORDER BY i.campaign_id, i.person_id, i.at::timestamptz, i.event_id
     ),
     conv AS (
       INSERT INTO campaign_conversions (campaign_id, person_id, workspace_id, message_id, event_id, converted_at)
       SELECT campaign_id, person_id, $1, message_id, event_id, at::timestamptz FROM reached
       ON CONFLICT DO NOTHING
       RETURNING campaign_id, person_id, message_id, event_id
     ),
     marked AS (
       UPDATE messages m SET events = COALESCE(m.events, '[]') || jsonb_build_array(jsonb_build_object('type', 'converted', 'at', r.at, 'details', jsonb_build_object('event_id', c.event_id)))
       FROM conv c JOIN reached r USING (campaign_id, person_id) WHERE m.id = c.message_id
     ),
     ended AS (
       UPDATE campaign_enrolments e SET state = ${E.converted}, claimed_by = NULL, claimed_at = NULL
       FROM conv c WHERE e.campaign_id = c.campaign_id AND e.person_id = c.person_id AND e.state IN (${E.waiting}, ${E.running})
     ),
     counted AS (
       INSERT INTO enrolment_counters AS k (campaign_id, slot, enrolled, triggered, held_out, converted)
       SELECT campaign_id, pg_backend_pid(), 0, 0, 0, count(*) FROM conv GROUP BY campaign_id ORDER BY campaign_id
       ON CONFLICT (campaign_id, slot) DO UPDATE SET converted = k.converted + excluded.converted
     )
     SELECT campaign_id FROM conv`,
);

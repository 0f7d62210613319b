// A campaign's enrolment stats (README, Routes): `enrolled` counts its enrolments, `triggered`
// the runs that enrolled someone, `last_triggered_at` the latest enrolment. Read from
// enrolment_counters (migration 455), which the statements writing enrolments keep per
// campaign: a read sums a few rows, however many people the campaign enrolled.
import type { Queryable } from './db.js';

export interface EnrolmentStats {
  enrolled: number;
  triggered: number;
  /** Enrolments held out (holdout_percent), counted by the statement that holds them out (store/enrolments.ts). */
  held_out: number;
  /** People who reached the campaign's goal, counted by the statement that records them (store/conversions.ts). */
  converted: number;
  last_triggered_at: Date | null;
}

/**
 * A campaign's counter rows past which a read folds them into one: each database session that
 * enrolled people has rows of its own, and the pool's sessions come and go.
 */
const FOLD_AT = 64;

/**
 * Moves the campaigns' counters into slot 0, but for the rows a writer holds now (SKIP LOCKED:
 * the fold never waits on a page, and a writer waits at most on this one statement).
 */
const FOLD = `WITH folded AS (
    DELETE FROM enrolment_counters WHERE (campaign_id, slot) IN (
      SELECT campaign_id, slot FROM enrolment_counters WHERE campaign_id = ANY ($1::uuid[]) AND slot <> 0 FOR UPDATE SKIP LOCKED)
    RETURNING *)
  INSERT INTO enrolment_counters AS c (campaign_id, slot, enrolled, triggered, held_out, converted, last_enrolled_at)
  SELECT campaign_id, 0, sum(enrolled), sum(triggered), sum(held_out), sum(converted), max(last_enrolled_at) FROM folded GROUP BY campaign_id ORDER BY campaign_id
  ON CONFLICT (campaign_id, slot) DO UPDATE
    SET enrolled = c.enrolled + excluded.enrolled, triggered = c.triggered + excluded.triggered, held_out = c.held_out + excluded.held_out,
        converted = c.converted + excluded.converted, last_enrolled_at = GREATEST(c.last_enrolled_at, excluded.last_enrolled_at)`;

/** One statement for a page of campaigns: each one's enrolment stats (zeros for one with none). */
export async function enrolmentStats(q: Queryable, campaignIds: readonly string[]): Promise<Map<string, EnrolmentStats>> {
  const r = await q.query<EnrolmentStats & { id: string; slots: number }>(
    `SELECT campaign_id::text AS id, COALESCE(sum(enrolled), 0)::int AS enrolled, COALESCE(sum(triggered), 0)::int AS triggered,
            COALESCE(sum(held_out), 0)::int AS held_out, COALESCE(sum(converted), 0)::int AS converted,
            max(last_enrolled_at) AS last_triggered_at, count(*)::int AS slots
     FROM enrolment_counters WHERE campaign_id = ANY ($1::uuid[]) GROUP BY campaign_id`,
    [campaignIds],
  );
  const crowded = r.rows.filter((s) => s.slots > FOLD_AT).map((s) => s.id);
  if (crowded.length > 0) await q.query(FOLD, [crowded]);
  const stats = new Map<string, EnrolmentStats>(campaignIds.map((id) => [id, { enrolled: 0, triggered: 0, held_out: 0, converted: 0, last_triggered_at: null }]));
  for (const { id, enrolled, triggered, held_out, converted, last_triggered_at } of r.rows) stats.set(id, { enrolled, triggered, held_out, converted, last_triggered_at });
  return stats;
}

/** A campaign's counters go with it (the deletion of its enrolments counts nothing out). */
export const DELETE_COUNTERS = 'DELETE FROM enrolment_counters WHERE campaign_id = $1';

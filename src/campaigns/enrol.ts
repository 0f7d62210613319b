// Enrolment (INTERFACE 2.7, DECISIONS §6): people entering a campaign's workflow. Every path
// that enrols (event triggers, webhook triggers, schedule runs) comes through here, so the
// storage rules hold for all: one enrolment per (campaign, run, person) and a person's nth
// entry once (migration 7's unique keys, inserted against with ON CONFLICT DO NOTHING), so
// concurrent duplicates, replicas and redeliveries cannot enrol twice nor exceed max_per_user.
import { v5 as uuidv5 } from 'uuid';
import type { Queryable } from '../store/db.js';
import type { CampaignRow } from '../store/campaigns.js';

export interface EnrolRules {
  /** entry <= maxPerUser (first_occurrence callers pass 1 and check first-seen themselves). */
  maxPerUser?: number;
  /** No enrolment when the person's latest enrolment in this campaign is younger than this. */
  debounceSeconds?: number;
}

export interface EnrolContext {
  /** Template scope `event` = parameters; the push records carry the event id. */
  event?: { id: string; name: string; parameters: Record<string, unknown> };
  /** Template scope `trigger` (webhook trigger_data). */
  trigger?: Record<string, unknown>;
  variables?: Record<string, unknown>;
}

/** Namespace of enrolment ids (UUIDv5): the same campaign, run and person always name the same enrolment. */
const ENROLMENT_NS = '6f1c6a52-3d0e-4c8e-9a8e-2f4b7c1d9e30';

export const enrolmentId = (campaignId: string, runId: string, personId: string): string => uuidv5(`${campaignId}/${runId}/${personId}`, ENROLMENT_NS);

/** How often people who lost an entry number to a concurrent enrolment are tried again. */
const ENTRY_RETRIES = 3;

/**
 * Enrols the people in one statement per call (ON CONFLICT DO NOTHING on both unique keys),
 * with deterministic enrolment ids. The workflow starts at `startAt` (default now). Returns how
 * many were newly enrolled. Runs inside the caller's transaction when given one.
 *
 * A person's entry is their count of entries so far + 1. Two enrolments of one person racing
 * (two events at once) compute the same entry: one wins the unique key and the other is
 * tried again with the next entry, up to max_per_user. People not of the campaign's workspace
 * are ignored.
 */
export async function enrolPeople(
  q: Queryable,
  campaign: CampaignRow,
  runId: string,
  personIds: readonly string[],
  opts: { rules?: EnrolRules; context?: EnrolContext; startAt?: Date } = {},
): Promise<number> {
  let pending = [...new Set(personIds)];
  let enrolled = 0;
  const context = JSON.stringify(opts.context ?? {});
  for (let attempt = 0; attempt <= ENTRY_RETRIES && pending.length > 0; attempt++) {
    const ids = pending.map((p) => enrolmentId(campaign.id, runId, p));
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
      [campaign.id, campaign.workspace_id, runId, ids, pending, opts.rules?.maxPerUser ?? null, opts.rules?.debounceSeconds ?? null, opts.startAt?.toISOString() ?? null, context],
    );
    enrolled += r.rows.filter((x) => x.inserted).length;
    // Candidates not inserted lost a unique key to a concurrent enrolment: the next attempt
    // sees it committed and either finds this run's row (nothing to do) or takes the next entry.
    pending = r.rows.filter((x) => !x.inserted).map((x) => x.person_id);
  }
  return enrolled;
}

// Enrolment (docs/campaigns-runtime.md; README, Request bodies): people entering a campaign's workflow. Every path
// that enrols (event triggers, webhook triggers, schedule runs) comes through here, so the
// storage rules hold for all: one enrolment per (campaign, run, person) and a person's nth
// entry once (migration 7's unique keys, inserted against with ON CONFLICT DO NOTHING), so
// concurrent duplicates, replicas and redeliveries cannot enrol twice nor exceed max_per_user.
import { v5 as uuidv5 } from 'uuid';
import type { Queryable } from '../store/db.js';
import type { CampaignRow } from '../store/campaigns.js';
import { insertEnrolments, type EnrolContext, type EnrolRules } from '../store/enrolments.js';
import { countEnrolments } from '../metrics/index.js';

export type { EnrolContext, EnrolRules };

/** Namespace of enrolment ids (UUIDv5): the same campaign, run and person always name the same enrolment. */
const ENROLMENT_NS = '6f1c6a52-3d0e-4c8e-9a8e-2f4b7c1d9e30';

export const enrolmentId = (campaignId: string, runId: string, personId: string): string => uuidv5(`${campaignId}/${runId}/${personId}`, ENROLMENT_NS);

/** Someone entering a campaign: the run that enrols them, and their context (an index into the call's contexts). */
export interface Entrant {
  runId: string;
  personId: string;
  context: number;
}

/**
 * Enrols the entrants in one statement per round (ON CONFLICT DO NOTHING on both unique keys),
 * with deterministic enrolment ids; a run enrols a person once however often they are named. The
 * workflow starts at `startAt` (default now). Returns how many were newly enrolled. Runs inside
 * the caller's transaction when given one.
 *
 * A person's entry is their count of entries so far + 1. Two enrolments of one person racing
 * (two events at once, in two calls or in this one) compute the same entry: one wins the unique
 * key and the other is tried again, seeing the winner, with the next entry (up to
 * max_per_user), until every entrant is enrolled or refused by the rules: each round at least
 * one of those racing wins, so it ends however many race (20 events at once are 20 entries).
 * People not of the campaign's workspace are ignored.
 */
export async function enrol(
  q: Queryable,
  campaign: Pick<CampaignRow, 'id' | 'workspace_id'>,
  entrants: readonly Entrant[],
  contexts: readonly EnrolContext[],
  opts: { rules?: EnrolRules; startAt?: Date } = {},
): Promise<number> {
  const c = { campaignId: campaign.id, workspaceId: campaign.workspace_id };
  const byId = new Map(entrants.map((e) => [enrolmentId(campaign.id, e.runId, e.personId), e]));
  let pending = [...byId].map(([id, e]) => ({ id, ...e }));
  let enrolled = 0;
  while (pending.length > 0) {
    const lost = new Set<string>();
    for (const row of await insertEnrolments(q, c, pending, contexts, opts)) {
      if (row.inserted) enrolled++;
      else lost.add(row.id);
    }
    pending = pending.filter((e) => lost.has(e.id));
  }
  countEnrolments(enrolled);
  return enrolled;
}

/** Enrols the people under one run with one context (a schedule run's page, a webhook trigger's people). */
export function enrolPeople(
  q: Queryable,
  campaign: Pick<CampaignRow, 'id' | 'workspace_id'>,
  runId: string,
  personIds: readonly string[],
  opts: { rules?: EnrolRules; context?: EnrolContext; startAt?: Date } = {},
): Promise<number> {
  return enrol(q, campaign, personIds.map((personId) => ({ runId, personId, context: 0 })), [opts.context ?? {}], opts);
}

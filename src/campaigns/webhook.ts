// One webhook trigger's run (docs/ingest.md; README, Routes): the campaign's audience, up to the trigger
// ceiling, enrolled under the trigger's id in one transaction before the 202. Enrolling is
// the queueing: the executor sends each enrolment's push nodes afterwards, asynchronously and
// durably, so the answer's `people_queued` is exact and nothing acknowledged can be lost. With
// the default ceiling (10,000) the whole audience is one page: one read of person ids and one
// INSERT … SELECT (enrolPeople) of up to 10,000 rows.
import type { Db } from '../store/db.js';
import { countRunEnrolments, findCampaign } from '../store/campaigns.js';
import { audienceExceeds, audiencePages } from '../store/audience.js';
import { enrolPeople } from './enrol.js';
import { checkTriggerable } from '../domain/webhook-trigger.js';
import type { AudienceConfig } from '../domain/conditions.js';
import type { TriggerOutcome } from './webhook-claims.js';

/** People read and enrolled per statement. */
const PAGE = 10_000;

/**
 * Enrols the audience of the workspace's campaign under `runId` (the trigger's id), with
 * `triggerData` as the template scope `trigger`. The campaign row is held until commit and
 * checked again under it, so a campaign paused or deleted since the request's checks refuses
 * the trigger (nothing enrolled) instead of racing it. `peopleQueued` counts the run's
 * enrolments, so a run done again (a claim taken over) reports what the first one enrolled.
 */
export async function runWebhookTrigger(db: Db, workspaceId: string, campaignId: string, runId: string, triggerData: Record<string, unknown>, ceiling: number): Promise<TriggerOutcome> {
  return db.tx(async (q) => {
    const campaign = await findCampaign(q, workspaceId, campaignId, true);
    checkTriggerable(campaign);
    const audience = campaign!.audience_config as AudienceConfig;
    for await (const page of audiencePages(q, workspaceId, audience, { pageSize: Math.min(PAGE, ceiling), limit: ceiling })) {
      await enrolPeople(q, campaign!, runId, page, { context: { trigger: triggerData } });
    }
    const audienceTruncated = await audienceExceeds(q, workspaceId, audience, ceiling);
    return { peopleQueued: await countRunEnrolments(q, campaignId, runId), audienceTruncated };
  });
}

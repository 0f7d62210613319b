// POST /campaigns/{campaignId}/trigger (docs/ingest.md; README, Routes and Errors): a key route whose
// errors are all flat `{error}` (but 401). The order matters: the request (Idempotency-Key,
// workspace_id), then the campaign (404, not webhook, not active), and only then the key is
// claimed, so a refused request never consumes it; then the audience is enrolled (the run of
// src/campaigns/webhook.ts) and the claim completed, before the 202.
import type { Handler, Handlers } from './context.js';
import { json, type Reply } from './reply.js';
import { DomainError } from '../domain/errors.js';
import { checkTriggerable, idempotencyKeyOf, replayOf, triggerFingerprint } from '../domain/webhook-trigger.js';
import { iso } from '../domain/time.js';
import { isUuid, newId } from '../ids.js';
import { findCampaign } from '../store/index.js';
import { runWebhookTrigger, type HeldClaim, type TriggerClaim, type TriggerOutcome } from '../campaigns/index.js';
import { logger } from '../logger.js';

const people = (n: number) => `${n} ${n === 1 ? 'person' : 'people'}`;

/** The trigger's answer (docs/ingest.md): `audience_truncated`, `duplicate` and `idempotency_key` only when they say something. */
function accepted(campaignId: string, claim: TriggerClaim, outcome: TriggerOutcome, key: string | null, replay: boolean): Reply {
  const message = replay
    ? `Duplicate trigger: this Idempotency-Key was used at ${iso(claim.triggeredAt)} and nothing was sent again; that trigger queued ${people(outcome.peopleQueued)}.`
    : `Campaign triggered: ${people(outcome.peopleQueued)} queued; the workflow runs asynchronously.`;
  const warning = outcome.audienceTruncated
    ? ` Warning: more people match the audience than the trigger ceiling (HERALD_TRIGGER_AUDIENCE_CEILING); only ${people(outcome.peopleQueued)} were queued and the others were not triggered.`
    : '';
  return json(202, {
    success: true,
    campaign_id: campaignId,
    status: replay ? 'completed' : 'processing',
    triggered_at: iso(claim.triggeredAt),
    people_queued: outcome.peopleQueued,
    ...(outcome.audienceTruncated ? { audience_truncated: true } : {}),
    ...(replay ? { duplicate: true } : {}),
    ...(key === null ? {} : { idempotency_key: key }),
    message: message + warning,
  });
}

const trigger: Handler<'POST /campaigns/{campaignId}/trigger'> = async (ctx) => {
  const key = idempotencyKeyOf(ctx.headers['idempotency-key']);
  const body = ctx.body;
  const workspaceId = ctx.workspaceId;
  const named = isUuid(body.workspace_id) ? body.workspace_id.toLowerCase() : body.workspace_id;
  if (named !== workspaceId) throw new DomainError('FORBIDDEN', "workspace_id is not the API key's workspace");
  const id = ctx.params.campaignId;
  const campaign = isUuid(id) ? await findCampaign(ctx.db, workspaceId, id) : null;
  checkTriggerable(campaign);
  const campaignId = campaign!.id;

  const fresh: TriggerClaim = { fingerprint: triggerFingerprint(body.trigger_data), triggerId: newId(), triggeredAt: new Date(), outcome: null };
  let held: HeldClaim | null = null;
  if (key !== null) {
    // The claim store down is a ClaimStoreUnavailable: 503, before anything is sent.
    const claimed = await ctx.triggers.claims.claim({ workspaceId, campaignId, key }, fresh);
    if ('found' in claimed) return accepted(campaignId, claimed.found, replayOf(claimed.found, fresh.fingerprint), key, true);
    held = claimed.held;
  }

  // A taken-over claim runs again as the trigger it was: same run id, so nobody is enrolled twice.
  const run = held?.claim ?? fresh;
  let outcome: TriggerOutcome;
  try {
    outcome = await runWebhookTrigger(ctx.db, workspaceId, campaignId, run.triggerId, body.trigger_data ?? {}, ctx.triggers.audienceCeiling);
  } catch (err) {
    // Nothing was enrolled (one transaction): the key is free for a retry.
    await held?.release().catch((e: Error) => logger.warn('releasing a trigger claim failed; it is taken over once stale', { err: e.message }));
    throw err;
  }
  // Enrolled and committed: the trigger happened whatever the claim store says now. A claim
  // left in progress answers 409 until it is stale, then a retry takes it over and enrols nobody again.
  await held?.complete(outcome).catch((e: Error) => logger.warn('completing a trigger claim failed', { err: e.message }));
  if (outcome.peopleQueued > 0) ctx.triggers.enrolled();
  return accepted(campaignId, run, outcome, key, false);
};

export const campaignTriggerHandlers = {
  'POST /campaigns/{campaignId}/trigger': trigger,
} satisfies Handlers;

// Idempotency-Key claims of the webhook trigger in PostgreSQL (migration 9, `trigger_claims`):
// the claim store of the embedded default. src/campaigns/webhook-claims.ts holds the rules both
// claim stores share; this is its SQL.
import type { Queryable } from './db.js';

/** One key of one campaign of one workspace. */
export interface ClaimScope {
  workspaceId: string;
  campaignId: string;
  key: string;
}

export interface TriggerOutcome {
  peopleQueued: number;
  audienceTruncated: boolean;
}

/** What a key remembers: the trigger that claimed it and, once it completed, what it queued. */
export interface TriggerClaim {
  fingerprint: string;
  triggerId: string;
  triggeredAt: Date;
  outcome: TriggerOutcome | null;
}

interface ClaimRow {
  fingerprint: string;
  trigger_id: string;
  triggered_at: Date;
  people_queued: number | null;
  audience_truncated: boolean | null;
}

const claimOf = (r: ClaimRow): TriggerClaim => ({
  fingerprint: r.fingerprint,
  triggerId: r.trigger_id,
  triggeredAt: r.triggered_at,
  outcome: r.people_queued === null ? null : { peopleQueued: r.people_queued, audienceTruncated: r.audience_truncated === true },
});

const KEY = 'workspace_id = $1 AND campaign_id = $2 AND idempotency_key = $3';

/**
 * Claims the key for `fresh` under `token` in one statement (the primary key makes it atomic
 * across actors and replicas): a new key, or one whose row has expired, takes `fresh`; a claim
 * still in progress after `staleMs` with the same fingerprint (its request was answered 503 by
 * the front's timeout, or its process died) is taken over, keeping its trigger id and time so
 * that what it enrolled is not enrolled again. Otherwise the row found is returned; null when
 * it vanished in between (released), for the caller to try again.
 */
export async function claimTrigger(
  q: Queryable,
  s: ClaimScope,
  fresh: TriggerClaim,
  token: string,
  ttlMs: number,
  staleMs: number,
): Promise<{ claimed: TriggerClaim } | { found: TriggerClaim } | null> {
  const claimed = await q.query<ClaimRow>(
    `INSERT INTO trigger_claims AS c (workspace_id, campaign_id, idempotency_key, fingerprint, trigger_id, triggered_at, claim_token, claimed_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, now(), now() + $8 * interval '1 millisecond')
     ON CONFLICT (workspace_id, campaign_id, idempotency_key) DO UPDATE SET
       trigger_id = CASE WHEN c.expires_at <= now() THEN excluded.trigger_id ELSE c.trigger_id END,
       triggered_at = CASE WHEN c.expires_at <= now() THEN excluded.triggered_at ELSE c.triggered_at END,
       fingerprint = excluded.fingerprint, claim_token = excluded.claim_token, claimed_at = now(), expires_at = excluded.expires_at,
       people_queued = NULL, audience_truncated = NULL
     WHERE c.expires_at <= now()
        OR (c.people_queued IS NULL AND c.fingerprint = excluded.fingerprint AND c.claimed_at < now() - $9 * interval '1 millisecond')
     RETURNING fingerprint, trigger_id, triggered_at, people_queued, audience_truncated`,
    [s.workspaceId, s.campaignId, s.key, fresh.fingerprint, fresh.triggerId, fresh.triggeredAt, token, ttlMs, staleMs],
  );
  if (claimed.rows[0]) return { claimed: claimOf(claimed.rows[0]) };
  const found = await q.query<ClaimRow>(
    `SELECT fingerprint, trigger_id, triggered_at, people_queued, audience_truncated FROM trigger_claims WHERE ${KEY} AND expires_at > now()`,
    [s.workspaceId, s.campaignId, s.key],
  );
  return found.rows[0] ? { found: claimOf(found.rows[0]) } : null;
}

/** Records the outcome of the claim held under `token` (a claim taken over since is left alone); remembered `ttlMs` from now. */
export async function completeTrigger(q: Queryable, s: ClaimScope, token: string, outcome: TriggerOutcome, ttlMs: number): Promise<void> {
  await q.query(
    `UPDATE trigger_claims SET people_queued = $5, audience_truncated = $6, expires_at = now() + $7 * interval '1 millisecond' WHERE ${KEY} AND claim_token = $4`,
    [s.workspaceId, s.campaignId, s.key, token, outcome.peopleQueued, outcome.audienceTruncated, ttlMs],
  );
}

/** Forgets the claim held under `token`, so the key can be used again. */
export async function releaseTrigger(q: Queryable, s: ClaimScope, token: string): Promise<void> {
  await q.query(`DELETE FROM trigger_claims WHERE ${KEY} AND claim_token = $4`, [s.workspaceId, s.campaignId, s.key, token]);
}

/** Deletes expired claims (they already count as absent). */
export async function purgeTriggerClaims(q: Queryable): Promise<void> {
  await q.query('DELETE FROM trigger_claims WHERE expires_at <= now()');
}

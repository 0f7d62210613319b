// Where the webhook trigger's Idempotency-Key claims live (docs/ingest.md): one interface, two
// stores. With NATS_URL, a NATS KV bucket every replica shares (`<prefix>-trigger-claims`,
// entries kept 24 h, claims made with the atomic create and compare-and-set of KV); on the
// embedded default, the `trigger_claims` table (store/trigger-claims.ts). Whatever a store
// fails with becomes ClaimStoreUnavailable here, a 503 of the error catalog (nothing sent).
import { randomUUID } from 'node:crypto';
import { createHash } from 'node:crypto';
import { Kvm, type KV, type KvEntry } from '@nats-io/kv';
import { jetstream, JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Db } from '../store/db.js';
import { claimTrigger, completeTrigger, purgeTriggerClaims, releaseTrigger, type ClaimScope, type TriggerClaim, type TriggerOutcome } from '../store/trigger-claims.js';
import { IDEMPOTENCY_TTL_MS } from '../domain/webhook-trigger.js';
import { Unavailable } from '../domain/errors.js';
import { retry } from '../util/backoff.js';
import { logger } from '../logger.js';

export type { TriggerClaim, TriggerOutcome };

/** A claim this request holds: it completes it (the key then answers replays) or releases it (the key is free again). */
export interface HeldClaim {
  /** The claim as held: a taken-over claim keeps the trigger id and time it was first made with. */
  claim: TriggerClaim;
  complete(outcome: TriggerOutcome): Promise<void>;
  release(): Promise<void>;
}

export interface TriggerClaims {
  /**
   * Claims the key for `fresh`, atomically across actors and replicas. `held`: the caller owns
   * the key (new, expired, or an abandoned claim with the same trigger_data taken over);
   * `found`: another trigger holds or held it.
   */
  claim(scope: ClaimScope, fresh: TriggerClaim): Promise<{ held: HeldClaim } | { found: TriggerClaim }>;
}

/** The claim store failed (`cause`) or kept changing under the request: 503, nothing sent, the key still free. */
class ClaimStoreUnavailable extends Unavailable {
  constructor(cause: unknown) {
    super('The idempotency store is unavailable; nothing was sent. Retry shortly with the same Idempotency-Key.', cause);
  }
}

/** The claim vanished (released) or was taken between the attempt and the read: a lost race, tried again. */
class ClaimChanged extends ClaimStoreUnavailable {
  constructor() {
    super(new Error('idempotency claim store: the claim kept changing under the request'));
  }
}

/** Tries a claim at most this often while it keeps changing; then that is the 503. */
const againWhileChanging = { attempts: 3, retryable: (err: unknown) => err instanceof ClaimChanged };

/** Runs a claim store operation; any failure is the store being unavailable. */
async function guarded<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw new ClaimStoreUnavailable(err);
  }
}

/**
 * The embedded default's store: the `trigger_claims` table. `staleMs`: how long a claim may be
 * in progress before a retry with the same trigger_data takes it over (the request timeout:
 * by then the front has answered that request 503).
 */
export function pgTriggerClaims(db: Db, staleMs: number): TriggerClaims {
  let purgedAt = Date.now();
  return {
    async claim(scope, fresh) {
      // Expired rows already count as absent; deleting them is housekeeping, at most hourly.
      if (Date.now() - purgedAt > 60 * 60_000) {
        purgedAt = Date.now();
        void purgeTriggerClaims(db).catch((err) => logger.warn('purging expired trigger claims failed', { err: (err as Error).message }));
      }
      return retry(async () => {
        const token = randomUUID();
        const r = await guarded(() => claimTrigger(db, scope, fresh, token, IDEMPOTENCY_TTL_MS, staleMs));
        if (!r) throw new ClaimChanged();
        if ('found' in r) return r;
        const held: HeldClaim = {
          claim: r.claimed,
          complete: (outcome) => guarded(() => completeTrigger(db, scope, token, outcome, IDEMPOTENCY_TTL_MS)),
          release: () => guarded(() => releaseTrigger(db, scope, token)),
        };
        return { held };
      }, againWhileChanging);
    },
  };
}

/** The KV bucket of one deployment's trigger claims; replicas share it. */
const triggerClaimsBucket = (prefix: string) => `${prefix}-trigger-claims`;

/** KV keys allow only [-_=./A-Za-z0-9]: the Idempotency-Key (any printable ASCII) is hashed into that. */
const kvKey = (s: ClaimScope) => `${s.workspaceId}.${s.campaignId}.${createHash('sha256').update(s.key).digest('base64url')}`;

/** A claim as stored in KV. */
interface Stored {
  fingerprint: string;
  trigger_id: string;
  triggered_at: string;
  claimed_at: number;
  people_queued?: number;
  audience_truncated?: boolean;
}

const stored = (c: TriggerClaim, now: number): Stored => ({
  fingerprint: c.fingerprint,
  trigger_id: c.triggerId,
  triggered_at: c.triggeredAt.toISOString(),
  claimed_at: now,
  ...(c.outcome ? { people_queued: c.outcome.peopleQueued, audience_truncated: c.outcome.audienceTruncated } : {}),
});

const claimOf = (s: Stored): TriggerClaim => ({
  fingerprint: s.fingerprint,
  triggerId: s.trigger_id,
  triggeredAt: new Date(s.triggered_at),
  outcome: s.people_queued === undefined ? null : { peopleQueued: s.people_queued, audienceTruncated: s.audience_truncated === true },
});

/** A create or compare-and-set another request won: null (the claim is read again); any other failure stands. */
function nullOnLostRace(err: ClaimStoreUnavailable): null {
  const cause = err.cause;
  if (cause instanceof JetStreamApiError && (cause.code === JetStreamApiCodes.StreamWrongLastSequence || cause.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)) return null;
  throw err;
}

/** With NATS_URL: the claims in a KV bucket (max_age 24 h). Requests to it give up after 3 s (then 503). */
export async function natsTriggerClaims(nc: NatsConnection, prefix: string, staleMs: number): Promise<TriggerClaims> {
  const kv: KV = await new Kvm(jetstream(nc, { timeout: 3000 })).create(triggerClaimsBucket(prefix), { history: 1, ttl: IDEMPOTENCY_TTL_MS });

  const hold = (key: string, claim: TriggerClaim, revision: number): { held: HeldClaim } => ({
    held: {
      claim,
      // Compare-and-set on the revision this request wrote: a claim taken over since is left alone.
      complete: async (outcome) => {
        await guarded(() => kv.update(key, JSON.stringify(stored({ ...claim, outcome }, Date.now())), revision));
      },
      release: async () => {
        await guarded(() => kv.delete(key, { previousSeq: revision }));
      },
    },
  });

  return {
    async claim(scope, fresh) {
      const key = kvKey(scope);
      return retry(async () => {
        // `create` succeeds only where the key has no live value (never written, deleted or aged out).
        const created = await guarded(() => kv.create(key, JSON.stringify(stored(fresh, Date.now())))).catch(nullOnLostRace);
        if (created !== null) return hold(key, fresh, created);
        const entry: KvEntry | null = await guarded(() => kv.get(key));
        if (!entry || entry.operation !== 'PUT') throw new ClaimChanged();
        const found = entry.json<Stored>();
        const abandoned = found.people_queued === undefined && found.fingerprint === fresh.fingerprint && Date.now() - found.claimed_at > staleMs;
        if (!abandoned) return { found: claimOf(found) };
        const taken = claimOf(found);
        const revision = await guarded(() => kv.update(key, JSON.stringify(stored(taken, Date.now())), entry.revision)).catch(nullOnLostRace);
        if (revision === null) throw new ClaimChanged();
        return hold(key, taken, revision);
      }, againWhileChanging);
    },
  };
}

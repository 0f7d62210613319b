// Delivers the outbox (store/webhooks.ts) to the endpoints, per the Standard Webhooks
// specification (docs/webhooks.md). Deliveries are jobs in the job loop (jobs/worker.ts): each
// actor claims its own workspaces' due deliveries a page at a time, the workspaces taking turns,
// at most WORKSPACE_PAGES pages of one workspace under way. So one workspace's slow endpoint
// holds at most its own PAGE × WORKSPACE_PAGES calls, and the other workspaces' pages go out in
// the remaining slots.
//
// A claim that is not completed (Herald killed mid-call) waits again and is sent again with the
// same webhook-id: delivery is at least once, and a receiver deduplicates by that id.
import type { Db } from '../store/db.js';
import type { Claimant } from '../store/leases.js';
import { JobWorker } from '../jobs/worker.js';
import { dropDeliveries, endpointTargets, pruneDeliveries, recordAttempts, WEBHOOK_DELIVERY_JOBS, type AttemptOutcome, type ClaimedDelivery, type EndpointTarget } from '../store/webhooks.js';
import { boundedRequest, OutboundFailure } from '../net/bounded-request.js';
import type { OutboundPolicy } from '../net/destinations.js';
import type { SecretBox } from '../util/sealing.js';
import { webhookHeaders } from '../domain/standard-webhooks.js';
import { DELIVERY_RETENTION_MS, WEBHOOK_TEST_EVENT } from '../domain/webhook-events.js';
import { logger } from '../logger.js';

/** How often due deliveries are looked for: an event waits at most about this long before its first attempt. */
const POLL_MS = 250;
/** Deliveries of one workspace claimed at once… */
const PAGE = 25;
/** …pages of one workspace under way at once… */
const WORKSPACE_PAGES = 4;
/** …and of all workspaces. */
const PAGES_IN_FLIGHT = 64;
/** How often finished deliveries past their retention are removed, at most PRUNE_PAGE at a time, PRUNE_PAGES pages a round. */
const PRUNE_MS = 10 * 60_000;
const PRUNE_PAGE = 5_000;
const PRUNE_PAGES = 10;
/** What is read of an endpoint's answer: its status is what counts. */
const MAX_ANSWER_BYTES = 64 * 1024;

const FAILURE_TEXT: Readonly<Record<OutboundFailure['kind'], string>> = {
  unreachable: 'unreachable: the connection failed',
  timed_out: 'timed out: no complete answer within the deadline',
  too_large: 'answer too large',
  refused: 'refused: the URL resolves to a private or loopback address (HERALD_ALLOWED_PRIVATE_HOSTS)',
};

export interface WebhookDelivery {
  /** The wait before each retry, in ms; after the last, the delivery is failed. */
  retryScheduleMs: readonly number[];
  disableAfterMs: number;
  timeoutMs: number;
  /** The destination rule (docs/isolation.md), applied at connect time. */
  outbound: OutboundPolicy;
  secrets: SecretBox;
}

export class WebhookDispatcher {
  private readonly worker: JobWorker<ClaimedDelivery>;
  private pruning: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly claimant: Claimant,
    private readonly settings: WebhookDelivery,
  ) {
    this.worker = new JobWorker(db, claimant, {
      table: WEBHOOK_DELIVERY_JOBS,
      page: PAGE,
      workspacePages: WORKSPACE_PAGES,
      pagesInFlight: PAGES_IN_FLIGHT,
      pollMs: POLL_MS,
      run: (_ws, deliveries) => this.deliverAll(deliveries),
    });
  }

  start(): void {
    this.worker.start();
    this.pruning = setInterval(() => void this.prune(), PRUNE_MS);
  }

  /** Removes the actor's finished deliveries past their retention, a bounded amount a round. */
  private async prune(): Promise<void> {
    try {
      for (let i = 0; i < PRUNE_PAGES; i++) if ((await pruneDeliveries(this.db, this.claimant.shard, DELIVERY_RETENTION_MS, PRUNE_PAGE)) < PRUNE_PAGE) break;
    } catch (err) {
      logger.warn('webhooks: removing old deliveries failed', { err });
    }
  }

  /** Deliveries were queued now (a test event, a resend). */
  nudge(): void {
    this.worker.nudge();
  }

  /** No claim after this; resolves when the calls under way have been recorded. */
  stop(): Promise<void> {
    clearInterval(this.pruning);
    return this.worker.stop();
  }

  private async deliverAll(deliveries: ClaimedDelivery[]): Promise<void> {
    const targets = await endpointTargets(this.db, this.settings.secrets, [...new Set(deliveries.map((d) => d.endpoint_id))]);
    // An endpoint disabled since its events were written gets no call (a test event still goes: it checks a fix before enabling).
    const live = deliveries.filter((d) => (targets.get(d.endpoint_id)?.enabled ?? false) || (targets.has(d.endpoint_id) && d.event_type === WEBHOOK_TEST_EVENT));
    const dropped = deliveries.filter((d) => !live.includes(d));
    await dropDeliveries(this.db, dropped.map((d) => d.id));
    const outcomes = await Promise.all(live.map((d) => this.attempt(d, targets.get(d.endpoint_id)!)));
    await recordAttempts(this.db, outcomes, this.settings.disableAfterMs);
  }

  private async attempt(delivery: ClaimedDelivery, target: EndpointTarget): Promise<AttemptOutcome> {
    // Sealed under another HERALD_SECRETS_KEY: an unsigned call would only be refused, so none is made.
    if (target.secrets.length === 0) return this.failed(delivery, null, 'the signing secret cannot be opened (HERALD_SECRETS_KEY changed): rotate it');
    const body = JSON.stringify(delivery.payload);
    const headers = { 'content-type': 'application/json', 'user-agent': 'Herald-Webhooks', ...webhookHeaders(target.secrets, `msg_${delivery.id}`, Math.floor(Date.now() / 1000), body) };
    let statusCode: number | null = null;
    let error: string;
    try {
      const answer = await boundedRequest(new URL(target.url), {
        method: 'POST',
        headers,
        body,
        outbound: this.settings.outbound,
        maxBytes: MAX_ANSWER_BYTES,
        deadlineMs: this.settings.timeoutMs,
      });
      statusCode = answer.status;
      if (statusCode >= 200 && statusCode < 300) return { delivery, statusCode, error: null, ok: true, nextAt: null };
      error = `HTTP ${statusCode}`;
    } catch (err) {
      if (!(err instanceof OutboundFailure)) throw err;
      if (err.kind !== 'timed_out' && err.kind !== 'unreachable') logger.debug('webhook delivery failed', { endpoint: target.id, err: err.cause });
      error = FAILURE_TEXT[err.kind];
    }
    // 410 Gone: the receiver says the endpoint is no more; no retry, and it is disabled.
    if (statusCode === 410) return { delivery, statusCode, error, ok: false, nextAt: null, disable: 'The endpoint answered 410 Gone' };
    return this.failed(delivery, statusCode, error);
  }

  /** A failed attempt: tried again after the schedule's next wait, or failed for good past its last. */
  private failed(delivery: ClaimedDelivery, statusCode: number | null, error: string): AttemptOutcome {
    const wait = this.settings.retryScheduleMs[delivery.attempts];
    return { delivery, statusCode, error, ok: false, nextAt: wait === undefined ? null : new Date(Date.now() + wait) };
  }
}

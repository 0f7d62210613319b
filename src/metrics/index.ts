// Herald's metrics (docs/operations.md), every one defined here. prom-client registries are per
// thread: the front and each actor count into their own `registry`, and a scrape at the front
// gathers the actors' as JSON over the actor protocol and adds them up (scrape.ts).
//
// Labels are bounded sets only: route TEMPLATES (`POST /track`, never a raw path), status
// codes, provider names, outcomes, scopes, thread names. Never a workspace, key, person or
// campaign id: one series per tenant would grow without bound.
//
// Off by default (HERALD_METRICS, HERALD_METRICS_PORT): until `enableMetrics`, every count
// below returns at its first line, and no monitor runs.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, Summary } from 'prom-client';

export const registry = new Registry();
let on = false;

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];

const requests = new Histogram({
  name: 'herald_http_request_duration_seconds',
  help: 'Requests answered by the front, by route template and status, from the request read to the answer written (_count: the requests).',
  labelNames: ['route', 'status'],
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

const logGroups = new Histogram({
  name: 'herald_log_group_appends',
  help: 'Appends written together by one write of the Log (group commit): the group size (_sum: the appends acknowledged).',
  buckets: SIZE_BUCKETS,
  registers: [registry],
});

const logEvents = new Counter({
  name: 'herald_log_events_total',
  help: 'Events appended to the Log and acknowledged.',
  registers: [registry],
});

const logFailures = new Counter({
  name: 'herald_log_append_failures_total',
  help: 'Appends the Log did not acknowledge: `unavailable` (an outage, answered 503) or `refused` (for what they carry, 400).',
  labelNames: ['reason'],
  registers: [registry],
});

const sinkEvents = new Counter({
  name: 'herald_sink_events_total',
  help: 'Events a JetStream sink applied (store or ClickHouse).',
  labelNames: ['sink'],
  registers: [registry],
});

const sinkLag = new Gauge({
  name: 'herald_sink_lag_seconds',
  help: "Age of the oldest message of the sink's latest batch when it was applied (0 once the sink found the Log empty).",
  labelNames: ['sink'],
  registers: [registry],
});

const sinkPending = new Gauge({
  name: 'herald_sink_pending_messages',
  help: "Messages on the Log the sink had not fetched yet, as of its latest batch.",
  labelNames: ['sink'],
  registers: [registry],
});

const deadLetters = new Counter({
  name: 'herald_dead_letters_total',
  help: 'Records a sink set aside in dead_letters (refused for what they carry).',
  labelNames: ['sink'],
  registers: [registry],
});

const providerRequests = new Histogram({
  name: 'herald_provider_request_duration_seconds',
  help: "Devices sent to a push provider, by provider and outcome, with the duration of the provider call that carried them (_count: the device sends; retries count again).",
  labelNames: ['provider', 'outcome'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

const messages = new Counter({
  name: 'herald_messages_total',
  help: 'Messages decided and recorded, by channel and status (sent, skipped, policy_suppressed, failed).',
  labelNames: ['channel', 'status'],
  registers: [registry],
});

const campaignSends = new Counter({
  name: 'herald_campaign_sends_total',
  help: "Campaign push nodes' messages, by status.",
  labelNames: ['status'],
  registers: [registry],
});

const enrolments = new Counter({
  name: 'herald_campaign_enrolments_total',
  help: 'People newly enrolled in campaigns (event, webhook and schedule triggers).',
  registers: [registry],
});

const refusals = new Counter({
  name: 'herald_rate_limit_refusals_total',
  help: 'Requests refused by a rate-limit bucket, by scope and gate (local: this replica; shared: across replicas in NATS KV).',
  labelNames: ['scope', 'gate'],
  registers: [registry],
});

/** How often Node samples the event loop (ms); a sample is the time between two, so this much is subtracted. */
const EVENT_LOOP_RESOLUTION_MS = 10;
const EVENT_LOOP_LAG = 'herald_eventloop_lag_seconds';

/**
 * The event-loop delay of one thread as a Prometheus summary, read from Node's native histogram
 * (no timer of ours) at each scrape, which starts it afresh: the quantiles are those of the
 * samples since the scrape before, `_sum` and `_count` add up every sample since start.
 */
class EventLoopLag extends Summary<'thread'> {
  private readonly delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  private count = 0;
  private total = 0;

  constructor(private readonly thread: string) {
    super({
      name: EVENT_LOOP_LAG,
      help: 'Event-loop delay of each thread (front, actor-<n>): quantiles 0.5, 0.99 and 1 (the maximum) since the previous scrape; _sum and _count since start.',
      labelNames: ['thread'],
      percentiles: [0.5, 0.99, 1],
      registers: [registry],
    });
    this.delay.enable();
  }

  override async get() {
    const d = this.delay;
    const seconds = (ns: number) => (d.count > 0 ? Math.max(0, ns / 1e6 - EVENT_LOOP_RESOLUTION_MS) / 1000 : 0);
    this.count += d.count;
    this.total += d.count * seconds(d.mean);
    const labels = { thread: this.thread };
    const values = [
      ...([[0.5, d.percentile(50)], [0.99, d.percentile(99)], [1, d.max]] as const).map(([quantile, ns]) => ({ labels: { ...labels, quantile }, value: seconds(ns) })),
      { metricName: `${EVENT_LOOP_LAG}_sum`, labels, value: this.total },
      { metricName: `${EVENT_LOOP_LAG}_count`, labels, value: this.count },
    ];
    d.reset();
    return { ...(await super.get()), values };
  }
}

/** Starts counting, in this thread; `threadName` (`front`, `actor-<n>`) is the `thread` label of this thread's figures. */
export function enableMetrics(threadName: string): void {
  if (on) return;
  on = true;
  new EventLoopLag(threadName);
}

/** A request answered: its route template (`none` when no route matched), status, and when it was read (performance.now()). */
export function countRequest(route: string, status: number, startedMs: number): void {
  if (on) requests.observe({ route, status }, (performance.now() - startedMs) / 1000);
}

/** One write of the Log, acknowledged: its appends (one per request), each with its events. */
export function countLogWrite(appends: readonly { group: { records: readonly unknown[] } }[]): void {
  if (!on) return;
  logGroups.observe(appends.length);
  let events = 0;
  for (const a of appends) events += a.group.records.length;
  logEvents.inc(events);
}

export function countLogFailures(reason: 'unavailable' | 'refused', appends: number): void {
  if (on) logFailures.inc({ reason }, appends);
}

/** A sink batch applied: `events` of it, its oldest message published at `oldestMs`, `pending` left on the Log. */
export function countSinkBatch(sink: string, events: number, oldestMs: number, pending: number): void {
  if (!on) return;
  sinkEvents.inc({ sink }, events);
  sinkLag.set({ sink }, Math.max(0, Date.now() - oldestMs) / 1000);
  sinkPending.set({ sink }, pending);
}

/** A sink found nothing to fetch: it has caught up. */
export function sinkCaughtUp(sink: string): void {
  if (!on) return;
  sinkLag.set({ sink }, 0);
  sinkPending.set({ sink }, 0);
}

export function countDeadLetters(sink: string, count: number): void {
  if (on) deadLetters.inc({ sink }, count);
}

/** Times one provider call and counts its devices by outcome; answers what `send` answers. */
export async function timedProviderCall<T extends { kind: string }>(provider: string, send: () => Promise<T[]>): Promise<T[]> {
  if (!on) return send();
  const started = performance.now();
  const outcomes = await send();
  const seconds = (performance.now() - started) / 1000;
  for (const o of outcomes) providerRequests.observe({ provider, outcome: o.kind }, seconds);
  return outcomes;
}

/** Messages recorded on `channel`, one per result; `campaign`: sent by a campaign's push node. */
export function countMessages(channel: string, results: readonly { status: string }[], campaign: boolean): void {
  if (!on) return;
  for (const r of results) {
    messages.inc({ channel, status: r.status });
    if (campaign) campaignSends.inc({ status: r.status });
  }
}

export function countEnrolments(count: number): void {
  if (on && count > 0) enrolments.inc(count);
}

export function countRefusal(scope: string, gate: string): void {
  if (on) refusals.inc({ scope, gate });
}

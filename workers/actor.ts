// An actor thread: owns the per-workspace state of the workspaces that hash to it and runs
// their requests (src/actors/pipeline.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { loadConfig } from '../src/config.js';
import { openPostgres } from '../src/store/pg.js';
import { parseRateLimits } from '../src/ratelimit/limits.js';
import { createPipeline } from '../src/actors/pipeline.js';
import { handlers } from '../src/handlers/index.js';
import { resumeMerges } from '../src/store/merges.js';
import { storeLog } from '../src/eventlog/event-log.js';
import { connectNats, jetStreamLog, streamNames } from '../src/eventlog/jetstream.js';
import { Buckets } from '../src/ratelimit/buckets.js';
import { SharedBuckets } from '../src/ratelimit/shared.js';
import { shardOf } from '../src/util/shard.js';
import { ProviderRegistry } from '../src/delivery/providers.js';
import type { ActorReply, ActorWorkerData, FromActor, ToActor } from '../src/actors/protocol.js';
import { Batcher } from '../src/util/batcher.js';
import { PushEngine } from '../src/delivery/engine.js';
import { RenderPool } from '../src/render/pool.js';
import { SendCounters } from '../src/delivery/counters.js';
import { Scheduler } from '../src/delivery/scheduler.js';
import { natsTriggerClaims, pgTriggerClaims } from '../src/campaigns/idempotency.js';
import { Executor } from '../src/campaigns/executor.js';
import { Schedules } from '../src/campaigns/schedules.js';
import { EventTriggers } from '../src/campaigns/event-triggers.js';
import { enableMetrics } from '../src/metrics/index.js';
import { ownMetrics } from '../src/metrics/scrape.js';

const { store, index, secretsKey } = workerData as ActorWorkerData;
const cfg = loadConfig();
if (cfg.metrics) enableMetrics(`actor-${index}`);
const db = openPostgres(store.url, store.poolSize);
const limits = parseRateLimits(cfg.rateLimits);
// With NATS: the Log is JetStream and the workspace budgets are also counted across replicas.
const nats = cfg.natsUrl ? await connectNats(cfg.natsUrl, `herald-actor-${index}`) : null;
const eventLog = nats ? jetStreamLog(nats, streamNames(cfg.natsPrefix), db) : storeLog(db);
const shared = nats ? await SharedBuckets.open(nats, cfg.natsPrefix, limits) : null;
const providers = new ProviderRegistry(db, {
  mode: cfg.pushProvider,
  secretsKey: Buffer.from(secretsKey, 'hex'),
  fcmEndpoint: cfg.fcmEndpoint,
  apnsEndpoint: cfg.apnsEndpoint,
  allowedPrivateHosts: cfg.allowedPrivateHosts,
});
// Template rendering leaves this thread: the pool is this actor's own (why: src/render/pool.ts).
const renders = new RenderPool({
  threads: cfg.renderThreads,
  budget: { recipientMs: cfg.renderBudgetMs, sendMs: cfg.renderSendBudgetMs },
  queuePerWorkspace: cfg.renderQueue,
});
const push = new PushEngine(db, providers, new SendCounters(db, 100_000), renders);
const owns = (ws: string) => shardOf(ws, cfg.actors) === index;
const scheduler = new Scheduler(db, push, owns);
scheduler.start();
// Campaign workflows and schedule runs of the workspaces this actor owns.
const executor = new Executor(db, push, owns);
executor.start();
const schedules = new Schedules(db, owns, cfg.scheduleAudienceCeiling, () => executor.nudge());
schedules.start();
// Idempotency-Key claims: shared by the replicas in NATS KV, else in the store. A claim in
// progress longer than the request timeout belongs to a request already answered 503.
const claims = nats ? await natsTriggerClaims(nats, cfg.natsPrefix, cfg.requestTimeoutMs) : pgTriggerClaims(db, cfg.requestTimeoutMs);
const triggers = { claims, audienceCeiling: cfg.triggerAudienceCeiling, enrolled: () => executor.nudge() };
// The index of event-triggered campaigns, loaded before the first request is taken.
const eventTriggers = new EventTriggers(db, owns, () => executor.nudge());
await eventTriggers.start();
// Without ClickHouse the store is the analytics store too (a deleted person's events are kept there).
const services = { db, events: eventLog, push, providers, triggers, eventTriggers, analyticsInStore: !cfg.clickhouseUrl };
const handle = createPipeline(services, new Buckets(limits, shared), handlers);
// Anonymous merges a restart interrupted, for the workspaces this actor owns.
void resumeMerges(db, owns);
const port = parentPort!;
const send = (m: FromActor) => port.postMessage(m);
// The replies of one turn (a group commit answers many requests at once) go in one message.
const replies = new Batcher<ActorReply>(async (batch) => send({ type: 'replies', replies: batch }), Infinity);

port.on('message', (m: ToActor) => {
  if (m.type === 'requests') {
    for (const req of m.reqs) void handle(req).then((reply) => replies.add({ id: req.id, reply }));
  } else if (m.type === 'metrics') {
    void ownMetrics().then((metrics) => send({ type: 'metrics', id: m.id, metrics }));
  } else {
    void Promise.all([scheduler.stop(), schedules.stop(), eventTriggers.stop(), executor.stop()])
      .then(() => Promise.all([providers.close(), renders.close()]))
      .then(() => eventLog.close())
      .then(() => shared?.close())
      .then(() => nats?.drain())
      .then(() => db.close())
      .finally(() => process.exit(0));
  }
});
send({ type: 'ready' });

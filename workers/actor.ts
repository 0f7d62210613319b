// An actor thread: owns the per-workspace state of the workspaces that hash to it and runs
// their requests (src/actors/pipeline.ts). Importing it starts nothing but `main`.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { loadConfig, type Config } from '../src/config.js';
import { backends } from '../src/backends.js';
import { openPostgres } from '../src/store/pg.js';
import { parseRateLimits } from '../src/ratelimit/limits.js';
import { createPipeline } from '../src/actors/pipeline.js';
import { handlers } from '../src/handlers/index.js';
import { resumeMerges } from '../src/store/merges.js';
import { memberRole } from '../src/store/workspaces.js';
import { Buckets } from '../src/ratelimit/buckets.js';
import { shardOf } from '../src/util/shard.js';
import { ProviderRegistry } from '../src/channels/push/registry.js';
import type { ActorReply, ActorRequest, ActorWorkerData, FromActor, ToActor } from '../src/actors/protocol.js';
import type { Reply } from '../src/handlers/reply.js';
import { Batcher } from '../src/util/batcher.js';
import { PushEngine } from '../src/channels/push/engine.js';
import { RenderPool } from '../src/render/pool.js';
import { SendCounters } from '../src/channels/counters.js';
import { ScheduledSends } from '../src/channels/push/scheduled-sends.js';
import { EventTriggers, Executor, Goals, ScheduleRuns } from '../src/campaigns/index.js';
import { Instance } from '../src/store/leases.js';
import { enableMetrics } from '../src/metrics/index.js';
import { ownMetrics } from '../src/metrics/scrape.js';
import { messagingSettings } from '../src/channels/settings.js';
import { ChannelPools } from '../src/channels/pools.js';
import { PUSH_ENGINE } from '../src/channels/push/channel.js';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.js';
import { OutboundPolicy } from '../src/net/destinations.js';
import { ListImports } from '../src/audiences/list-imports.js';
import { Segments } from '../src/audiences/segments.js';
import { newId } from '../src/ids.js';
import { clickHouseReader } from '../src/analytics/clickhouse-reader.js';
import { storeAnalytics } from '../src/store/analytics.js';
import { hostname } from 'node:os';

interface Actor {
  handle(req: ActorRequest): Promise<Reply>;
  /** Stops the runners, then closes what the actor opened. */
  stop(): Promise<void>;
}

/** Assembles actor `index`: its pool, its backends (src/backends.ts), the push engine and the campaign runners. */
async function startActor(cfg: Config, { store, index, secretsKey, publicUrl }: ActorWorkerData): Promise<Actor> {
  if (cfg.metrics) enableMetrics(`actor-${index}`);
  const db = openPostgres(store.url, store.poolSize);
  const limits = parseRateLimits(cfg.rateLimits);
  const parts = await backends(cfg, `herald-actor-${index}`);
  const eventLog = parts.log(db);
  const shared = await parts.sharedBuckets(limits);
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
  const messaging = messagingSettings({ ...cfg, publicUrl }, providers.secrets, Buffer.from(secretsKey, 'hex'));
  const push = new PushEngine(db, providers, new SendCounters(db, 100_000), renders, {}, messaging);
  const shard = { index, count: cfg.actors };
  const owns = (ws: string) => shardOf(ws, shard.count) === shard.index;
  // Which workspaces this actor's claims are of, and whom they name: its lock lets other
  // processes know at once when it is gone.
  const claimant = { shard, instance: await Instance.hold(store.url) };
  const scheduledSends = new ScheduledSends(db, push, claimant);
  scheduledSends.start();
  // Campaign workflows and schedule runs of the workspaces this actor owns.
  const pools = new ChannelPools(messaging).provide(PUSH_ENGINE, push);
  const executor = new Executor(db, claimant, { db, settings: messaging, pools, renders }, cfg.timeScale);
  executor.start();
  const scheduleRuns = new ScheduleRuns(db, claimant, cfg.scheduleAudienceCeiling, cfg.dynamicScanMs, () => executor.nudge());
  scheduleRuns.start();
  // Outbound webhooks of the workspaces this actor owns (docs/webhooks.md).
  const webhookOutbound = new OutboundPolicy(cfg.allowedPrivateHosts);
  const dispatcher = new WebhookDispatcher(db, claimant, {
    retryScheduleMs: cfg.webhookRetryScheduleMs,
    disableAfterMs: cfg.webhookDisableAfterMs,
    timeoutMs: cfg.webhookTimeoutMs,
    outbound: webhookOutbound,
    secrets: messaging.secrets,
  });
  dispatcher.start();
  const webhooks = { outbound: webhookOutbound, nudge: () => dispatcher.nudge() };
  // A claim in progress longer than the request timeout belongs to a request already answered 503.
  const claims = await parts.triggerClaims(db, cfg.requestTimeoutMs);
  const triggers = { claims, audienceCeiling: cfg.triggerAudienceCeiling, enrolled: () => executor.nudge() };
  // The index of event-triggered campaigns, loaded before the first request is taken.
  const eventTriggers = new EventTriggers(db, owns, () => executor.nudge(), cfg.timeScale);
  await eventTriggers.start();
  // The index of campaign goals (docs/campaigns-runtime.md, Goals and conversions).
  const goals = new Goals(db, owns);
  await goals.start();
  // Segments kept live: entering or leaving one is an event, which may trigger campaigns.
  const segments = new Segments(db, claimant, owns, async (ws, changes) => {
    const at = new Date().toISOString();
    const appended = await eventLog.appendEvents(
      changes.map((c) => ({ id: newId(), workspace_id: ws, external_id: c.external_id, type: c.entered ? 'segment_entered' : 'segment_exited', parameters: { segment_id: c.segment_id }, created_at: at })),
    );
    await eventTriggers.fire(ws, appended.map((a) => a.record));
  });
  segments.start();
  // CSV imports staged on this machine's data dir (src/http/upload.ts), whichever actor claims them.
  const stagedOn = `${hostname()}:${cfg.dataDir}`;
  const listImports = new ListImports(db, claimant, stagedOn, cfg.importMaxRows, (ws, people) => segments.touched(ws, people));
  listImports.start();
  const imports = { stagedOn, nudge: () => listImports.nudge() };
  // Without ClickHouse the store is the analytics store too (a deleted person's events are kept there).
  const analytics = cfg.clickhouseUrl ? clickHouseReader(cfg.clickhouseUrl) : storeAnalytics(db);
  const services = { db, events: eventLog, push, providers, messaging, renders, pools, triggers, eventTriggers, goals, webhooks, imports, segments, analyticsInStore: !cfg.clickhouseUrl, analytics };
  const handle = createPipeline(services, new Buckets(limits, shared), handlers, (workspaceId, user) => memberRole(db, workspaceId, user));
  // Anonymous merges a restart interrupted, for the workspaces this actor owns.
  void resumeMerges(db, owns);
  return {
    handle,
    async stop() {
      await Promise.all([scheduledSends.stop(), scheduleRuns.stop(), eventTriggers.stop(), goals.stop(), executor.stop(), dispatcher.stop(), listImports.stop(), segments.stop()]);
      await claimant.instance.close();
      await Promise.all([providers.close(), renders.close(), analytics.close()]);
      pools.close();
      await eventLog.close();
      await shared?.close();
      await parts.close();
      await db.close();
    },
  };
}

/** Answers the front's messages on `port` until it says stop. */
function serve(port: MessagePort, actor: Actor): void {
  const send = (m: FromActor) => port.postMessage(m);
  // The replies of one turn (a group commit answers many requests at once) go in one message.
  const replies = new Batcher<ActorReply>(async (batch) => send({ type: 'replies', replies: batch }), Infinity);
  port.on('message', (m: ToActor) => {
    if (m.type === 'requests') {
      for (const req of m.reqs) void actor.handle(req).then((reply) => replies.add({ id: req.id, reply }));
    } else if (m.type === 'metrics') {
      void ownMetrics().then((metrics) => send({ type: 'metrics', id: m.id, metrics }));
    } else {
      void actor.stop().finally(() => process.exit(0));
    }
  });
  send({ type: 'ready' });
}

async function main(): Promise<void> {
  serve(parentPort!, await startActor(loadConfig(), workerData as ActorWorkerData));
}

await main();

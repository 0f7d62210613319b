// `npm run bench -- --scenario <track|track-batch|v1-batch|identify|mixed|devices|reads|floor|push-send|push-batch|fanout|email-fanout|sms-fanout|callbacks|store-floor|isolation|segment|scale|webhooks|audiences|funnel|tracking> [options]`:
// measures Herald and, in the same run, the floor (a bare uWS endpoint; for push-batch a bare
// node:http2 client against the fake FCM), with the same load generator, connections and
// duration; prints a table and writes JSON. See bench/README.md.
import { parseArgs } from 'node:util';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { defaultSeedEvents, PUSH_BATCH_SIZE, PUSH_SCENARIOS, SCENARIOS, type BenchWorkspace, type Kind, type Scenario } from './scenarios.js';
import type { LoadConfig, LoadResult } from './load.js';
import type { FakeProvidersStats } from './fake-providers.js';
import type { PushFloorResult } from './push-floor.js';
import { setupPushChannels, setupPushPeople } from './push.js';
import { call, databaseUrl, FakeProviders, killAllNow, LoadGenerator, pushFloorConfig, runPushFloor, Sampler, sessionToken, pushFakesEnv, settle, setupWorkspaces, startBenchHerald, startFloor, stopChild, type HeraldProc } from './procs.js';
import { EVENT_CAMPAIGNS, setupEventCampaigns, type EventCampaign } from './event-campaign.js';
import { round } from './stats.js';
import { formatSummary, scrapeMetrics, summarize } from './metrics.js';
import { seedEvents, type SeedResult } from './seed-events.js';
import { optionChecks } from './cli.js';
import { fanout, FANOUT_USAGE } from './fanout.js';
import { storeFloor, STORE_FLOOR_USAGE } from './store-floor.js';
import { isolation, ISOLATION_USAGE } from './isolation.js';
import { scale, SCALE_USAGE } from './scale.js';
import { callbacks, CALLBACKS_USAGE } from './callbacks.js';
import { tracking, TRACKING_USAGE } from './tracking.js';
import { segment, SEGMENT_USAGE } from './segment.js';
import { webhooks, WEBHOOKS_USAGE } from './webhooks.js';
import { audiences, AUDIENCES_USAGE, setupSegments } from './audiences.js';
import { funnel, FUNNEL_USAGE } from './funnel.js';
import { removePrefix, runPrefix } from './nats-prefix.js';
import { shardOf } from '../src/util/shard.js';
import { createClient } from '@clickhouse/client';

const USAGE = `usage: npm run bench -- --scenario <${SCENARIOS.join('|')}|fanout|email-fanout|sms-fanout|callbacks|store-floor|isolation|segment|scale|webhooks|audiences|funnel|tracking> [options]

  --duration 10s      measured load per target (ms, s or m)
  --warmup 2s         load before measuring, per target (not counted; 0 to skip)
  --connections 64    concurrent connections of the load generator (push-batch: 4)
  --workspaces 8      workspaces set up, one API key each; requests pick one at random
                      (push scenarios: 4)
  --people 100000     distinct people per workspace (external ids p-0 … p-<n-1>; push
                      scenarios: 1000, each with an android and an ios device)
  --seed-events N     before the load, not timed: N events stored straight into Herald's
                      PostgreSQL over the workspaces' --people people each (created too) and
                      the bench event names, created_at over the last 30 days (reads:
                      10000000, the others: 0; not for floor and push; with --target it needs
                      DATABASE_URL, the target's database)
  --push-provider P   push scenarios: fakes (fake FCM and APNs in a process of their own,
                      the default) or sandbox (Herald's sandbox provider; push-batch then
                      has no floor)
  --push-streams 100  push floor: concurrent streams per HTTP/2 session (Herald's pool's limit)
  --rate N            open loop: send N requests/s evenly (1 ms timer), latency counted
                      from each send (default: closed loop, as fast as answered)
  --target URL        bench a running Herald on 127.0.0.1 instead of starting one
                      (needs HERALD_AUTH_SECRET or --secret to set up workspaces)
  --secret S          session-token secret of the --target Herald
  --cpu-prof DIR      write V8 CPU profiles of Herald's threads (front and actors) into DIR
                      when it stops (node --cpu-prof; profiling slows Herald down)
  --event-campaign K  none (default), or one active event campaign per workspace before the
                      load: match (listens to every event sent: each enrols its person),
                      first (the same with first_occurrence), other (listens to a name
                      never sent)
  --segments N        N live segments per workspace before the load (0, the default): each
                      tracked event evaluates its person for all of them (issue 38: CPU per
                      request with 20 against a run without)
  --message-ids       every track, track-batch entry and identify carries a messageId, fresh on
                      every send (issue 36: CPU per request against a run without); v1-batch
                      messages always carry one, as Segment's clients send them
  --lag-timeout 300s  how long to wait for the sink-lag sentinel to become readable
  --out bench/results where the JSON result goes

${FANOUT_USAGE}

${STORE_FLOOR_USAGE}

${ISOLATION_USAGE}

${CALLBACKS_USAGE}

${SEGMENT_USAGE}

${SCALE_USAGE}

${WEBHOOKS_USAGE}

${AUDIENCES_USAGE}

${FUNNEL_USAGE}

${TRACKING_USAGE}`;

interface Options {
  scenario: Scenario;
  pushProvider: 'fakes' | 'sandbox';
  pushStreams: number;
  durationMs: number;
  warmupMs: number;
  connections: number;
  workspaces: number;
  people: number;
  seedEvents: number;
  rate?: number;
  target?: string;
  secret?: string;
  cpuProf?: string;
  eventCampaign: EventCampaign;
  segments: number;
  messageIds: boolean;
  lagTimeoutMs: number;
  out: string;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string' },
      duration: { type: 'string', default: '10s' },
      warmup: { type: 'string', default: '2s' },
      connections: { type: 'string' },
      workspaces: { type: 'string' },
      people: { type: 'string' },
      'seed-events': { type: 'string' },
      'push-provider': { type: 'string', default: 'fakes' },
      'push-streams': { type: 'string', default: '100' },
      rate: { type: 'string' },
      target: { type: 'string' },
      secret: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'lag-timeout': { type: 'string', default: '300s' },
      'event-campaign': { type: 'string', default: 'none' },
      segments: { type: 'string', default: '0' },
      'message-ids': { type: 'boolean', default: false },
      out: { type: 'string', default: 'bench/results' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    process.exit(0);
  }
  const { fail, int, dur } = optionChecks(USAGE);
  if (!values.scenario || !(SCENARIOS as readonly string[]).includes(values.scenario)) fail(`--scenario must be one of ${SCENARIOS.join(', ')}`);
  const scenario = values.scenario as Scenario;
  const push = PUSH_SCENARIOS.includes(scenario);
  const pushProvider = values['push-provider'];
  if (pushProvider !== 'fakes' && pushProvider !== 'sandbox') fail('--push-provider must be fakes or sandbox');
  // The push scenarios point Herald at the fakes, which only a Herald this run starts can be.
  if (push && values.target) fail('the push scenarios start their own Herald: --target cannot be used');
  if (values['cpu-prof'] !== undefined && values.target) fail('--cpu-prof profiles the Herald this run starts: it cannot be used with --target');
  const eventCampaign = values['event-campaign'] as EventCampaign;
  if (!EVENT_CAMPAIGNS.includes(eventCampaign)) fail(`--event-campaign must be one of ${EVENT_CAMPAIGNS.join(', ')}`);
  if (eventCampaign !== 'none' && (push || scenario === 'floor' || scenario === 'devices' || scenario === 'reads')) fail('--event-campaign is for the scenarios that track events');
  const segments = int('segments', values.segments, 0, 100);
  if (segments > 0 && (push || scenario === 'floor' || scenario === 'devices' || scenario === 'reads')) fail('--segments is for the scenarios that track events');
  const seedEvents = int('seed-events', values['seed-events'] ?? String(defaultSeedEvents(scenario)), 0, 1_000_000_000);
  if (seedEvents > 0 && (push || scenario === 'floor')) fail('--seed-events is not for the floor and push scenarios');
  // Seeding writes into Herald's database: a --target's is known only as DATABASE_URL.
  if (seedEvents > 0 && values.target && !process.env.DATABASE_URL) fail("--seed-events with --target needs DATABASE_URL (the target's database)");
  if (values.target) {
    let u: URL | undefined;
    try {
      u = new URL(values.target);
    } catch {
      fail(`--target is not a URL: ${values.target}`);
    }
    // Only this machine: the bench never points load at anything else.
    if (u!.protocol !== 'http:' || !['127.0.0.1', 'localhost'].includes(u!.hostname)) fail('--target must be http://127.0.0.1:<port> (or localhost)');
  }
  return {
    scenario,
    pushProvider: pushProvider as Options['pushProvider'],
    pushStreams: int('push-streams', values['push-streams'], 1, 10_000),
    durationMs: dur('duration', values.duration, 1000, 3_600_000),
    warmupMs: values.warmup === '0' ? 0 : dur('warmup', values.warmup, 0, 600_000),
    connections: int('connections', values.connections ?? (scenario === 'push-batch' ? '4' : '64'), 1, 10_000),
    workspaces: int('workspaces', values.workspaces ?? (push ? '4' : '8'), 1, 1000),
    // Push scenarios set up every person (and two devices each) before the load.
    people: int('people', values.people ?? (push ? '1000' : '100000'), 1, push ? 100_000 : 100_000_000),
    seedEvents,
    rate: values.rate === undefined ? undefined : int('rate', values.rate, 1, 10_000_000),
    target: values.target?.replace(/\/+$/, '').replace('localhost', '127.0.0.1'),
    secret: values.secret,
    cpuProf: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    eventCampaign,
    segments,
    // v1-batch's messages always carry one, so its track-batch comparison's do too.
    messageIds: values['message-ids'] === true || scenario === 'v1-batch',
    lagTimeoutMs: dur('lag-timeout', values['lag-timeout'], 1000, 3_600_000),
    out: values.out,
  };
}

/** The commit measured, and whether the server's sources differ from it. */
function revision(): { commit: string | null; server_sources_modified: boolean | null } {
  const git = (args: string[]) => execFileSync('git', args, { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  try {
    return { commit: git(['rev-parse', 'HEAD']), server_sources_modified: git(['status', '--porcelain', '--', 'src', 'workers', 'schemas']) !== '' };
  } catch {
    return { commit: null, server_sources_modified: null };
  }
}

/** How many of the workspaces each actor owns (Herald's sharding, src/actors/host.ts). */
function perActor(workspaces: BenchWorkspace[], actors: number): number[] {
  const n = new Array<number>(actors).fill(0);
  for (const w of workspaces) n[shardOf(w.id, actors)]!++;
  return n;
}

/** Keys shaped like Herald's, for the floor scenario (no Herald involved). */
function fakeWorkspaces(n: number): BenchWorkspace[] {
  return Array.from({ length: n }, () => ({
    id: '00000000-0000-4000-8000-' + randomBytes(6).toString('hex'),
    key: `ws_live_${randomBytes(4).toString('hex')}_${randomBytes(6).toString('base64url').slice(0, 8).replace(/[-_]/g, 'x')}.${randomBytes(32).toString('hex')}`,
  }));
}

interface ReadCheck {
  path: string;
  status: number;
  events: number | null;
}

/** One read of each kind after seeding: that Herald serves the seeded events. */
async function readCheck(base: string, ws: BenchWorkspace): Promise<ReadCheck[]> {
  const out: ReadCheck[] = [];
  for (const path of ['/api/v1/people/p-0/events?limit=50', '/api/v1/events/search?event=bench_purchase&limit=50']) {
    const r = await call(base, 'GET', path, ws.key);
    out.push({ path, status: r.status, events: Array.isArray(r.body?.events) ? (r.body.events as unknown[]).length : null });
  }
  return out;
}

interface Drained {
  /** From the end of the load to the sentinel being there. */
  after_load_ms: number | null;
  /** From the sentinel's 201 to it being there. */
  after_ack_ms: number | null;
  polls: number;
  timed_out: boolean;
}

interface SinkLag extends Drained {
  event: string;
  /** The ClickHouse sink's lag, when Herald writes to ClickHouse (CLICKHOUSE_URL). */
  clickhouse: Drained | null;
}

/** Polls `there` until it answers true or `until`; times from `loadEnd` and `acked`. */
async function pollUntil(there: () => Promise<boolean>, loadEnd: number, acked: number, until: number): Promise<Drained> {
  let polls = 0;
  while (Date.now() < until) {
    polls++;
    if (await there().catch(() => false)) {
      const now = Date.now();
      return { after_load_ms: now - loadEnd, after_ack_ms: now - acked, polls, timed_out: false };
    }
    await new Promise((r) => setTimeout(r, polls < 100 ? 20 : 250));
  }
  return { after_load_ms: null, after_ack_ms: null, polls, timed_out: true };
}

/**
 * Bounds the sinks' lag: after the load, track one event with a unique name and time how
 * long until GET /people/{id}/events shows it (the store) and, with `clickhouseUrl`, until
 * ClickHouse's analytics_events holds it. Each sink takes the log in order, so by then
 * everything acknowledged before it is there too.
 */
async function sinkLag(base: string, ws: BenchWorkspace, loadEnd: number, timeoutMs: number, clickhouseUrl: string | undefined): Promise<SinkLag> {
  const event = `bench_sentinel_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const who = 'bench-sentinel';
  const tracked = await call(base, 'POST', '/api/v1/track', ws.key, { event, external_id: who, parameters: { sentinel: true } });
  if (tracked.status !== 201) throw new Error(`tracking the sentinel answered ${tracked.status}: ${JSON.stringify(tracked.body).slice(0, 300)}`);
  const acked = Date.now();
  const until = acked + timeoutMs;
  const inStore = async () => {
    const r = await call(base, 'GET', `/api/v1/people/${who}/events?limit=5`, ws.key);
    return r.status === 200 && Array.isArray(r.body?.events) && r.body.events.some((e: { type?: string }) => e.type === event);
  };
  const ch = clickhouseUrl ? createClient({ url: clickhouseUrl, request_timeout: 5_000 }) : null;
  // The event name is ours (letters, digits, '_'), so it can be spliced into the query.
  const inClickHouse = async () => {
    const rs = await ch!.query({ query: `SELECT count() AS n FROM analytics_events WHERE workspace_id = '${ws.id}' AND type = '${event}'`, format: 'JSONEachRow' });
    return Number((await rs.json<{ n: string }>())[0]?.n ?? 0) > 0;
  };
  try {
    const [store, clickhouse] = await Promise.all([pollUntil(inStore, loadEnd, acked, until), ch ? pollUntil(inClickHouse, loadEnd, acked, until) : null]);
    return { event, ...store, clickhouse };
  } finally {
    await ch?.close();
  }
}

const fmt = (n: number | null | undefined, digits = 0) => (n === null || n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

interface Row {
  name: string;
  load: LoadResult;
  rss?: { start: number | null; max: number | null; end: number | null };
  ratio?: number;
}

function table(rows: Row[]): string {
  const head = ['target', 'req/s', 'events/s', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'RSS start/max/end MB', 'vs floor'];
  const body = rows.map((r) => [
    r.name,
    // Batches of 1,000 recipients come at a few per second.
    fmt(r.load.requests_per_s, r.load.requests_per_s < 10 ? 2 : 0),
    fmt(r.load.events_per_s),
    fmt(r.load.latency.p50_ms, 2),
    fmt(r.load.latency.p99_ms, 2),
    fmt(r.load.latency.max_ms, 1),
    fmt(r.load.non2xx),
    fmt(r.load.errors + r.load.timeouts),
    r.rss ? `${fmt(r.rss.start)}/${fmt(r.rss.max)}/${fmt(r.rss.end)}` : '-',
    r.ratio === undefined ? '-' : fmt(r.ratio, 3),
  ]);
  return render(head, body);
}

/** Per kind of request (scenarios sending several): requests/s, latency, and what reads returned. */
function kindTable(r: Row): string {
  const head = [`${r.name} by kind`, 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'non-2xx', 'events returned/read', 'empty reads'];
  const body = Object.entries(r.load.by_kind).map(([kind, k]) => {
    const l = r.load.latency_by_kind[kind as Kind];
    const ok = k.requests - k.non2xx;
    return [
      kind,
      fmt(k.requests / Math.max(0.001, r.load.duration_s)),
      fmt(l?.p50_ms, 2),
      fmt(l?.p90_ms, 2),
      fmt(l?.p99_ms, 2),
      fmt(l?.max_ms, 1),
      fmt(k.non2xx),
      k.returned === undefined ? '-' : fmt(k.returned / Math.max(1, ok), 1),
      k.empty === undefined ? '-' : fmt(k.empty),
    ];
  });
  return render(head, body);
}

/** A text table: the first column left-aligned, the others right-aligned. */
function render(head: string[], body: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

interface ProviderFigures {
  window_s: number;
  fcm_requests: number;
  apns_requests: number;
  fcm_per_s: number;
  apns_per_s: number;
  provider_requests_per_s: number;
  /** Sessions Herald opened to each fake over the run, and the most streams open at once on one FCM session. */
  fcm_sessions: number;
  apns_sessions: number;
  fcm_max_concurrent_streams: number;
  /** CPU of the fake providers' process during the window. */
  fakes_cores: number;
  ratio: { provider_requests_per_s: number; fcm_requests_per_s: number } | null;
}

/** Herald's provider requests over its measured phase (what the fakes received), and their ratio to the push floor. */
function providerFigures(start: FakeProvidersStats & { t: number }, end: FakeProvidersStats & { t: number }, floor: PushFloorResult | undefined): ProviderFigures {
  const s = Math.max(0.001, (end.t - start.t) / 1000);
  const fcm = end.fcm.requests - start.fcm.requests;
  const apns = end.apns.requests - start.apns.requests;
  const total = (fcm + apns) / s;
  return {
    window_s: round(s, 3),
    fcm_requests: fcm,
    apns_requests: apns,
    fcm_per_s: round(fcm / s),
    apns_per_s: round(apns / s),
    provider_requests_per_s: round(total),
    fcm_sessions: end.fcm.sessions,
    apns_sessions: end.apns.sessions,
    fcm_max_concurrent_streams: end.fcm.max_concurrent_streams,
    fakes_cores: round((end.cpu_s - start.cpu_s) / s, 2),
    ratio: floor ? { provider_requests_per_s: round(total / Math.max(1, floor.requests_per_s), 3), fcm_requests_per_s: round(fcm / s / Math.max(1, floor.requests_per_s), 3) } : null,
  };
}

function providerTable(p: ProviderFigures, floor: PushFloorResult & { fakes_cores: number } | undefined): string {
  const head = ['provider requests', 'FCM/s', 'APNs/s', 'total/s', 'p50 ms', 'p99 ms', 'sessions FCM/APNs', 'fakes cores', 'vs push floor'];
  const body = [['herald', fmt(p.fcm_per_s), fmt(p.apns_per_s), fmt(p.provider_requests_per_s), '-', '-', `${p.fcm_sessions}/${p.apns_sessions}`, fmt(p.fakes_cores, 2), p.ratio ? fmt(p.ratio.provider_requests_per_s, 3) : '-']];
  if (floor) {
    body.push([`push floor (${floor.streams_per_session} streams/session)`, fmt(floor.requests_per_s), '-', fmt(floor.requests_per_s), fmt(floor.latency.p50_ms, 2), fmt(floor.latency.p99_ms, 2), `${floor.sessions}/-`, fmt(floor.fakes_cores, 2), '-']);
  }
  return render(head, body);
}

async function main(): Promise<number> {
  const opt = options(process.argv.slice(2));
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  const loadScenario: Scenario = opt.scenario;
  const production = { postgres: !!process.env.DATABASE_URL, nats: !!process.env.NATS_URL, clickhouse: !!process.env.CLICKHOUSE_URL };

  const push = PUSH_SCENARIOS.includes(opt.scenario);
  let herald: HeraldProc | undefined;
  let dataDir: string | undefined;
  let fakes: FakeProviders | undefined;
  /** Holds the fakes' CA file (NODE_EXTRA_CA_CERTS of Herald and the push floor). */
  let caDir: string | undefined;
  let base = opt.target;
  let secret = opt.secret ?? process.env.HERALD_AUTH_SECRET;
  let cleanedUp = false;
  let stoppingHerald = false;
  /** The run's own JetStream prefix, when it starts Herald on NATS and none was given. */
  const natsPrefix = production.nats && !opt.target && !process.env.HERALD_NATS_PREFIX ? runPrefix() : undefined;
  const cleanup = async () => {
    if (cleanedUp) return;
    cleanedUp = true;
    if (herald) await stopChild(herald.child, 30_000).catch(() => {});
    killAllNow();
    if (natsPrefix) {
      await removePrefix(process.env.NATS_URL!, natsPrefix).then(
        (removed) => log(`removed the run's JetStream streams: ${removed.join(', ') || 'none'}`),
        (err: Error) => log(`could not remove the JetStream streams of prefix ${natsPrefix}: ${err.message}`),
      );
    }
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (caDir) rmSync(caDir, { recursive: true, force: true });
  };
  const onSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: stopping what this run started`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  // The whole run is bounded: two load phases, the lag probe (or the push floor), start-up,
  // setup (seeding: up to 0.2 ms an event) and shutdown.
  const budgetMs = 2 * (opt.warmupMs + opt.durationMs) + opt.lagTimeoutMs + 600_000 + opt.seedEvents * 0.2;
  const watchdog = setTimeout(() => {
    log(`run exceeded its budget of ${Math.round(budgetMs / 1000)} s; stopping`);
    void cleanup().finally(() => process.exit(124));
  }, budgetMs);

  try {
    let workspaces: BenchWorkspace[];
    let healthz: unknown;
    let seed: (SeedResult & { check: ReadCheck[] }) | undefined;
    /** Herald's actor threads, as its /healthz says. */
    let actors: number | undefined;
    /** What Herald and the push floor need to reach and trust the fakes. */
    let pushEnv: NodeJS.ProcessEnv = {};
    if (push && opt.pushProvider === 'fakes') {
      fakes = await FakeProviders.start();
      caDir = mkdtempSync(join(tmpdir(), 'herald-bench-ca-'));
      pushEnv = pushFakesEnv(fakes.ready, caDir);
      log(`fake providers are up (FCM ${fakes.ready.fcm.url}, APNs ${fakes.ready.apns.url}, pid ${fakes.child.pid})`);
    } else if (push) {
      pushEnv = { HERALD_PUSH_PROVIDER: 'sandbox' };
    }
    if (opt.scenario === 'floor') {
      workspaces = fakeWorkspaces(opt.workspaces);
    } else {
      if (!base) {
        dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
        secret ??= randomBytes(24).toString('hex');
        log(`starting Herald (${production.postgres ? 'Postgres' : 'embedded PostgreSQL'}${production.nats ? `, NATS (prefix ${natsPrefix ?? process.env.HERALD_NATS_PREFIX ?? 'herald'})` : ''}${production.clickhouse ? ', ClickHouse' : ''}) in ${dataDir}`);
        herald = await startBenchHerald(dataDir, secret, { ...(natsPrefix ? { HERALD_NATS_PREFIX: natsPrefix } : {}), ...pushEnv }, opt.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', opt.cpuProf] : []);
        base = herald.base;
        herald.child.once('exit', (code, sig) => {
          if (!cleanedUp && !stoppingHerald) log(`Herald exited unexpectedly (${code ?? sig})\n${herald!.output()}`);
        });
        log(`Herald is up at ${base} (pid ${herald.pid})`);
      }
      if (!secret) throw new Error('--target needs the session secret of that Herald: set HERALD_AUTH_SECRET or pass --secret');
      healthz = (await call(base, 'GET', '/healthz', '')).body;
      actors = (healthz as { components?: { actors?: unknown } }).components?.actors as number | undefined;
      // The push scenarios use few workspaces: spread them evenly over the actors.
      workspaces = await setupWorkspaces(base, secret, opt.workspaces, push ? actors : undefined);
      log(`set up ${workspaces.length} workspaces with one API key each${actors ? ` (per actor: ${perActor(workspaces, actors).join(', ')})` : ''}`);
      if (opt.eventCampaign !== 'none') {
        await setupEventCampaigns(base, await sessionToken(secret, 'herald-bench'), workspaces, opt.eventCampaign);
        log(`set up an active event campaign (${opt.eventCampaign}) in each workspace`);
      }
      if (opt.segments > 0) {
        await setupSegments(base, await sessionToken(secret, 'herald-bench'), workspaces, opt.segments);
        log(`set up ${opt.segments} live segments in each workspace`);
      }
      if (push) {
        const t = Date.now();
        if (fakes) await setupPushChannels(base, secret, workspaces, fakes.ready);
        await setupPushPeople(base, workspaces, opt.people);
        log(`set up ${opt.people} people with an android and an ios device in each workspace${fakes ? ', and the fakes as their providers' : ''} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
      }
      if (opt.seedEvents > 0) {
        log(`seeding ${fmt(opt.seedEvents)} events over ${workspaces.length} workspaces × ${fmt(opt.people)} people straight into ${production.postgres ? 'DATABASE_URL' : 'the embedded PostgreSQL'} (not timed)`);
        const seeded = await seedEvents(databaseUrl(dataDir ?? ''), workspaces.map((w) => w.id), opt.people, opt.seedEvents, log);
        seed = { ...seeded, check: await readCheck(base, workspaces[0]!) };
        log(`seeded in ${seeded.seconds.total} s; Herald reads back: ${seed.check.map((c) => `${c.path} → ${c.status}, ${c.events ?? '-'} events`).join('; ')}`);
      }
    }

    const loadConfig = (url: string, scenario: Scenario = loadScenario): LoadConfig => ({
      url,
      scenario,
      messageIds: opt.messageIds,
      workspaces,
      people: opt.people,
      connections: opt.connections,
      durationMs: opt.durationMs,
      rate: opt.rate,
    });

    /** Warm-up (not counted), wait until the target has worked off what it abandoned, measure. */
    const measure = async (name: string, url: string, onStart?: () => Promise<void>, scenario?: Scenario) => {
      const gen = new LoadGenerator();
      try {
        let settled: { ms: number; settled: boolean } | null = null;
        if (opt.warmupMs > 0) {
          log(`${name}: warming up for ${opt.warmupMs / 1000} s`);
          await gen.run({ ...loadConfig(url, scenario), durationMs: opt.warmupMs });
          settled = await settle(url, 100, 120_000);
          log(`${name}: ${settled.settled ? 'settled' : 'still busy'} ${settled.ms} ms after the warm-up`);
        }
        log(`${name}: measuring for ${opt.durationMs / 1000} s`);
        // The measurements start with the load, once the generator has built its requests.
        let started: Promise<void> | undefined;
        const result = await gen.run(loadConfig(url, scenario), () => {
          started = onStart?.();
        });
        await started;
        return { ...result, settle_after_warmup: settled };
      } finally {
        await gen.close();
      }
    };

    // 1. The floor, with the same generator, connections and duration (Herald, if started, idles).
    // push-batch has its own floor instead (the push floor, after Herald: it needs Herald's sessions).
    const loadavgAt: Record<string, number[]> = { start: loadavg() };
    let floorResult: (LoadResult & { settle_after_warmup: unknown }) | undefined;
    if (opt.scenario !== 'push-batch') {
      const floor = await startFloor();
      log(`floor is up at ${floor.base}`);
      floorResult = await measure('floor', floor.base);
      await stopChild(floor.child, 5000);
      loadavgAt.after_floor = loadavg();
      log(`floor: ${fmt(floorResult.requests_per_s)} req/s`);
    }

    // 2. Herald.
    let heraldResult: (LoadResult & { settle_after_warmup: unknown }) | undefined;
    /** v1-batch: the same load through /api/v1/track/batch, after it. */
    let trackBatchResult: (LoadResult & { settle_after_warmup: unknown }) | undefined;
    let sampler: Sampler | undefined;
    let lag: SinkLag | undefined;
    let shutdown: Awaited<ReturnType<typeof stopChild>> | undefined;
    let loadEnd = 0;
    /** What the fakes had received at the start and the end of Herald's measured phase. */
    const fakesAt: { start?: FakeProvidersStats & { t: number }; end?: FakeProvidersStats & { t: number } } = {};
    /** Herald's GET /metrics at the start and the end of its measured phase (null: it serves none). */
    const metricsAt: { start?: string | null; end?: string | null } = {};
    let providersQuiet: { ms: number; quiet: boolean } | undefined;
    let pushFloor: (PushFloorResult & { fakes_cores: number }) | undefined;
    if (opt.scenario !== 'floor') {
      if (herald) sampler = new Sampler(herald.pid, production.postgres || !dataDir ? null : join(dataDir, 'pg'));
      sampler?.mark('setup');
      const fakesNow = async () => (fakes ? { ...(await fakes.stats()), t: Date.now() } : undefined);
      heraldResult = await measure('herald', base!, async () => {
        sampler?.mark('start');
        [fakesAt.start, metricsAt.start] = await Promise.all([fakesNow(), scrapeMetrics(base!)]);
      });
      loadEnd = Date.now();
      sampler?.mark('end');
      [fakesAt.end, metricsAt.end] = await Promise.all([fakesNow(), scrapeMetrics(base!)]);
      loadavgAt.after_herald = loadavg();
      log(`herald: ${fmt(heraldResult.requests_per_s)} req/s, ${fmt(heraldResult.events_per_s)} ${push ? 'recipients' : 'events'}/s`);
      if (opt.scenario === 'v1-batch') {
        // The comparison: the same events through /api/v1/track/batch on the same Herald, with messageIds as /v1/batch has them.
        trackBatchResult = await measure('herald /api/v1/track/batch', base!, undefined, 'track-batch');
        log(`herald /api/v1/track/batch: ${fmt(trackBatchResult.events_per_s)} events/s; /v1/batch ${fmt(heraldResult.events_per_s)} events/s (${fmt(heraldResult.events_per_s / Math.max(1, trackBatchResult.events_per_s), 3)} of it)`);
      }
      if (opt.scenario === 'track' || opt.scenario === 'track-batch' || opt.scenario === 'v1-batch' || opt.scenario === 'mixed') {
        log('measuring sink lag (sentinel event)');
        lag = await sinkLag(base!, workspaces[0]!, loadEnd, opt.lagTimeoutMs, process.env.CLICKHOUSE_URL);
        sampler?.mark('drained');
        log(lag.timed_out ? `sentinel not readable within ${opt.lagTimeoutMs / 1000} s` : `sentinel readable ${lag.after_load_ms} ms after the load ended`);
      }
      if (fakes) {
        // Batches answered after the load ended were still sending: wait until they are done.
        providersQuiet = await fakes.quiet(1000, 120_000);
        sampler?.mark('drained');
        log(`the fake providers ${providersQuiet.quiet ? 'received nothing more' : 'were still receiving'} ${providersQuiet.ms} ms after the load`);
      }
      if (fakes && opt.scenario === 'push-batch') {
        const config = { ...(await pushFloorConfig(fakes, opt.pushStreams)), durationMs: opt.durationMs };
        const { sessions } = config;
        const env = { ...process.env, ...pushEnv };
        if (opt.warmupMs > 0) {
          log(`push floor: warming up for ${opt.warmupMs / 1000} s`);
          await runPushFloor({ ...config, durationMs: opt.warmupMs }, env);
        }
        log(`push floor: measuring for ${opt.durationMs / 1000} s (${sessions} sessions × ${opt.pushStreams} streams, ${config.bodies.length} of Herald's FCM bodies)`);
        const f0 = await fakes.stats();
        const result = await runPushFloor(config, env);
        const f1 = await fakes.stats();
        pushFloor = { ...result, fakes_cores: round((f1.cpu_s - f0.cpu_s) / Math.max(0.001, result.duration_s), 2) };
        loadavgAt.after_push_floor = loadavg();
        log(`push floor: ${fmt(pushFloor.requests_per_s)} req/s`);
      }
      sampler?.stop();
      if (herald) {
        log('stopping Herald (SIGTERM)');
        stoppingHerald = true;
        shutdown = await stopChild(herald.child, 120_000);
        log(`Herald stopped in ${shutdown.ms} ms (exit ${shutdown.code ?? shutdown.signal}${shutdown.forced ? ', killed after the grace period' : ''})`);
      }
    }

    // 3. Report.
    const rss = sampler
      ? { start: sampler.marks.start?.rss_mb ?? null, max: sampler.maxRss('start', 'end'), end: sampler.marks.end?.rss_mb ?? null, after_drain: sampler.marks.drained?.rss_mb ?? null, after_setup: sampler.marks.setup?.rss_mb ?? null }
      : undefined;
    const cpu =
      sampler?.marks.start && sampler.marks.end && heraldResult
        ? { server_cpu_s: round(sampler.marks.end.cpu_s - sampler.marks.start.cpu_s, 2), server_cores_used: round((sampler.marks.end.cpu_s - sampler.marks.start.cpu_s) / Math.max(0.001, sampler.marks.end.t_s - sampler.marks.start.t_s), 2), threads: sampler.threadCpu('start', 'end') }
        : undefined;
    const pg =
      sampler?.marks.start?.pg_cpu_s !== undefined && sampler.marks.end?.pg_cpu_s !== undefined
        ? {
            pss_mb: { start: sampler.marks.start.pg_pss_mb ?? null, max: sampler.maxPgPss('start', 'end'), end: sampler.marks.end.pg_pss_mb ?? null },
            cores_used: round((sampler.marks.end.pg_cpu_s - sampler.marks.start.pg_cpu_s) / Math.max(0.001, sampler.marks.end.t_s - sampler.marks.start.t_s), 2),
          }
        : undefined;
    const ratio =
      heraldResult && floorResult
        ? { requests_per_s: round(heraldResult.requests_per_s / Math.max(1, floorResult.requests_per_s), 3), events_per_s: round(heraldResult.events_per_s / Math.max(1, floorResult.events_per_s), 3) }
        : undefined;
    const rows: Row[] = floorResult ? [{ name: 'floor (bare uWS)', load: floorResult }] : [];
    if (heraldResult) rows.push({ name: opt.scenario === 'v1-batch' ? 'herald /v1/batch' : 'herald', load: heraldResult, rss, ratio: ratio?.requests_per_s });
    if (trackBatchResult) rows.push({ name: 'herald /api/v1/track/batch', load: trackBatchResult, ratio: floorResult ? round(trackBatchResult.requests_per_s / Math.max(1, floorResult.requests_per_s), 3) : undefined });
    const v1Comparison = heraldResult && trackBatchResult ? { track_batch: trackBatchResult, events_per_s_ratio: round(heraldResult.events_per_s / Math.max(1, trackBatchResult.events_per_s), 3) } : null;
    const providers = fakesAt.start && fakesAt.end ? providerFigures(fakesAt.start, fakesAt.end, pushFloor) : undefined;
    const metrics = metricsAt.start && metricsAt.end ? summarize(metricsAt.start, metricsAt.end) : null;

    const result = {
      scenario: opt.scenario,
      started_at: startedAt.toISOString(),
      revision: revision(),
      options: { duration_s: opt.durationMs / 1000, warmup_s: opt.warmupMs / 1000, connections: opt.connections, workspaces: opt.workspaces, people: opt.people, seed_events: opt.seedEvents, rate: opt.rate ?? null, target: opt.target ?? null, event_campaign: opt.eventCampaign, segments: opt.segments, message_ids: opt.messageIds },
      machine: { cpus: availableParallelism(), cpu_model: cpus()[0]?.model ?? null, memory_gb: round(totalmem() / 2 ** 30, 1), node: process.version, platform: `${process.platform}-${process.arch}`, loadavg: loadavgAt },
      server: opt.scenario === 'floor' ? null : { started_by_bench: !!herald, production_parts_configured: production, healthz: healthz ?? null, workspaces_per_actor: actors ? perActor(workspaces, actors) : null },
      seed: seed ?? null,
      floor: floorResult ?? null,
      herald: heraldResult ? { ...heraldResult, rss_mb: rss ?? null, cpu: cpu ?? null, rss_samples: sampler?.samples ?? [] } : null,
      embedded_postgres: pg ?? null,
      ratio_to_floor: ratio ?? null,
      v1_batch_vs_track_batch: v1Comparison,
      sink_lag: lag ?? null,
      metrics,
      push: push ? { provider: opt.pushProvider, providers: providers ?? null, push_floor: pushFloor ?? null, providers_quiet_after_load: providersQuiet ?? null } : null,
      herald_log: herald ? herald.logged : null,
      shutdown: shutdown ?? null,
    };
    mkdirSync(resolve(opt.out), { recursive: true });
    const file = join(resolve(opt.out), `${opt.scenario}-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');

    const lines = [
      '',
      `scenario ${opt.scenario}: ${opt.durationMs / 1000} s, ${opt.connections} connections, ${opt.workspaces} workspaces, ${opt.people} people each${opt.seedEvents ? `, ${fmt(opt.seedEvents)} events seeded` : ''}${opt.rate ? `, open loop at ${opt.rate} req/s` : ', closed loop'}${opt.eventCampaign === 'none' ? '' : `, event campaign: ${opt.eventCampaign}`}${opt.segments ? `, ${opt.segments} live segments` : ''}; ${availableParallelism()} CPUs shared with the load generator`,
      table(rows),
    ];
    for (const r of rows) if (Object.keys(r.load.by_kind).length > 1) lines.push('', kindTable(r));
    if (seed) {
      const s = seed.seconds;
      lines.push(
        '',
        `seeded ${fmt(seed.events)} events (${seed.from} … ${seed.to}), ${fmt(seed.people_inserted)} people, ${fmt(seed.person_event_counts)} person_event_counts rows in ${fmt(s.total, 1)} s, not timed (people ${fmt(s.people, 1)}, events ${fmt(s.events, 1)}, index rebuild ${fmt(s.indexes, 1)}, counts ${fmt(s.counts, 1)}, VACUUM (ANALYZE) ${fmt(s.vacuum_analyze, 1)}, CHECKPOINT ${seed.checkpointed ? fmt(s.checkpoint, 1) : 'not allowed'}); events ${fmt(seed.size_mb.events)} MB + indexes ${fmt(seed.size_mb.events_indexes)} MB`,
      );
    }
    if (providers) lines.push('', providerTable(providers, pushFloor), '');
    if (providers?.ratio) lines.push(`ratio to the push floor: provider requests/s ${fmt(providers.ratio.provider_requests_per_s, 3)} (FCM and APNs), FCM requests/s alone ${fmt(providers.ratio.fcm_requests_per_s, 3)}`);
    if (push) lines.push(`push: ${opt.pushProvider === 'fakes' ? 'the fake FCM and APNs in a process of their own' : "Herald's sandbox provider"}; events/s counts recipients (${opt.scenario === 'push-batch' ? `${Math.min(PUSH_BATCH_SIZE, opt.people)} a request` : 'one a request'}), each with an android and an ios device`);
    if (v1Comparison) lines.push(`/v1/batch events/s ${fmt(v1Comparison.events_per_s_ratio, 3)} of /api/v1/track/batch's (100 events a request each, every event with a messageId; the floor row is /v1/batch's)`);
    if (ratio) lines.push(`ratio to floor: requests/s ${fmt(ratio.requests_per_s, 3)}, events/s ${fmt(ratio.events_per_s, 3)}`);
    if (cpu) lines.push(`server CPU: ${fmt(cpu.server_cpu_s, 1)} s over the measured phase (${fmt(cpu.server_cores_used, 2)} cores); load generator ${fmt(heraldResult!.loadgen_cpu_s, 1)} s`);
    if (cpu?.threads.length) lines.push(`server threads, busiest first (cores): ${cpu.threads.slice(0, 6).map((t) => `${t.main ? 'main' : t.tid} ${fmt(t.cores, 2)}`).join(', ')}`);
    if (rss) lines.push(`server RSS: ${fmt(rss.after_setup)} MB after setup, ${fmt(rss.start)} at start, ${fmt(rss.max)} max, ${fmt(rss.end)} at end${rss.after_drain === null ? '' : `, ${fmt(rss.after_drain)} after the ${push ? 'provider sends ended' : 'sink drained'}`}`);
    if (pg) lines.push(`embedded PostgreSQL: ${fmt(pg.cores_used, 2)} cores over the measured phase; PSS ${fmt(pg.pss_mb.start)} MB at start, ${fmt(pg.pss_mb.max)} max, ${fmt(pg.pss_mb.end)} at end`);
    if (lag) lines.push(lag.timed_out ? `sink lag: sentinel not readable within ${opt.lagTimeoutMs / 1000} s of the load ending` : `sink lag: sentinel readable ${fmt(lag.after_load_ms)} ms after the load ended (${fmt(lag.after_ack_ms)} ms after its own 201)`);
    if (metrics) lines.push("herald's own metrics over the measured phase (GET /metrics):", formatSummary(metrics));
    if (lag?.clickhouse) lines.push(lag.clickhouse.timed_out ? `ClickHouse sink lag: sentinel not in ClickHouse within ${opt.lagTimeoutMs / 1000} s of the load ending` : `ClickHouse sink lag: sentinel in ClickHouse ${fmt(lag.clickhouse.after_load_ms)} ms after the load ended (${fmt(lag.clickhouse.after_ack_ms)} ms after its own 201)`);
    for (const r of rows) {
      if (r.load.requests === 0) lines.push(`${r.name}: no request was answered within the measured phase (each took longer): measure longer, or with fewer connections`);
      if (r.load.skipped > 0) lines.push(`${r.name}: ${fmt(r.load.skipped)} requests not sent at their time because ${opt.connections * 16} were already waiting`);
      if (r.load.non2xx > 0) lines.push(`${r.name} non-2xx by status: ${JSON.stringify(r.load.status_codes)}; e.g. ${r.load.sample_errors.slice(0, 2).join(' | ')}`);
    }
    if (herald && (herald.logged.warn > 0 || herald.logged.error > 0)) lines.push(`Herald logged ${herald.logged.warn} warnings and ${herald.logged.error} errors; first: ${herald.logged.samples[0] ?? ''}`);
    lines.push(`1-min load average: ${Object.entries(loadavgAt).map(([k, v]) => `${k.replace('_', ' ')} ${fmt(v[0], 1)}`).join(', ')} (above ${availableParallelism()} means other work competed for the CPUs)`);
    lines.push(`JSON: ${file}`, '');
    process.stdout.write(lines.join('\n') + '\n');
    return 0;
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? err}`);
    if (herald && herald.child.exitCode !== null) log(herald.output());
    return 1;
  } finally {
    clearTimeout(watchdog);
    await cleanup();
  }
}

// Whatever happens, no child outlives the run.
process.once('exit', killAllNow);
// The fan-outs, callbacks and store-floor have no load generator nor HTTP floor: runs of their own
// (bench/fanout.ts, bench/callbacks.ts, bench/store-floor.ts); isolation drives the load
// generator itself (bench/isolation.ts).
const argv = process.argv.slice(2);
const scenarioIs = (name: string) => argv.some((a, i) => a === `--scenario=${name}` || (a === '--scenario' && argv[i + 1] === name));
const own: [string, () => Promise<number>][] = [
  ['fanout', () => fanout(argv)],
  ['email-fanout', () => fanout(argv, 'email')],
  ['sms-fanout', () => fanout(argv, 'sms')],
  ['callbacks', () => callbacks(argv)],
  ['store-floor', () => storeFloor(argv)],
  ['isolation', () => isolation(argv)],
  ['segment', () => segment(argv)],
  ['scale', () => scale(argv)],
  ['webhooks', () => webhooks(argv)],
  ['audiences', () => audiences(argv)],
  ['funnel', () => funnel(argv)],
  ['tracking', () => tracking(argv)],
];
process.exitCode = await (own.find(([name]) => scenarioIs(name))?.[1] ?? main)();

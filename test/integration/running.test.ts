// Running Herald as a newcomer does: the `herald` command, `npm start` and its signals, a
// second Herald on a taken port or data dir, and the embedded PostgreSQL's life (orphaned by a
// kill -9, killed under a running Herald, an old PGlite data dir).
import t, { type Test } from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alive, startServer, eventually, workspaceWithKeys, TEST_SECRET, type TestServer } from '../helpers/server.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'dist', 'src', 'cli.js');
const embedded = !process.env.DATABASE_URL;

function herald(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 30_000 });
}

function tempDir(t: Test, label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `herald-${label}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const postmasterPid = (dataDir: string) => Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);

t.test('herald help, --help, no command, unknown command', async (t) => {
  for (const arg of ['help', '--help', '-h']) {
    const r = herald([arg]);
    t.equal(r.status, 0, `${arg} succeeds`);
    t.match(r.stdout, /usage: herald <command>/, `${arg} prints usage on stdout`);
    t.match(r.stdout, /herald start/);
  }
  const none = herald([]);
  t.equal(none.status, 2, 'no command: usage error, nothing started');
  t.match(none.stderr, /usage: herald <command>/);
  t.notMatch(none.stdout, /listening/);
  const unknown = herald(['serve']);
  t.equal(unknown.status, 2);
  t.match(unknown.stderr, /unknown command 'serve'/);
});

// One server for the next three tests: a second Herald is refused its port, then its data dir.
t.test('a second Herald on a taken port or data dir is refused; start-up and shutdown of the first', async (t) => {
  const dir = tempDir(t, 'first');
  const a = await startServer({}, { keepDataDir: dir });
  t.teardown(() => a.stop());

  t.test('a taken port: exit 2 with a message naming the port and HERALD_PORT, nothing created', async (t) => {
    const other = tempDir(t, 'second');
    const err = await startServer({ HERALD_PORT: String(a.port) }, { keepDataDir: other }).then(
      (b) => (b.stop(), 'started'),
      (e: Error) => e.message,
    );
    t.match(err, /server exited with 2/, 'refused at start, exit 2');
    t.match(err, new RegExp(`Cannot listen on 127\\.0\\.0\\.1:${a.port}`), 'names the port');
    t.match(err, /HERALD_PORT/, 'says which setting to change');
    t.notOk(existsSync(join(other, 'pg')), 'refused before creating a database');
    t.equal((await a.req('GET', '/healthz')).status, 200, 'the first Herald still serves');
  });

  t.test('embedded: one Herald per data dir; the second names the first one', { skip: !embedded && 'the data dir holds no database with DATABASE_URL' }, async (t) => {
    const err = await startServer({}, { keepDataDir: dir }).then(
      (b) => (b.stop(), 'started'),
      (e: Error) => e.message,
    );
    t.match(err, /server exited with 2/);
    t.match(err, new RegExp(`in use by another Herald \\(pid ${a.proc.pid}\\)`), 'names the other process');
    t.equal((await a.req('GET', '/healthz')).status, 200, 'the first Herald still serves');
  });

  t.test('embedded: start-up says where the database lives; SIGTERM stops PostgreSQL and releases the lock', { skip: !embedded && 'embedded only' }, async (t) => {
    t.match(a.stdout(), new RegExp(`Creating the embedded PostgreSQL database in ${join(dir, 'pg')}`), 'the first start says it creates the database');
    t.match(a.stdout(), /PostgreSQL 18\.\d+ \(embedded\) in .*, on 127\.0\.0\.1:\d+/);
    const health = await a.req('GET', '/healthz');
    t.equal(health.body.components.store_kind, 'embedded-postgres');
    const pm = postmasterPid(dir);
    t.equal(await a.stop(), 0);
    t.notOk(alive(pm), 'PostgreSQL stops with Herald');
    t.notOk(existsSync(join(dir, 'pg', 'postmaster.pid')), 'cleanly: no postmaster.pid left');
    t.notOk(existsSync(join(dir, 'herald.pid')), 'the data dir lock is released');
  });
});

t.test('embedded: after kill -9 the orphaned postmaster is taken over, and nothing acknowledged is lost', { skip: !embedded && 'embedded only' }, async (t) => {
  const dir = tempDir(t, 'orphan');
  const a = await startServer({}, { keepDataDir: dir });
  const k = await workspaceWithKeys(a, { all: ['*'] });
  const put = await a.req('POST', '/people', { token: k.all, body: { userId: 'kept', traits: { plan: 'pro' } } });
  t.equal(put.status, 201);
  const pm = postmasterPid(dir);
  await a.stop('SIGKILL');
  t.ok(alive(pm), 'the postmaster outlives a killed Herald');

  const b = await startServer({}, { keepDataDir: dir });
  t.teardown(() => b.stop());
  t.notOk(alive(pm), 'the orphan was stopped');
  t.match(b.stdout(), new RegExp(`Stopping the PostgreSQL server \\(pid ${pm}\\) that an earlier Herald left running`));
  const got = await b.req('GET', '/people/kept', { token: k.all });
  t.equal(got.status, 200, got.text);
  t.same(got.body.person.traits, { plan: 'pro' }, 'the acknowledged write survived');
});

t.test('embedded: a postmaster that dies under a running Herald is reported and restarted', { skip: !embedded && 'embedded only' }, async (t) => {
  const dir = tempDir(t, 'pmdeath');
  const a = await startServer({}, { keepDataDir: dir });
  t.teardown(() => a.stop());
  const k = await workspaceWithKeys(a, { all: ['*'] });
  process.kill(postmasterPid(dir), 'SIGKILL');
  const down = await eventually(async () => {
    const h = await a.req('GET', '/healthz');
    return h.status === 503 ? h : null;
  }, 5000);
  if (down) t.match(down.body.components.store, /^down/, '/healthz reports the store down meanwhile');
  const back = await eventually(async () => (await a.req('GET', '/healthz')).status === 200, 30_000);
  t.ok(back, '/healthz is ok again once the server is restarted');
  const r = await eventually(async () => {
    const x = await a.req('POST', '/people', { token: k.all, body: { userId: 'after-restart' } });
    return x.status === 201 ? x : null;
  }, 10_000);
  t.ok(r, 'writes succeed again');
  t.match(a.stderr(), /the embedded PostgreSQL server exited; starting it again/);
});

t.test('embedded: a data dir in the old PGlite layout gets a clear error', { skip: !embedded && 'embedded only' }, async (t) => {
  const dir = tempDir(t, 'pglite');
  mkdirSync(join(dir, 'pglite'));
  const err = await startServer({}, { keepDataDir: dir }).then(
    (b) => (b.stop(), 'started'),
    (e: Error) => e.message,
  );
  t.match(err, /server exited with 2/);
  t.match(err, /PGlite layout/);
  t.match(err, /new HERALD_DATA_DIR/, 'says what to do');
});

t.test('SIGTERM to the `npm start` process stops Herald cleanly', async (t) => {
  const dir = tempDir(t, 'npmstart');
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { ...process.env, HERALD_PORT: '0', HERALD_DATA_DIR: dir, HERALD_AUTH_SECRET: TEST_SECRET, HERALD_ACTORS: '1', HERALD_LOG_LEVEL: 'warn', HERALD_NATS_PREFIX: `t-npmstart-${process.pid}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  npm.stdout!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
  const port = await eventually(async () => Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1] ?? 0), 60_000);
  t.ok(port > 0, `npm start serves: ${out}`);
  const s = { base: `http://127.0.0.1:${port}` } as TestServer;
  t.equal((await fetch(`${s.base}/healthz`)).status, 200);
  npm.kill('SIGTERM');
  t.equal(await exited, 0, 'npm start exits 0');
  const gone = await eventually(async () => fetch(`${s.base}/healthz`).then(() => false, () => true), 10_000);
  t.ok(gone, 'nothing serves on the port any more (Herald got the signal and stopped)');
});

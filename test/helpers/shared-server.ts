// One Herald per tap run (per distinct `env`) for the test files whose subject is what a
// request does, not the server's own life: starting a Herald costs seconds, most of a small
// file's time. The first file to ask starts it through a detached keeper
// (shared-server-host.mjs) that stops it, and removes its data dir and database, when the run
// ends; the others find it in the run's registry dir under the temp dir. Each file works in
// workspaces of its own (newWorkspace, workspaceWithKeys), so files stay independent and may
// run at the same time. A file that restarts, kills or reconfigures its server, reads its
// output, or counts anything server-wide (metrics, /healthz totals, rate limits per IP) starts
// its own with startServer.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NO_LIMITS } from './assert.js';
import { createDatabase } from './database.js';
import { CLI, alive, heraldAt, heraldEnv, prepareDataDir, type Herald } from './server.js';

const HOST = new URL('./shared-server-host.mjs', import.meta.url).pathname;

interface Start {
  dataDir: string;
  natsPrefix?: string;
  databaseUrl?: string;
}

const attached = new Map<string, Promise<Herald>>();

/**
 * The run's shared Herald with `env` over NO_LIMITS (one file's requests must not spend
 * another's budget) and no HERALD_PUBLIC_URL (links name the port bound): on the embedded
 * default with a PostgreSQL of its own, on DATABASE_URL with a database of its own (its
 * campaign runtime must not run another server's campaigns, nor another server its). Never
 * stopped by a test file.
 */
export function sharedServer(env: Record<string, string> = {}): Promise<Herald> {
  const settings: Record<string, string | undefined> = { ...NO_LIMITS, HERALD_PUBLIC_URL: undefined, ...env };
  const key = createHash('sha256').update(JSON.stringify(Object.entries(settings).sort())).digest('hex').slice(0, 12);
  let s = attached.get(key);
  if (!s) attached.set(key, (s = attach(key, settings)));
  return s;
}

async function attach(key: string, settings: Record<string, string | undefined>): Promise<Herald> {
  // The run is tap's runner, whose children the test files are; a file run on its own owns its server.
  const owner = process.env.TAP === '1' ? process.ppid : process.pid;
  const dir = join(tmpdir(), `herald-shared-${owner}-${key}`);
  for (let waited = 0; ; waited += 100) {
    const server = readJson<{ port: number; host: number }>(join(dir, 'server.json'));
    if (server && alive(server.host)) {
      const start = readJson<Start>(join(dir, 'start.json'))!;
      return heraldAt(server.port, start.dataDir, start.natsPrefix, start.databaseUrl);
    }
    if (existsSync(join(dir, 'failed'))) throw new Error(readFileSync(join(dir, 'failed'), 'utf8'));
    // Left by a keeper killed outright (a pid used again): started afresh.
    if (server) rmSync(dir, { recursive: true, force: true });
    if (mkdirIfAbsent(dir)) {
      await launch(dir, owner, settings).catch((err: Error) => {
        writeFileSync(join(dir, 'failed'), `the shared Herald could not be started: ${err.stack}`);
        throw err;
      });
      continue;
    }
    if (waited > 180_000) throw new Error(`the shared Herald in ${dir} did not start in 3 min`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Prepares the server's data dir and database and starts its keeper, which starts it. */
async function launch(dir: string, owner: number, settings: Record<string, string | undefined>): Promise<void> {
  const external = process.env.DATABASE_URL;
  const database = external && settings.DATABASE_URL === undefined ? await createDatabase(external) : undefined;
  const env = database ? { ...settings, DATABASE_URL: database.url } : settings;
  const { dataDir, natsPrefix } = await prepareDataDir(env);
  const start: Start = { dataDir, natsPrefix, databaseUrl: env.DATABASE_URL ?? external };
  writeFileSync(join(dir, 'start.json'), JSON.stringify({ ...start, cli: CLI, env: heraldEnv(dataDir, natsPrefix, env), database: database && { admin: external, name: database.name } }));
  spawn(process.execPath, [HOST, dir, String(owner)], { detached: true, stdio: 'ignore', env: { ...process.env, NODE_OPTIONS: undefined } }).unref();
}

function mkdirIfAbsent(dir: string): boolean {
  try {
    mkdirSync(dir);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

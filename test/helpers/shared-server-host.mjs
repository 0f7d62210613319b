// Keeps one shared test Herald (test/helpers/shared-server.ts) for as long as the tap run that
// asked for it: started detached by the first test file to ask, it runs Herald as described in
// <dir>/start.json, writes <dir>/server.json once Herald listens (or <dir>/failed with its
// output if it cannot start), and when the run's process (argv[3]) is gone — the run ended,
// was interrupted or killed — stops Herald and removes its data dir, its database (on an
// external PostgreSQL) and <dir>. Herald's output goes to <dir>/herald.log meanwhile (kept as
// <dir>.log if Herald dies mid-run).
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

const [dir, ownerArg] = process.argv.slice(2);
const owner = Number(ownerArg);
/** @type {{ cli: string; env: Record<string, string>; dataDir: string; database?: { admin: string; name: string } }} */
const start = JSON.parse(readFileSync(join(dir, 'start.json'), 'utf8'));

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const herald = spawn(process.execPath, [start.cli, 'start'], { env: start.env, stdio: ['ignore', 'pipe', 'pipe'] });
const log = createWriteStream(join(dir, 'herald.log'));
let head = '';
let listening = false;
const exited = new Promise((resolve) => herald.once('exit', resolve));
for (const stream of [herald.stdout, herald.stderr]) {
  stream.on('data', (d) => {
    log.write(d);
    if (listening) return;
    head += d;
    const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(head);
    if (!m) return;
    listening = true;
    writeFileSync(join(dir, 'server.json.tmp'), JSON.stringify({ port: Number(m[1]), host: process.pid }));
    renameSync(join(dir, 'server.json.tmp'), join(dir, 'server.json'));
  });
}

/** The pid on line 1 of the embedded PostgreSQL's postmaster.pid, or 0 when it has none (stopped, or none). */
function postmasterPid(dataDir) {
  try {
    return Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return 0;
  }
}

async function cleanUp() {
  if (herald.exitCode === null && herald.signalCode === null) {
    herald.kill('SIGTERM');
    const late = setTimeout(() => herald.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(late);
  }
  try {
    // A Herald that died outright leaves its embedded PostgreSQL running: stopped at once.
    const postmaster = postmasterPid(start.dataDir);
    if (postmaster > 0 && alive(postmaster)) process.kill(postmaster, 'SIGQUIT');
    rmSync(start.dataDir, { recursive: true, force: true });
    if (start.database) {
      // As test/helpers/database.ts drops a file's own database.
      const c = new pg.Client({ connectionString: start.database.admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${start.database.name} WITH (FORCE)`).finally(() => c.end());
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void exited.then((code) => {
  if (!listening) writeFileSync(join(dir, 'failed'), `shared Herald exited with ${code}:\n${head}`);
});
while (alive(owner) && herald.exitCode === null && herald.signalCode === null) await new Promise((r) => setTimeout(r, 250));
// One that never listened leaves `failed` for the files still to ask until the run ends; one that
// died later goes at once, its output kept beside the dir (the files using it fail, refused),
// and the next file to ask starts another.
if (!listening) {
  while (alive(owner)) await new Promise((r) => setTimeout(r, 1000));
} else if (alive(owner)) {
  renameSync(join(dir, 'herald.log'), `${dir}.log`);
}
await cleanUp();

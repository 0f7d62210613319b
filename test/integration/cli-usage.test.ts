// The `herald` command's arguments and the settings it checks before anything starts: every
// command's --help, unknown options and stray arguments, `herald token --ttl` bounds, and the
// listen settings (HERALD_PORT, HERALD_HOST) and empty values. None of these starts a server.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { TEST_SECRET } from '../helpers/server.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const CLI = join(ROOT, 'dist', 'src', 'cli.js');
const JWT = /^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function tempDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `herald args` with its data dir in `dir` (a free port, the test secret, no external services). */
function herald(dir: string, args: string[], env: Record<string, string | undefined> = {}) {
  return spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, HERALD_DATA_DIR: dir, HERALD_PORT: '0', HERALD_AUTH_SECRET: TEST_SECRET, DATABASE_URL: undefined, NATS_URL: undefined, CLICKHOUSE_URL: undefined, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

/** Exit 2, one line on stderr starting `herald: ` and matching `message`, no stack, nothing served or created. */
function refused(t: Test, r: ReturnType<typeof herald>, dir: string, message: RegExp, why: string): void {
  t.equal(r.status, 2, `${why}: exit 2 (stderr: ${r.stderr}, stdout: ${r.stdout})`);
  const lines = r.stderr.trimEnd().split('\n');
  t.equal(lines.length, 1, `${why}: one line (${r.stderr})`);
  t.match(lines[0], /^herald: /, `${why}: says who speaks`);
  t.match(lines[0], message, `${why}: names it`);
  t.notMatch(r.stdout, /listening/, `${why}: nothing served`);
  t.same(readdirSync(dir), [], `${why}: nothing created in the data dir`);
}

t.test('every command: --help prints its usage on stdout, exits 0 and starts nothing', async (t) => {
  const dir = tempDir(t);
  const cases: [string[], RegExp][] = [
    [['start', '--help'], /^usage: herald start\n/],
    [['start', '-h'], /^usage: herald start\n/],
    [['token', '--help'], /^usage: herald token --user <sub>/],
    [['token', '-h'], /^usage: herald token --user <sub>/],
    [['token', '--user', 'alice', '--help'], /^usage: herald token --user <sub>/],
    [['help', 'start'], /^usage: herald start\n/],
    [['help', 'token'], /^usage: herald token --user <sub>/],
    [['help'], /^usage: herald <command>/],
    [['--help'], /^usage: herald <command>/],
  ];
  for (const [args, usage] of cases) {
    const r = herald(dir, args);
    const why = `herald ${args.join(' ')}`;
    t.equal(r.status, 0, `${why}: exit 0 (stderr: ${r.stderr})`);
    t.match(r.stdout, usage, `${why}: prints that command's usage`);
    t.equal(r.stderr, '', `${why}: nothing on stderr`);
    t.notMatch(r.stdout, /listening|PostgreSQL|eyJ/, `${why}: starts nothing, prints no token`);
  }
  t.same(readdirSync(dir), [], 'no PostgreSQL cluster, no secret: the data dir is untouched');
});

t.test('unknown options and stray arguments: exit 2 with one line naming them and pointing to --help', async (t) => {
  const dir = tempDir(t);
  const cases: [string[], RegExp][] = [
    [['start', '--bogus'], /Unknown option '--bogus' \(see herald start --help\)/],
    [['start', 'extra'], /Unexpected argument 'extra' \(see herald start --help\)/],
    [['token', '--user', 'alice', '--ttl', '-1h'], /Option '--ttl' argument is ambiguous \(see herald token --help\)/],
    [['start', '-x'], /Unknown option '-x' \(see herald start --help\)/],
    [['start', '--help=yes'], /--help' does not take an argument \(see herald start --help\)/],
    [['token', '--user', 'alice', '--bogus'], /Unknown option '--bogus' \(see herald token --help\)/],
    [['token', '--user', 'alice', 'extra'], /Unexpected argument 'extra' \(see herald token --help\)/],
    [['token', '--user'], /'--user <value>' argument missing \(see herald token --help\)/],
    [['help', '--bogus'], /Unknown option '--bogus' \(see herald help --help\)/],
    [['help', 'serve'], /unknown command 'serve' \(see herald --help\)/],
    [['help', 'start', 'token'], /Unexpected argument 'token' \(see herald help --help\)/],
  ];
  for (const [args, message] of cases) refused(t, herald(dir, args), dir, message, `herald ${args.join(' ')}`);
});

t.test('`npm start -- --bogus` is refused the same way (npm passes the arguments on to herald start)', async (t) => {
  const dir = tempDir(t);
  const r = spawnSync('npm', ['start', '--silent', '--', '--bogus'], {
    cwd: ROOT,
    env: { ...process.env, HERALD_DATA_DIR: dir, HERALD_PORT: '0', HERALD_AUTH_SECRET: TEST_SECRET, DATABASE_URL: undefined, NATS_URL: undefined, CLICKHOUSE_URL: undefined },
    encoding: 'utf8',
    timeout: 120_000,
  });
  refused(t, r, dir, /Unknown option '--bogus' \(see herald start --help\)/, 'npm start -- --bogus');
});

t.test('herald token --ttl: 1 minute to 366 days; anything else refused with one line', async (t) => {
  const dir = tempDir(t);
  for (const ttl of ['0s', '59s', '0m', '367d', '8785h', '99999999999d', '5y', '1h30m', '-1h']) {
    refused(t, herald(dir, ['token', '--user', 'alice', `--ttl=${ttl}`]), dir, /^herald: --ttl must be from 1m to 366d, a number and s, m, h or d \(e\.g\. 1h\), got '/, `--ttl=${ttl}`);
  }
  for (const [ttl, seconds] of [['1m', 60], ['60s', 60], ['366d', 366 * 86_400], ['8784h', 366 * 86_400]] as const) {
    const r = herald(dir, ['token', '--user', 'alice', '--ttl', ttl]);
    t.equal(r.status, 0, `--ttl ${ttl} is accepted (${r.stderr})`);
    t.match(r.stdout.trim(), JWT);
    const c = decodeJwt(r.stdout.trim());
    t.equal(c.exp! - c.iat!, seconds, `--ttl ${ttl}: the token lives ${seconds} s`);
  }
});

t.test('listen settings and empty values: exit 2 with one line naming the setting', async (t) => {
  const dir = tempDir(t);
  const cases: [string, Record<string, string>, RegExp][] = [
    ['an empty HERALD_PORT (not the default 8080)', { HERALD_PORT: '' }, /^herald: HERALD_PORT is set but empty/],
    ['an empty HERALD_HOST', { HERALD_HOST: '' }, /^herald: HERALD_HOST is set but empty/],
    ['a HERALD_HOST that is no address or host name', { HERALD_HOST: '999.1.1.1' }, /^herald: HERALD_HOST must be an IP address or a host name, got '999\.1\.1\.1'/],
    ['a HERALD_HOST with a port', { HERALD_HOST: '127.0.0.1:8080' }, /^herald: HERALD_HOST must be an IP address or a host name/],
    ['a HERALD_HOST that is not this machine', { HERALD_HOST: '192.0.2.1' }, /^herald: HERALD_HOST 192\.0\.2\.1 is not an address of this machine/],
    ['the same on a fixed port', { HERALD_HOST: '192.0.2.1', HERALD_PORT: '18080' }, /^herald: HERALD_HOST 192\.0\.2\.1 is not an address of this machine/],
    // A resolver that answers for every name makes it an address that is not this machine's.
    ['a HERALD_HOST name that does not resolve', { HERALD_HOST: 'nosuch-herald.invalid' }, /^herald: HERALD_HOST nosuch-herald\.invalid (does not resolve|is not an address of this machine)/],
    // One rule for every setting: empty is refused, unset is the default.
    ['an empty DATABASE_URL', { DATABASE_URL: '' }, /^herald: DATABASE_URL is set but empty: unset it for its default, or give it a value$/],
    ['an empty HERALD_METRICS', { HERALD_METRICS: '' }, /^herald: HERALD_METRICS is set but empty/],
  ];
  for (const [why, env, message] of cases) {
    const r = herald(dir, ['start'], env);
    refused(t, r, dir, message, why);
    t.notMatch(r.stderr, /port is taken/, `${why}: not reported as a taken port`);
  }
  refused(t, herald(dir, ['token', '--user', 'alice'], { HERALD_AUTH_SECRET: '' }), dir, /^herald: HERALD_AUTH_SECRET is set but empty/, 'herald token with an empty HERALD_AUTH_SECRET');
});

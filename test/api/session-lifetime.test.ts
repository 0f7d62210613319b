// A session token lives at most 366 days: one whose exp lies further than that from its iat
// (or from now, when iat is absent or in the future) is refused with the usual 401, however it
// was signed; `herald token --ttl 366d`, the longest the command prints, is accepted.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { SignJWT } from 'jose';
import { startServer, uniqueUser, TEST_SECRET, type Res } from '../helpers/server.js';

const CLI = new URL('../../dist/src/cli.js', import.meta.url).pathname;
const DAY = 86_400;
const MAX = 366 * DAY;

const s = await startServer();
t.teardown(() => s.stop());

/** An HS256 token for a fresh user with these claims (seconds since the epoch; null leaves iat out). */
function token(iat: number | null, exp: number): Promise<string> {
  const jwt = new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(uniqueUser('life')).setExpirationTime(exp);
  if (iat !== null) jwt.setIssuedAt(iat);
  return jwt.sign(new TextEncoder().encode(TEST_SECRET));
}

const workspaces = (tok: string): Promise<Res> => s.req('GET', '/workspaces', { token: tok });

function unauthorized(t: Test, r: Res, what: string): void {
  t.equal(r.status, 401, `${what}: 401 (got ${r.status}: ${r.text})`);
  t.strictSame(r.body, { error: 'Unauthorized', message: 'Invalid or expired session token', details: 'Session token failed verification' }, `${what}: the documented 401 body`);
}

t.test('a lifetime up to 366 days is accepted; longer is refused with 401', async (t) => {
  const now = Math.floor(Date.now() / 1000);
  const accepted: [string, number | null, number][] = [
    ['exactly 366 days from iat', now, now + MAX],
    ['one hour, as usual', now, now + 3600],
    ['no iat, 365 days from now', null, now + 365 * DAY],
    ['iat a while ago, 366 days from it', now - 100 * DAY, now - 100 * DAY + MAX],
  ];
  for (const [why, iat, exp] of accepted) t.equal((await workspaces(await token(iat, exp))).status, 200, why);

  const refused: [string, number | null, number][] = [
    ['366 days and one second from iat', now, now + MAX + 1],
    ['a token that never expires in practice', now, now + 99_999_999_999 * DAY],
    ['no iat, 367 days from now', null, now + 367 * DAY],
    ['iat 400 days ago, expiring in an hour', now - 400 * DAY, now + 3600],
    ['iat in the future does not lengthen it: 367 days from now', now + 300 * DAY, now + 367 * DAY],
  ];
  for (const [why, iat, exp] of refused) unauthorized(t, await workspaces(await token(iat, exp)), why);
});

t.test('herald token --ttl 366d (its longest) prints a token the server accepts', async (t) => {
  const r = spawnSync(process.execPath, [CLI, 'token', '--user', uniqueUser('cli'), '--ttl', '366d'], { env: { ...process.env, HERALD_AUTH_SECRET: TEST_SECRET }, encoding: 'utf8', timeout: 30_000 });
  t.equal(r.status, 0, r.stderr);
  t.equal((await workspaces(r.stdout.trim())).status, 200);
});

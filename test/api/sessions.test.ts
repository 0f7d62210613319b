// Dashboard session authentication (README, Sessions and the Default workspace, Errors and Permissions): HS256 tokens,
// OIDC through a JWKS, API keys refused on session routes, the first-start bootstrap and the
// `herald token` command.
import t, { type Test } from 'tap';
import { createServer, type Server } from 'node:http';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, UnsecuredJWT, decodeJwt, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { startServer, newWorkspace, newKey, uniqueUser, eventually, TEST_SECRET, type Res, type TestServer } from '../helpers/server.js';

const CLI = new URL('../../dist/src/cli.js', import.meta.url).pathname;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const JWT_LINE = /^(eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/m;
const FORBIDDEN = { error: 'Forbidden', message: 'Insufficient permissions' };

type T = Test;

function unauthorized(t: T, r: Res, what: string): void {
  t.equal(r.status, 401, `${what}: 401 (got ${r.status}: ${r.text})`);
  t.equal(r.body?.error, 'Unauthorized', `${what}: error`);
  t.equal(r.body?.message, 'Invalid or expired session token', `${what}: message`);
  t.type(r.body?.details, 'string', `${what}: details is a string`);
  t.strictSame(Object.keys(r.body ?? {}).sort(), ['details', 'error', 'message'], `${what}: no other fields`);
}

function forbidden(t: T, r: Res, what: string): void {
  t.equal(r.status, 403, `${what}: 403 (got ${r.status}: ${r.text})`);
  t.strictSame(r.body, FORBIDDEN, `${what}: exact 403 body`);
}

/** Runs the CLI; resolves with exit code and output (never rejects). */
function cli(args: string[], env: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

const s: TestServer = await startServer();
t.teardown(() => s.stop());

t.test('HS256 sessions: missing, malformed, wrong-secret, expired and exp-less tokens get 401', async (t) => {
  const user = uniqueUser('hs');
  // The good token works, so the refusals below are about the token alone.
  const good = await s.session(user);
  t.equal((await s.req('GET', '/workspaces', { token: good })).status, 200);

  unauthorized(t, await s.req('GET', '/workspaces'), 'no Authorization header');
  unauthorized(t, await s.req('POST', '/workspaces', { body: { name: 'x' } }), 'no header on POST');
  unauthorized(t, await s.req('GET', '/workspaces', { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } }), 'Basic scheme');
  unauthorized(t, await s.req('GET', '/workspaces', { token: 'not-a-jwt' }), 'garbage token');
  unauthorized(t, await s.req('GET', '/workspaces', { token: await s.session(user, { secret: 'some-other-secret-0123456789abcdef' }) }), 'wrong secret');
  unauthorized(t, await s.req('GET', '/workspaces', { token: await s.session(user, { ttlSeconds: -60 }) }), 'expired');

  const noExp = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(user).setIssuedAt().sign(new TextEncoder().encode(TEST_SECRET));
  unauthorized(t, await s.req('GET', '/workspaces', { token: noExp }), 'no exp claim');
  unauthorized(t, await s.req('POST', '/workspaces', { token: noExp, body: { name: 'no exp' } }), 'no exp claim on POST');

  const noSub = await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode(TEST_SECRET));
  unauthorized(t, await s.req('GET', '/workspaces', { token: noSub }), 'no sub claim');

  const unsecured = new UnsecuredJWT({}).setSubject(user).setIssuedAt().setExpirationTime('1h').encode();
  unauthorized(t, await s.req('GET', '/workspaces', { token: unsecured }), 'alg none');

  // Tampered payload: another sub with the original signature.
  const [h, , sig] = good.split('.');
  const forged = `${h}.${Buffer.from(JSON.stringify({ sub: 'local-admin', exp: Math.floor(Date.now() / 1000) + 3600 })).toString('base64url')}.${sig}`;
  unauthorized(t, await s.req('GET', '/workspaces', { token: forged }), 'tampered payload');

  // The refused POSTs created nothing for this user.
  const l = await s.req('GET', '/workspaces', { token: good });
  t.equal(l.body.total, 0);
});

t.test('401 on every kind of session route, including workspace-path routes', async (t) => {
  const ws = await newWorkspace(s, 'Session 401');
  const expired = await s.session(ws.owner, { ttlSeconds: -1 });
  unauthorized(t, await s.req('GET', `/workspaces/${ws.id}`), 'GET workspace, no header');
  unauthorized(t, await s.req('GET', `/workspaces/${ws.id}`, { token: expired }), 'GET workspace, expired');
  unauthorized(t, await s.req('PUT', `/workspaces/${ws.id}`, { token: expired, body: { name: 'x' } }), 'PUT workspace, expired');
  unauthorized(t, await s.req('GET', `/workspaces/${ws.id}/api-keys`, { token: expired }), 'GET api-keys, expired');
  unauthorized(t, await s.req('POST', `/workspaces/${ws.id}/members`, { token: expired, body: { user_id: 'x', role: 'admin' } }), 'POST members, expired');
  t.equal((await s.req('GET', `/workspaces/${ws.id}`, { token: ws.token })).body.data.workspace.name, 'Session 401', 'unchanged');
});

t.test('API keys and anything in API-key form on a session route: 403', async (t) => {
  const ws = await newWorkspace(s, 'Keys on session routes');
  const secret = await newKey(s, ws, { permissions: ['*'] });
  const pub = await newKey(s, ws, { key_type: 'public' });
  t.match(secret.key, /^ws_live_/);
  t.match(pub.key, /^pk_live_/);
  const credentials: [string, string][] = [
    ['real secret key', secret.key],
    ['real public key', pub.key],
    ['ws_live_ garbage', 'ws_live_garbage'],
    ['pk_live_ garbage', 'pk_live_abc.def'],
    ['well-formed unknown key', `ws_live_00000000_AAAAAAAA.${'0'.repeat(64)}`],
    ['ws_live_ prefix only', 'ws_live_'],
  ];
  for (const [why, token] of credentials) {
    t.test(why, async (t) => {
      forbidden(t, await s.req('GET', '/workspaces', { token }), 'GET /workspaces');
      forbidden(t, await s.req('POST', '/workspaces', { token, body: { name: 'by key' } }), 'POST /workspaces');
      forbidden(t, await s.req('GET', `/workspaces/${ws.id}`, { token }), 'GET /workspaces/{id}');
      forbidden(t, await s.req('PUT', `/workspaces/${ws.id}`, { token, body: { name: 'by key' } }), 'PUT /workspaces/{id}');
      forbidden(t, await s.req('GET', `/workspaces/${ws.id}/api-keys`, { token }), 'GET api-keys');
      forbidden(t, await s.req('POST', `/workspaces/${ws.id}/api-keys`, { token, body: { name: 'k', permissions: ['*'] } }), 'POST api-keys');
      forbidden(t, await s.req('POST', `/workspaces/${ws.id}/members`, { token, body: { user_id: 'x', role: 'admin' } }), 'POST members');
    });
  }
  const g = await s.req('GET', `/workspaces/${ws.id}`, { token: ws.token });
  t.equal(g.body.data.workspace.name, 'Keys on session routes', 'keys changed nothing');
  const keys = await s.req('GET', `/workspaces/${ws.id}/api-keys`, { token: ws.token });
  t.equal(keys.body.total, 2, 'keys created no keys');
});

t.test('OIDC: tokens verified against a JWKS, issuer and audience', async (t) => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  let jwksHits = 0;
  const jwks: Server = createServer((req, res) => {
    if (req.url === '/.well-known/jwks.json') {
      jwksHits++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((r) => jwks.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => jwks.close(() => r())));
  const port = (jwks.address() as { port: number }).port;
  const ISS = `http://127.0.0.1:${port}/`;
  const AUD = 'herald-dashboard';

  const o = await startServer({
    HERALD_AUTH_SECRET: undefined,
    HERALD_AUTH_JWKS_URL: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    HERALD_AUTH_ISSUER: ISS,
    HERALD_AUTH_AUDIENCE: AUD,
  });
  t.teardown(() => o.stop());

  const sign = (sub: string, claims: { iss?: string; aud?: string; exp?: boolean; key?: CryptoKey; kid?: string } = {}) => {
    let jwt = new SignJWT({ email: `${sub}@example.com` })
      .setProtectedHeader({ alg: 'RS256', kid: claims.kid ?? 'test-key-1' })
      .setSubject(sub)
      .setIssuedAt()
      .setIssuer(claims.iss ?? ISS)
      .setAudience(claims.aud ?? AUD);
    if (claims.exp !== false) jwt = jwt.setExpirationTime('1h');
    return jwt.sign(claims.key ?? privateKey);
  };

  const user = uniqueUser('oidc');
  const token = await sign(user);
  const c = await o.req('POST', '/workspaces', { token, body: { name: 'OIDC workspace' } });
  t.equal(c.status, 201, c.text);
  const id = c.body?.data?.workspace?.id;
  t.match(id, UUID);
  const g = await o.req('GET', `/workspaces/${id}`, { token });
  t.equal(g.status, 200, g.text);
  t.equal(g.body.data.workspace.name, 'OIDC workspace');
  t.ok(jwksHits >= 1, 'Herald fetched the JWKS');

  const wrongAud = await sign(user, { aud: 'someone-else' });
  unauthorized(t, await o.req('GET', `/workspaces/${id}`, { token: wrongAud }), 'wrong audience');
  unauthorized(t, await o.req('POST', '/workspaces', { token: wrongAud, body: { name: 'x' } }), 'wrong audience on POST');
  unauthorized(t, await o.req('GET', `/workspaces/${id}`, { token: await sign(user, { iss: 'https://evil.example.com/' }) }), 'wrong issuer');
  unauthorized(t, await o.req('GET', `/workspaces/${id}`, { token: await sign(user, { exp: false }) }), 'no exp');
  unauthorized(t, await o.req('GET', `/workspaces/${id}`, { token: await sign(user, { key: other.privateKey }) }), 'signed by a key not in the JWKS (same kid)');
  unauthorized(t, await o.req('GET', `/workspaces/${id}`, { token: await sign(user, { key: other.privateKey, kid: 'unknown-kid' }) }), 'unknown kid');
  unauthorized(t, await o.req('GET', `/workspaces/${id}`, { token: await s.session(user) }), 'HS256 token with the test secret');
  const expired = await new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'test-key-1' }).setSubject(user).setIssuer(ISS).setAudience(AUD).setIssuedAt(Math.floor(Date.now() / 1000) - 7200).setExpirationTime(Math.floor(Date.now() / 1000) - 3600).sign(privateKey);
  unauthorized(t, await o.req('GET', `/workspaces/${id}`, { token: expired }), 'expired');

  // Still fine afterwards, and another OIDC user is not a member.
  t.equal((await o.req('GET', `/workspaces/${id}`, { token })).status, 200);
  forbidden(t, await o.req('GET', `/workspaces/${id}`, { token: await sign(uniqueUser('oidc-other')) }), 'other OIDC user');
  const l = await o.req('GET', '/workspaces', { token });
  t.equal(l.body.total, 1, 'only the one workspace created with a valid token');
});

t.test('bootstrap without a secret, restart, and the token command', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'herald-bootstrap-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  const readBootstrap = async (srv: TestServer) => {
    const seen = await eventually(async () => {
      const out = srv.stdout();
      const w = /Default workspace: (\S+)/.exec(out);
      const tok = JWT_LINE.exec(out);
      return w && tok ? { workspaceId: w[1]!, token: tok[1]! } : null;
    });
    if (!seen) throw new Error(`no bootstrap output:\n${srv.stdout()}`);
    return seen;
  };

  const a = await startServer({ HERALD_AUTH_SECRET: undefined }, { keepDataDir: dir });
  t.teardown(() => a.stop());
  const first = await readBootstrap(a);
  t.match(first.workspaceId, UUID, 'prints the default workspace id');
  t.match(a.stdout(), /Default workspace: [0-9a-f-]{36}\n/);
  const claims1 = decodeJwt(first.token);
  t.equal(claims1.sub, 'local-admin', 'token is for local-admin');
  t.equal((claims1.exp ?? 0) - (claims1.iat ?? 0), 24 * 3600, 'valid 24 hours');

  const g = await a.req('GET', `/workspaces/${first.workspaceId}`, { token: first.token });
  t.equal(g.status, 200, g.text);
  t.equal(g.body.data.workspace.name, 'Default');
  t.equal(g.body.data.workspace.id, first.workspaceId);
  const l = await a.req('GET', '/workspaces', { token: first.token });
  t.ok(l.body.workspaces.some((w: { id: string }) => w.id === first.workspaceId), 'listed for local-admin');
  // The server uses its generated secret, not the test one.
  unauthorized(t, await a.req('GET', '/workspaces', { token: await a.session('local-admin') }), 'token signed with the test secret');

  // Restart with the same data dir: same workspace, a freshly printed token; the old one still verifies.
  t.equal(await a.stop(), 0, 'first server exits 0 on SIGTERM');
  const b = await startServer({ HERALD_AUTH_SECRET: undefined }, { keepDataDir: dir });
  t.teardown(() => b.stop());
  const second = await readBootstrap(b);
  t.equal(second.workspaceId, first.workspaceId, 'same workspace after restart');
  const claims2 = decodeJwt(second.token);
  t.equal(claims2.sub, 'local-admin');
  t.ok((claims2.iat ?? 0) >= (claims1.iat ?? 0), 'token issued at restart');
  t.equal((claims2.exp ?? 0) - (claims2.iat ?? 0), 24 * 3600);
  t.equal((await b.req('GET', `/workspaces/${second.workspaceId}`, { token: second.token })).status, 200, 'new token works');
  t.equal((await b.req('GET', `/workspaces/${first.workspaceId}`, { token: first.token })).status, 200, 'old token still works: secret kept in the data dir');

  t.test('herald token signs with the data-dir secret', async (t) => {
    const r = await cli(['token', '--user', 'alice', '--ttl', '1h'], { HERALD_DATA_DIR: dir, HERALD_AUTH_SECRET: undefined, HERALD_AUTH_JWKS_URL: undefined });
    t.equal(r.code, 0, r.stderr);
    const m = JWT_LINE.exec(r.stdout);
    t.ok(m, `prints a token: ${r.stdout}`);
    const token = m![1]!;
    const c = decodeJwt(token);
    t.equal(c.sub, 'alice');
    t.equal((c.exp ?? 0) - (c.iat ?? 0), 3600, '--ttl 1h');
    const w = await b.req('POST', '/workspaces', { token, body: { name: 'Alice workspace' } });
    t.equal(w.status, 201, w.text);
    const id = w.body?.data?.workspace?.id;
    const l = await b.req('GET', '/workspaces', { token });
    t.ok(l.body.workspaces.some((x: { id: string }) => x.id === id), "alice's workspace is listed for alice");
    forbidden(t, await b.req('GET', `/workspaces/${id}`, { token: second.token }), 'local-admin is not a member of alice\'s workspace');
    // The main server (test secret) does not accept it.
    unauthorized(t, await s.req('GET', '/workspaces', { token }), 'data-dir token on a server with another secret');
  });

  t.test('herald token signs with HERALD_AUTH_SECRET when set', async (t) => {
    const user = uniqueUser('cli');
    const r = await cli(['token', '--user', user], { HERALD_DATA_DIR: dir, HERALD_AUTH_SECRET: TEST_SECRET });
    t.equal(r.code, 0, r.stderr);
    const token = JWT_LINE.exec(r.stdout)?.[1] ?? '';
    const { payload } = await jwtVerify(token, new TextEncoder().encode(TEST_SECRET));
    t.equal(payload.sub, user);
    t.equal((payload.exp ?? 0) - (payload.iat ?? 0), 3600, 'default ttl 1h');
    const w = await s.req('POST', '/workspaces', { token, body: { name: 'CLI' } });
    t.equal(w.status, 201, w.text);
    unauthorized(t, await b.req('GET', '/workspaces', { token }), 'not accepted by the bootstrapped server');

    const other = await cli(['token', '--user', user], { HERALD_DATA_DIR: dir, HERALD_AUTH_SECRET: 'a-completely-different-secret-xyz' });
    t.equal(other.code, 0, other.stderr);
    const tok2 = JWT_LINE.exec(other.stdout)?.[1] ?? '';
    await t.resolves(jwtVerify(tok2, new TextEncoder().encode('a-completely-different-secret-xyz')), 'signed with that secret');
    unauthorized(t, await s.req('GET', '/workspaces', { token: tok2 }), 'another secret is refused by the test server');
  });

  t.test('herald token refuses without --user or without a secret', async (t) => {
    const noUser = await cli(['token'], { HERALD_DATA_DIR: dir, HERALD_AUTH_SECRET: undefined });
    t.not(noUser.code, 0, 'token without --user exits non-zero');
    t.equal(JWT_LINE.test(noUser.stdout), false, 'prints no token');
    t.match(noUser.stderr, /--user/, 'says --user is required');

    const noUser2 = await cli(['token', '--ttl', '1h'], { HERALD_DATA_DIR: dir, HERALD_AUTH_SECRET: TEST_SECRET });
    t.not(noUser2.code, 0, 'with a secret but no --user: non-zero');

    const empty = mkdtempSync(join(tmpdir(), 'herald-empty-'));
    t.teardown(() => rmSync(empty, { recursive: true, force: true }));
    const noSecret = await cli(['token', '--user', 'alice'], { HERALD_DATA_DIR: empty, HERALD_AUTH_SECRET: undefined });
    t.not(noSecret.code, 0, 'no configured or generated secret: non-zero');
    t.equal(JWT_LINE.test(noSecret.stdout), false, 'prints no token');
  });
});

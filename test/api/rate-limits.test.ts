// Rate limits (README, Rate limits and Errors). Buckets start full and refill slowly
// (a few tokens a minute), so exhausting one takes exactly `burst` requests however long the
// test takes between them. Key routes are used to observe the workspace scopes whether they
// are served yet or still answer 501 after auth, permission and workspace budget.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { startServer, newWorkspace, newKey, uniqueUser, request, TEST_SECRET, type Res, type TestServer } from '../helpers/server.js';

type T = Test;

// per-minute:burst. Distinct per-minute values, so X-RateLimit-Limit shows which scope was hit.
const LIMITS = { 'ws-reads': [5, 3], 'ws-ingest': [4, 3], 'ws-devices': [3, 2], 'user-dashboard': [2, 4], 'ip-public': [1, 3], edge: [6000, 600] } as const;
const SPEC = Object.entries(LIMITS).map(([k, [m, b]]) => `${k}=${m}:${b}`).join(',');

// A key cache TTL longer than any test here: a key used once stays cached.
const s: TestServer = await startServer({ HERALD_RATE_LIMITS: SPEC, HERALD_KEY_CACHE_TTL_MS: '600000' });
t.teardown(() => s.stop());

/** A 429 exactly as README, Rate limits and Errors describe it. */
function limited(t: T, r: Res, scope: keyof typeof LIMITS, what: string): void {
  t.equal(r.status, 429, `${what}: 429 (got ${r.status}: ${r.text})`);
  t.strictSame(Object.keys(r.body ?? {}).sort(), ['error', 'gate', 'message', 'scope'], `${what}: body fields`);
  t.equal(r.body?.error, 'Rate limit exceeded', `${what}: error`);
  t.type(r.body?.message, 'string', `${what}: message`);
  t.equal(r.body?.scope, scope, `${what}: scope`);
  t.equal(r.body?.gate, 'local', `${what}: gate local`);
  const retry = r.headers.get('retry-after');
  t.match(retry, /^\d+$/, `${what}: Retry-After is integer seconds`);
  t.ok(Number(retry) >= 1 && Number(retry) <= 3600, `${what}: Retry-After ${retry} within 1..3600`);
  t.equal(r.headers.get('x-ratelimit-limit'), String(LIMITS[scope][0]), `${what}: X-RateLimit-Limit is the scope's per-minute limit`);
  t.equal(r.headers.get('x-ratelimit-remaining'), '0', `${what}: X-RateLimit-Remaining 0`);
  const reset = r.headers.get('x-ratelimit-reset');
  t.match(reset, /^\d+$/, `${what}: X-RateLimit-Reset is a Unix timestamp`);
  const now = Math.floor(Date.now() / 1000);
  t.ok(Number(reset) > now - 1 && Number(reset) <= now + 3601, `${what}: X-RateLimit-Reset ${reset} in the future (now ${now})`);
  t.ok(Number(reset) >= now, `${what}: X-RateLimit-Reset not in the past`);
  t.equal(r.headers.get('x-ratelimit-scope'), r.body?.scope, `${what}: X-RateLimit-Scope equals body.scope`);
}

/** Not refused: no rate-limit headers at all (they appear only on 429). */
function passed(t: T, r: Res, status: number, what: string): void {
  t.equal(r.status, status, `${what}: ${status} (got ${r.status}: ${r.text})`);
  const names = [...r.headers.keys()].filter((h) => h.startsWith('x-ratelimit-') || h === 'retry-after');
  t.strictSame(names, [], `${what}: no rate-limit headers`);
}

/**
 * A key route's answer past auth, permission and the workspace budget. Today these routes
 * answer 501 NOT_IMPLEMENTED there; once a route is served it answers its own status, which
 * is still neither 401/403 (auth, permission) nor 429 (budget) nor a server error.
 */
function open(t: T, r: Res, what: string): void {
  t.notOk([401, 403, 429].includes(r.status), `${what}: passed auth, permission and budget (got ${r.status}: ${r.text})`);
  t.ok(r.status < 500 || r.status === 501, `${what}: no server error`);
  if (r.status === 501) t.equal(r.body?.code, 'NOT_IMPLEMENTED', `${what}: NOT_IMPLEMENTED`);
  const names = [...r.headers.keys()].filter((h) => h.startsWith('x-ratelimit-') || h === 'retry-after');
  t.strictSame(names, [], `${what}: no rate-limit headers`);
}

const trackBody = { userId: 'u-1', event: 'app_opened', properties: {} };
const deviceBody = { token: 'device-token-0123456789', platform: 'android' };

t.test('ws-reads: keys of one workspace share one budget; other workspaces and scopes are unaffected', async (t) => {
  const ws = await newWorkspace(s, 'Reads');
  const k1 = await newKey(s, ws, { permissions: ['people:read', 'events:write', 'events:read'] });
  const k2 = await newKey(s, ws, { permissions: ['people:read'] });
  const other = await newWorkspace(s, 'Other');
  const ko = await newKey(s, other, { permissions: ['people:read'] });

  open(t, await s.req('GET', '/people', { token: k1.key }), 'key 1 read 1');
  open(t, await s.req('GET', '/people', { token: k2.key }), 'key 2 read 2');
  open(t, await s.req('GET', '/events/search?event=app_opened', { token: k1.key }), 'key 1 read 3 (another reads route)');
  limited(t, await s.req('GET', '/people', { token: k2.key }), 'ws-reads', 'key 2, 4th read of the workspace');
  limited(t, await s.req('GET', '/people/someone', { token: k1.key }), 'ws-reads', 'key 1, 5th read of the workspace');
  limited(t, await s.req('GET', '/people/someone/events', { token: k1.key }), 'ws-reads', 'key 1, events of a person');

  // Another workspace has its own budget.
  open(t, await s.req('GET', '/people', { token: ko.key }), 'other workspace read');
  // Another scope of the same workspace has its own budget.
  open(t, await s.req('POST', '/track', { token: k1.key, body: trackBody }), 'same workspace ingest');
});

t.test('campaign triggers count against ws-reads; their 429 is the rate-limit body, not the flat one', async (t) => {
  const ws = await newWorkspace(s, 'Triggers');
  const k = await newKey(s, ws, { permissions: ['people:read', 'campaigns:trigger'] });
  const trigger = () => s.req('POST', `/campaigns/${randomUUID()}/trigger`, { token: k.key, body: { workspace_id: ws.id } });
  open(t, await trigger(), 'trigger 1 (an unknown campaign: 404)');
  open(t, await s.req('GET', '/people', { token: k.key }), 'read 2');
  open(t, await trigger(), 'trigger 3');
  limited(t, await trigger(), 'ws-reads', 'trigger 4');
  limited(t, await s.req('GET', '/people', { token: k.key }), 'ws-reads', 'a read after the triggers');
});

t.test('ws-ingest: exhausting ingestion leaves reads and devices of the workspace open', async (t) => {
  const ws = await newWorkspace(s, 'Ingest');
  const k = await newKey(s, ws, { permissions: ['events:write', 'people:write', 'people:read', 'devices:register'] });
  const k2 = await newKey(s, ws, { key_type: 'public' });
  open(t, await s.req('POST', '/track', { token: k.key, body: trackBody }), 'ingest 1');
  open(t, await s.req('POST', '/identify', { token: k2.key, body: { userId: 'u-1', traits: {} } }), 'ingest 2 (public key, identify)');
  open(t, await s.req('POST', '/track/batch', { token: k.key, body: { batch: [trackBody] } }), 'ingest 3 (batch costs one)');
  limited(t, await s.req('POST', '/track', { token: k.key, body: trackBody }), 'ws-ingest', 'ingest 4');
  limited(t, await s.req('POST', '/track', { token: k2.key, body: trackBody }), 'ws-ingest', 'ingest by the public key');
  limited(t, await s.req('POST', '/people', { token: k.key, body: { userId: 'u-2' } }), 'ws-ingest', 'people write');

  open(t, await s.req('GET', '/people', { token: k.key }), 'reads of the workspace still open');
  open(t, await s.req('POST', '/people/u-1/devices', { token: k.key, body: deviceBody }), 'devices of the workspace still open');
});

t.test('ws-devices: device registration and unregistration share the device budget', async (t) => {
  const ws = await newWorkspace(s, 'Devices');
  const k = await newKey(s, ws, { permissions: ['devices:register', 'events:write'] });
  const pub = await newKey(s, ws, { key_type: 'public' });
  open(t, await s.req('POST', '/people/u-1/devices', { token: k.key, body: deviceBody }), 'register 1');
  open(t, await s.req('DELETE', '/people/u-1/devices', { token: pub.key, body: { token: deviceBody.token } }), 'unregister (public key)');
  limited(t, await s.req('POST', '/people/u-1/devices', { token: k.key, body: deviceBody }), 'ws-devices', 'register 3');
  limited(t, await s.req('POST', '/people/u-2/devices', { token: pub.key, body: deviceBody }), 'ws-devices', 'register by the public key');
  open(t, await s.req('POST', '/track', { token: k.key, body: trackBody }), 'ingest of the workspace still open');

  const other = await newWorkspace(s, 'Devices other');
  const ko = await newKey(s, other, { permissions: ['devices:register'] });
  open(t, await s.req('POST', '/people/u-1/devices', { token: ko.key, body: deviceBody }), 'other workspace registers');
});

t.test('user-dashboard: session routes are limited per user', async (t) => {
  const user = uniqueUser('dash');
  const token = await s.session(user);
  for (let i = 1; i <= LIMITS['user-dashboard'][1]; i++) passed(t, await s.req('GET', '/workspaces', { token }), 200, `session request ${i}`);
  limited(t, await s.req('GET', '/workspaces', { token }), 'user-dashboard', 'one past the burst');
  limited(t, await s.req('POST', '/workspaces', { token, body: { name: 'too many' } }), 'user-dashboard', 'another session route');
  // A second token of the same user draws on the same budget.
  limited(t, await s.req('GET', '/workspaces', { token: await s.session(user, { ttlSeconds: 600 }) }), 'user-dashboard', 'same user, another token');

  const other = await s.session(uniqueUser('dash-other'));
  const r = await s.req('POST', '/workspaces', { token: other, body: { name: 'fine' } });
  passed(t, r, 201, 'another user');
  passed(t, await s.req('GET', `/workspaces/${r.body.data.workspace.id}`, { token: other }), 200, 'another user reads');
});

t.test('user-dashboard: refused requests change nothing', async (t) => {
  const owner = uniqueUser('dash-owner');
  const admin = uniqueUser('dash-admin');
  const token = await s.session(owner);
  const c = await s.req('POST', '/workspaces', { token, body: { name: 'Kept' } });
  passed(t, c, 201, 'create');
  const id = c.body.data.workspace.id;
  passed(t, await s.req('POST', `/workspaces/${id}/members`, { token, body: { user_id: admin, role: 'admin' } }), 201, 'add admin');
  passed(t, await s.req('GET', `/workspaces/${id}`, { token }), 200, 'get');
  passed(t, await s.req('GET', '/workspaces', { token }), 200, 'list');
  limited(t, await s.req('PUT', `/workspaces/${id}`, { token, body: { name: 'Changed' } }), 'user-dashboard', 'update refused');
  limited(t, await s.req('DELETE', `/workspaces/${id}/members/${encodeURIComponent(admin)}`, { token }), 'user-dashboard', 'member removal refused');
  // The admin, with a budget of their own, sees the workspace as it was.
  const tAdmin = await s.session(admin);
  const g = await s.req('GET', `/workspaces/${id}`, { token: tAdmin });
  passed(t, g, 200, 'admin reads');
  t.equal(g.body?.data?.workspace?.name, 'Kept', 'refused update did not apply');
});

t.test('ip-public: the unauthenticated budget on GET /api/v1/openapi.json', async (t) => {
  // A key's first use is a store lookup, paid for with an ip-public token that is given back
  // when the key authenticates: it leaves the budget as it was.
  const ws = await newWorkspace(s, 'After public');
  const k = await newKey(s, ws, { permissions: ['people:read'] });
  open(t, await s.req('GET', '/people', { token: k.key }), 'key route, first use');
  for (let i = 1; i <= LIMITS['ip-public'][1]; i++) {
    const r = await s.req('GET', '/openapi.json');
    passed(t, r, 200, `openapi ${i}`);
    t.type(r.body?.openapi, 'string', 'an OpenAPI document');
  }
  limited(t, await s.req('GET', '/openapi.json'), 'ip-public', 'one past the burst');
  // Authenticated traffic from the same IP is not counted there.
  passed(t, await s.req('GET', '/workspaces', { token: await s.session(uniqueUser('after-public')) }), 200, 'session route');
  open(t, await s.req('GET', '/people', { token: k.key }), 'key route, the key cached');
  // A key the cache does not hold needs a token for its lookup, like a key that does not exist.
  const fresh = await newKey(s, ws, { permissions: ['people:read'] });
  limited(t, await s.req('GET', '/people', { token: fresh.key }), 'ip-public', 'a key not cached yet, the budget spent');
});

t.test('edge: every request of an IP counts, whatever it is', async (t) => {
  const e = await startServer({ HERALD_RATE_LIMITS: 'edge=1:5' });
  t.teardown(() => e.stop());
  const token = await e.session(uniqueUser('edge'));
  // Five requests of different kinds, each with its normal answer.
  passed(t, await e.req('GET', '/healthz'), 200, 'health');
  passed(t, await e.req('GET', '/openapi.json'), 200, 'openapi');
  passed(t, await e.req('GET', '/workspaces'), 401, 'no credentials');
  passed(t, await e.req('GET', '/no/such/route'), 404, 'unknown route');
  passed(t, await e.req('POST', '/workspaces', { token, body: { name: 'Edge' } }), 201, 'session route');
  // The sixth, of any kind, is refused by the edge backstop.
  const checks: [string, () => Promise<Res>][] = [
    ['health', () => e.req('GET', '/healthz')],
    ['session route', () => e.req('GET', '/workspaces', { token })],
    ['unknown route', () => request(e.base, 'GET', '/nothing-here')],
    ['key route without key', () => e.req('POST', '/track', { body: trackBody })],
  ];
  for (const [why, send] of checks) {
    const r = await send();
    t.test(why, async (t) => {
      t.equal(r.status, 429, r.text);
      const limit = r.headers.get('x-ratelimit-limit');
      t.equal(limit, '1', 'X-RateLimit-Limit is the edge per-minute limit');
      t.equal(r.body?.scope, 'edge');
      t.equal(r.body?.gate, 'local');
      t.equal(r.body?.error, 'Rate limit exceeded');
      t.equal(r.headers.get('x-ratelimit-scope'), 'edge');
      t.equal(r.headers.get('x-ratelimit-remaining'), '0');
      t.match(r.headers.get('retry-after'), /^\d+$/);
      t.ok(Number(r.headers.get('retry-after')) >= 1 && Number(r.headers.get('retry-after')) <= 3600);
      t.ok(Number(r.headers.get('x-ratelimit-reset')) >= Math.floor(Date.now() / 1000), 'reset not in the past');
    });
  }
});

t.test('behind a trusted proxy: every spelling of one forwarded address shares its budget; a hop naming no address is the proxy', async (t) => {
  const p = await startServer({ HERALD_RATE_LIMITS: SPEC, HERALD_TRUSTED_PROXIES: '127.0.0.1/32' });
  t.teardown(() => p.stop());
  const openapi = (hop: string) => p.req('GET', '/openapi.json', { headers: { 'x-forwarded-for': hop } });
  // One address written four ways: the burst is spent once, then every spelling is refused.
  const spellings = ['203.0.113.5', '203.0.113.5:1234', '[203.0.113.5]', '[::ffff:203.0.113.5]:80'];
  for (let i = 0; i < LIMITS['ip-public'][1]; i++) passed(t, await openapi(spellings[i]!), 200, `${spellings[i]} (${i + 1} of the burst)`);
  for (const hop of spellings) limited(t, await openapi(hop), 'ip-public', `${hop} after the burst`);
  passed(t, await openapi('198.51.100.1'), 200, 'another client has its own budget');
  // Hops that name no address are the proxy (127.0.0.1): one budget between them, not one each.
  const nameless = ['garbage', '203.000.113.005', 'unknown'];
  for (let i = 0; i < LIMITS['ip-public'][1]; i++) passed(t, await openapi(nameless[i]!), 200, `${nameless[i]} (${i + 1} of the proxy's burst)`);
  for (const hop of [...nameless, '10.0.0.1:x']) limited(t, await openapi(hop), 'ip-public', `${hop} after the burst`);
  limited(t, await p.req('GET', '/openapi.json'), 'ip-public', 'the proxy itself, without X-Forwarded-For');
});

/** Starts `herald start` with `env` and resolves with its exit code, or 'listening' if it serves. */
function startExpectingExit(env: Record<string, string>): Promise<{ result: number | 'listening' | null; stderr: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-badlimits-'));
  const cli = new URL('../../dist/src/cli.js', import.meta.url).pathname;
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [cli, 'start'], {
      env: { ...process.env, HERALD_HOST: '127.0.0.1', HERALD_PORT: '0', HERALD_DATA_DIR: dir, HERALD_AUTH_SECRET: TEST_SECRET, HERALD_ACTORS: '1', HERALD_LOG_LEVEL: 'warn', HERALD_NATS_PREFIX: `t-${basename(dir)}`, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let served = false;
    proc.stdout.on('data', (d) => {
      out += d;
      if (!served && /listening on/.test(out)) {
        served = true;
        proc.kill('SIGTERM');
      }
    });
    proc.stderr.on('data', (d) => (err += d));
    proc.once('exit', (code) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ result: served ? 'listening' : code, stderr: err });
    });
  });
}

t.test('malformed HERALD_RATE_LIMITS: the server exits non-zero at start', async (t) => {
  const bad = ['ws-reads=60', 'ws-reads=sixty:3', 'no-such-scope=60:3', 'ws-reads=60:0', 'ws-reads=60:3,edge', 'ws-reads:60:3', 'ws-reads=-1:3'];
  for (const spec of bad) {
    const { result, stderr } = await startExpectingExit({ HERALD_RATE_LIMITS: spec });
    t.test(spec, async (t) => {
      t.not(result, 'listening', 'does not serve');
      t.type(result, 'number', 'exits with a code');
      t.not(result, 0, 'non-zero exit');
      t.match(stderr, /HERALD_RATE_LIMITS/, 'names the setting');
    });
  }
  // The well-formed counterpart serves.
  const ok = await startExpectingExit({ HERALD_RATE_LIMITS: 'ws-reads=60:3,edge=600:100' });
  t.equal(ok.result, 'listening', `a well-formed value serves: ${ok.stderr}`);
});

// Two replicas of one deployment (one Postgres, one NATS prefix): each has its own local
// buckets, and the cross-replica bucket in NATS KV bounds their total (README, Rate limits).
t.test('shared gate: a workspace budget spent on one replica is refused on another (gate shared)', { skip: !(process.env.NATS_URL && process.env.DATABASE_URL) && 'needs DATABASE_URL and NATS_URL (two replicas sharing a store and NATS)' }, async (t) => {
  const env = { HERALD_RATE_LIMITS: 'ws-ingest=1:5', HERALD_NATS_PREFIX: `t-shared-${process.pid}-${Date.now().toString(36)}` };
  const [a, b] = await Promise.all([startServer(env), startServer(env)]);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  const ws = await newWorkspace(a);
  const { key } = await newKey(a, ws, { permissions: ['events:write'] });
  const track = (srv: TestServer) => srv.req('POST', '/track', { token: key, body: { userId: uniqueUser('shared'), event: 'tick' } });

  for (let i = 0; i < 5; i++) t.equal((await track(a)).status, 201, `replica A: request ${i + 1} of the burst`);
  const localOnA = await track(a);
  t.equal(localOnA.status, 429, 'replica A: its own bucket is empty');
  t.equal(localOnA.body?.gate, 'local');

  // Replica B's local bucket is full, but the shared one is spent. B learns the shared state
  // at its first flush (every 100 ms), so at most one request slips through before that.
  await new Promise((r) => setTimeout(r, 500));
  const onB: Res[] = [];
  for (let i = 0; i < 4; i++) {
    onB.push(await track(b));
    await new Promise((r) => setTimeout(r, 300));
  }
  const passedOnB = onB.filter((r) => r.status === 201).length;
  t.ok(passedOnB <= 1, `replica B let at most one request through before learning the shared state (${onB.map((r) => r.status)})`);
  const refused = onB.filter((r) => r.status === 429);
  t.equal(refused.length, onB.length - passedOnB, 'every other request on B is refused');
  for (const r of refused) {
    t.equal(r.body?.gate, 'shared', 'refused by the cross-replica counter');
    t.equal(r.body?.scope, 'ws-ingest');
    t.equal(r.headers.get('x-ratelimit-scope'), 'ws-ingest');
    t.match(r.headers.get('retry-after'), /^\d+$/);
  }
  // Another workspace on B is unaffected: the shared bucket is per workspace.
  const other = await newWorkspace(b);
  const otherKey = (await newKey(b, other, { permissions: ['events:write'] })).key;
  t.equal((await b.req('POST', '/track', { token: otherKey, body: { userId: 'u1', event: 'tick' } })).status, 201, 'another workspace still passes on B');
});

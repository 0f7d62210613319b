// Authentication and permissions on key routes (README, Permissions and Errors).
// Key routes not served yet answer 501 after authentication, the permission check and the workspace
// budget, so "got through auth" is observable as any status other than 401/403.
import t, { type Test } from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { startServer, newWorkspace, newKey, eventually, type Res, type TestServer } from '../helpers/server.js';
import { FORBIDDEN, INERT, ROUTE_PERMISSIONS } from '../helpers/assert.js';
import { ROUTES, type Route } from '../../src/routes.js';

const OPEN_LIMITS = 'ip-public=100000:100000,edge=100000:100000';
// One server per distinct environment: the default (allowlist only warned about), enforcement
// on the socket address, and a trusted proxy in front.
const [s, enf, prox] = await Promise.all([
  startServer({ HERALD_RATE_LIMITS: OPEN_LIMITS }),
  startServer({ HERALD_RATE_LIMITS: OPEN_LIMITS, HERALD_ENFORCE_IP_ALLOWLIST: 'true' }),
  startServer({ HERALD_RATE_LIMITS: OPEN_LIMITS, HERALD_TRUSTED_PROXIES: '127.0.0.1/32' }),
]);
t.teardown(() => Promise.all([s.stop(), enf.stop(), prox.stop()]));

type KeyRoute = Extract<Route, { auth: 'key' }>;
// The Segment-compatible source's routes take the key as Segment's write key (HTTP Basic) and
// answer Segment's bodies: test/api/segment-source.test.ts covers their credentials.
const KEY_ROUTES = ROUTES.filter((r): r is KeyRoute => r.auth === 'key' && !r.source);
// The session routes a key may not open (the analytics reads also take one: test/api/analytics.test.ts).
const SESSION_ROUTES = ROUTES.filter((r) => r.auth === 'session' && !r.keys);
const TRIGGER = 'POST /campaigns/{campaignId}/trigger';

const UNAUTH_MESSAGE = 'Invalid or expired API key';

/** The request a route gets in these tests: path parameters filled, a small JSON body on writes. */
function call(srv: TestServer, route: Route, workspaceId: string, opts: { token?: string; headers?: Record<string, string>; pathWorkspace?: string } = {}): Promise<Res> {
  const path = route.path
    .replace('{workspaceId}', opts.pathWorkspace ?? workspaceId)
    .replace('{id}', 'auth-test-user')
    .replace('{messageId}', randomUUID())
    .replace('{campaignId}', randomUUID())
    .replace('{keyId}', randomUUID())
    .replace('{personId}', randomUUID())
    .replace('{userId}', 'someone');
  const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : route.id === TRIGGER ? { workspace_id: workspaceId, trigger_data: {} } : {};
  return srv.req(route.method, path, { token: opts.token, body, headers: opts.headers });
}

function passed(t: Test, r: Res, what: string): void {
  t.ok(![401, 403, 429].includes(r.status) && (r.status < 500 || r.status === 501), `${what} gets through auth (got ${r.status} ${r.text})`);
}

function refused(t: Test, route: Route, r: Res, what: string): void {
  t.equal(r.status, 403, `${what} is 403 (got ${r.status} ${r.text})`);
  if (route.id === TRIGGER) {
    t.same(Object.keys(r.body ?? {}), ['error'], 'trigger 403 body is flat {error}');
    t.type(r.body?.error, 'string');
  } else {
    t.same(r.body, FORBIDDEN, `${what} 403 body`);
  }
}

function unauthorized(t: Test, r: Res, what: string): void {
  t.equal(r.status, 401, `${what} is 401 (got ${r.status} ${r.text})`);
  t.same(Object.keys(r.body ?? {}).sort(), ['details', 'error', 'message'], `${what} 401 body fields`);
  t.equal(r.body?.error, 'Unauthorized');
  t.equal(r.body?.message, UNAUTH_MESSAGE);
  t.type(r.body?.details, 'string');
}

const route = (id: string): KeyRoute => {
  const r = KEY_ROUTES.find((x) => x.id === id);
  if (!r) throw new Error(`no key route ${id}`);
  return r;
};
const PEOPLE_LIST = route('GET /people');

t.test('the route table has the key routes the interface lists', async (t) => {
  t.ok(KEY_ROUTES.length >= 24, `${KEY_ROUTES.length} key routes`);
  for (const id of ['POST /identify', 'POST /track', 'POST /track/batch', 'POST /people/{id}/devices', 'GET /people/{id}/devices', 'DELETE /people/{id}/devices', TRIGGER]) {
    t.ok(KEY_ROUTES.some((r) => r.id === id), id);
  }
  for (const r of KEY_ROUTES) t.ok(r.permissions.length > 0 && r.permissions.every((p) => ROUTE_PERMISSIONS.includes(p)), `${r.id} is gated by route permissions`);
});

t.test('no Authorization header: 401 on every key route', async (t) => {
  const ws = await newWorkspace(s);
  for (const r of KEY_ROUTES) unauthorized(t, await call(s, r, ws.id), `${r.id} without a key`);
});

t.test('non-Bearer, malformed and unknown credentials: 401', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['*'] });
  passed(t, await call(s, PEOPLE_LIST, ws.id, { token: k.key }), 'control: the valid key');
  const [prefix, secret] = k.key.split('.') as [string, string];
  const headers: Array<[string, string]> = [
    ['raw key without scheme', k.key],
    ['Basic', `Basic ${Buffer.from(`${k.key}:`).toString('base64')}`],
    ['Token scheme', `Token ${k.key}`],
    ['ApiKey scheme', `ApiKey ${k.key}`],
    ['Bearer with nothing', 'Bearer'],
    ['Bearer with blanks', 'Bearer    '],
  ];
  for (const [label, value] of headers) unauthorized(t, await call(s, PEOPLE_LIST, ws.id, { headers: { authorization: value } }), label);

  const malformed: Array<[string, string]> = [
    ['prefix only', prefix],
    ['prefix and dot', `${prefix}.`],
    ['secret only', secret],
    ['secret one char short', `${prefix}.${secret.slice(0, 63)}`],
    ['secret one char long', `${prefix}.${secret}0`],
    ['secret upper-case', `${prefix}.${secret.toUpperCase().replace(/^[0-9]/, 'A')}`],
    ['secret not hex', `${prefix}.${'g'.repeat(64)}`],
    ['wrong type prefix', `xx${k.key.slice(2)}`],
    ['test env prefix', k.key.replace('ws_live_', 'ws_test_')],
    ['garbage', 'not-a-key'],
    ['colon separator', `${prefix}:${secret}`],
    ['two keys', `${k.key} ${k.key}`],
  ];
  for (const [label, value] of malformed) unauthorized(t, await call(s, PEOPLE_LIST, ws.id, { token: value }), `malformed: ${label}`);

  const otherSecret = randomBytes(32).toString('hex');
  unauthorized(t, await call(s, PEOPLE_LIST, ws.id, { token: `${prefix}.${otherSecret}` }), 'real prefix, wrong secret');
  const short = ws.id.replace(/-/g, '').slice(0, 8);
  unauthorized(t, await call(s, PEOPLE_LIST, ws.id, { token: `ws_live_${short}_ZZZZZZZZ.${otherSecret}` }), 'well-formed unknown key');
  unauthorized(t, await call(s, PEOPLE_LIST, ws.id, { token: `pk_live_${short}_${prefix.slice(-8)}.${secret}` }), 'the secret under the public prefix');
  passed(t, await call(s, PEOPLE_LIST, ws.id, { token: k.key }), 'the valid key still works after the failures');
});

t.test('a session JWT on a key route is 401', async (t) => {
  const ws = await newWorkspace(s);
  for (const r of KEY_ROUTES) unauthorized(t, await call(s, r, ws.id, { token: ws.token }), `${r.id} with the owner's session token`);
});

t.test('the key is accepted only in the Authorization header', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['*'] });
  for (const q of ['api_key', 'apiKey', 'key', 'access_token', 'token']) {
    unauthorized(t, await s.req('GET', `/people?${q}=${encodeURIComponent(k.key)}`), `?${q}=`);
  }
  unauthorized(t, await s.req('GET', '/people', { headers: { cookie: `api_key=${k.key}` } }), 'cookie');
  unauthorized(t, await s.req('GET', '/people', { headers: { 'x-api-key': k.key } }), 'X-API-Key header');
  unauthorized(t, await s.req('POST', '/track', { body: { event: 'e', external_id: 'u', api_key: k.key } }), 'key in the body');
});

t.test('an expired key is 401', async (t) => {
  const ws = await newWorkspace(s);
  const expiresAt = Date.now() + 2500;
  const k = await newKey(s, ws, { permissions: ['people:read'], expires_at: new Date(expiresAt).toISOString() });
  passed(t, await call(s, PEOPLE_LIST, ws.id, { token: k.key }), 'before expiry (and now cached)');
  await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 300));
  unauthorized(t, await call(s, PEOPLE_LIST, ws.id, { token: k.key }), 'after expiry');
  unauthorized(t, await call(s, route('POST /track'), ws.id, { token: k.key }), 'after expiry, another route');
  // Clearing the expiry revives the key at once.
  const u = await s.req('PUT', `/workspaces/${ws.id}/api-keys/${k.id}`, { token: ws.token, body: { expires_at: null } });
  t.equal(u.status, 200, u.text);
  passed(t, await call(s, PEOPLE_LIST, ws.id, { token: k.key }), 'after clearing expires_at');
});

t.test('a revoked key is 401 on every key route', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['*'] });
  passed(t, await call(s, PEOPLE_LIST, ws.id, { token: k.key }), 'before revocation');
  const d = await s.req('DELETE', `/workspaces/${ws.id}/api-keys/${k.id}`, { token: ws.token });
  t.equal(d.status, 200, d.text);
  for (const r of KEY_ROUTES) unauthorized(t, await call(s, r, ws.id, { token: k.key }), `${r.id} with a revoked key`);
});

t.test('permission matrix: one route permission per key', async (t) => {
  const ws = await newWorkspace(s);
  const keys = new Map<string, string>();
  for (const p of ROUTE_PERMISSIONS) keys.set(p, (await newKey(s, ws, { name: p, permissions: [p] })).key);
  for (const r of KEY_ROUTES) {
    for (const [p, key] of keys) {
      const res = await call(s, r, ws.id, { token: key });
      if (r.permissions.includes(p)) passed(t, res, `${r.id} with only ${p}`);
      else refused(t, r, res, `${r.id} with only ${p}`);
    }
  }
});

t.test('permission matrix: every route permission except the route\'s own is 403', async (t) => {
  const ws = await newWorkspace(s);
  for (const r of KEY_ROUTES) {
    const unrelated = ROUTE_PERMISSIONS.filter((p) => !r.permissions.includes(p));
    const k = await newKey(s, ws, { name: `all but ${r.id}`, permissions: [...unrelated, ...INERT] });
    refused(t, r, await call(s, r, ws.id, { token: k.key }), `${r.id} with ${unrelated.length} unrelated permissions and the inert names`);
  }
});

t.test('permission matrix: each of a route\'s permissions opens it, also alongside others', async (t) => {
  const ws = await newWorkspace(s);
  for (const r of KEY_ROUTES) {
    for (const p of r.permissions) {
      const k = await newKey(s, ws, { name: `${p} plus`, permissions: ['admin', 'events:list', p] });
      passed(t, await call(s, r, ws.id, { token: k.key }), `${r.id} with ${p} among inert names`);
    }
  }
});

t.test('* opens every key route', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['*'] });
  for (const r of KEY_ROUTES) passed(t, await call(s, r, ws.id, { token: k.key }), `${r.id} with *`);
});

t.test('admin and the other inert names open no key route', async (t) => {
  const ws = await newWorkspace(s);
  const all = await newKey(s, ws, { name: 'all inert', permissions: INERT });
  for (const r of KEY_ROUTES) refused(t, r, await call(s, r, ws.id, { token: all.key }), `${r.id} with every inert name`);
  for (const p of INERT) {
    const k = await newKey(s, ws, { name: p, permissions: [p] });
    for (const r of KEY_ROUTES) refused(t, r, await call(s, r, ws.id, { token: k.key }), `${r.id} with only ${p}`);
  }
});

t.test('people:identify opens only POST /identify', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['people:identify'] });
  for (const r of KEY_ROUTES) {
    const res = await call(s, r, ws.id, { token: k.key });
    if (r.id === 'POST /identify') passed(t, res, r.id);
    else refused(t, r, res, r.id);
  }
});

t.test('devices:register registers and unregisters but does not list', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['devices:register'] });
  passed(t, await call(s, route('POST /people/{id}/devices'), ws.id, { token: k.key }), 'POST devices');
  passed(t, await call(s, route('DELETE /people/{id}/devices'), ws.id, { token: k.key }), 'DELETE devices');
  refused(t, route('GET /people/{id}/devices'), await call(s, route('GET /people/{id}/devices'), ws.id, { token: k.key }), 'GET devices');
  const rd = await newKey(s, ws, { permissions: ['devices:read'] });
  passed(t, await call(s, route('GET /people/{id}/devices'), ws.id, { token: rd.key }), 'devices:read lists');
  refused(t, route('POST /people/{id}/devices'), await call(s, route('POST /people/{id}/devices'), ws.id, { token: rd.key }), 'devices:read cannot register');
  refused(t, route('DELETE /people/{id}/devices'), await call(s, route('DELETE /people/{id}/devices'), ws.id, { token: rd.key }), 'devices:read cannot unregister');
  const wr = await newKey(s, ws, { permissions: ['devices:write'] });
  for (const m of ['POST', 'GET', 'DELETE']) passed(t, await call(s, route(`${m} /people/{id}/devices`), ws.id, { token: wr.key }), `devices:write ${m}`);
});

t.test('a public key reaches only identify, track and device registration', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { key_type: 'public' });
  const open = new Set(['POST /identify', 'POST /track', 'POST /track/batch', 'POST /people/{id}/devices', 'DELETE /people/{id}/devices']);
  for (const r of KEY_ROUTES) {
    const res = await call(s, r, ws.id, { token: k.key });
    if (open.has(r.id)) passed(t, res, `${r.id} with a public key`);
    else refused(t, r, res, `${r.id} with a public key`);
  }
});

t.test('push routes with another workspace in the path are 403', async (t) => {
  const ws = await newWorkspace(s);
  const other = await newWorkspace(s);
  const star = await newKey(s, ws, { permissions: ['*'] });
  const push = await newKey(s, ws, { permissions: ['push:send', 'push:read'] });
  const pushRoutes = KEY_ROUTES.filter((r) => r.path.includes('{workspaceId}'));
  t.ok(pushRoutes.length >= 8, 'the workspace-scoped push routes');
  for (const r of pushRoutes) {
    for (const k of [star, push]) {
      passed(t, await call(s, r, ws.id, { token: k.key }), `${r.id} in the key's own workspace`);
      refused(t, r, await call(s, r, ws.id, { token: k.key, pathWorkspace: other.id }), `${r.id} in another workspace`);
      refused(t, r, await call(s, r, ws.id, { token: k.key, pathWorkspace: randomUUID() }), `${r.id} in an unknown workspace`);
      refused(t, r, await call(s, r, ws.id, { token: k.key, pathWorkspace: 'not-a-uuid' }), `${r.id} with a non-uuid workspace`);
    }
  }
});

t.test('an API key on a session route is 403', async (t) => {
  const ws = await newWorkspace(s);
  const star = await newKey(s, ws, { permissions: ['*'] });
  const pub = await newKey(s, ws, { key_type: 'public' });
  const bogus = 'ws_live_garbage';
  const headers = { 'x-workspace-id': ws.id };
  for (const r of SESSION_ROUTES) {
    const path = r.path
      .replace('{workspaceId}', ws.id)
      .replace('{keyId}', star.id)
      .replace('{userId}', ws.owner)
      .replace('{personId}', randomUUID())
      .replace('{campaignId}', randomUUID());
    const body = r.method === 'GET' || r.method === 'DELETE' ? undefined : { name: 'by a key', permissions: ['*'], trigger_type: 'webhook', trigger_config: {}, user_id: 'x', role: 'admin' };
    for (const [label, token] of [['secret *', star.key], ['public', pub.key], ['malformed key-form', bogus]] as const) {
      const res = await s.req(r.method, path, { token, body, headers });
      t.equal(res.status, 403, `${r.id} with a ${label} key (got ${res.status} ${res.text})`);
      t.same(res.body, FORBIDDEN);
    }
  }
  const ws2 = await s.req('GET', '/workspaces', { token: ws.token });
  t.equal(ws2.status, 200, 'the session still works');
  const l = await s.req('GET', `/workspaces/${ws.id}/api-keys`, { token: ws.token });
  t.equal(l.body.total, 2, 'no key created, none revoked by a key');
  passed(t, await call(s, PEOPLE_LIST, ws.id, { token: star.key }), 'the * key was not refreshed');
});

t.test('IP allowlist, default: a mismatch is logged and let through', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['people:read'], ip_whitelist: ['10.0.0.0/8'] });
  passed(t, await call(s, PEOPLE_LIST, ws.id, { token: k.key }), 'non-matching allowlist, not enforced');
  passed(t, await call(s, PEOPLE_LIST, ws.id, { token: k.key, headers: { 'x-forwarded-for': '10.1.2.3' } }), 'X-Forwarded-For is irrelevant here');
  const logged = await eventually(async () => s.stderr().split('\n').some((l) => l.includes(k.key_prefix) && /allowlist/i.test(l) && /"level":"warn"/.test(l)));
  t.ok(logged, 'a warning naming the key prefix is logged');
  t.notOk(s.stderr().includes(k.key.split('.')[1]!), 'the secret is never logged');
  const bad = await newKey(s, ws, { permissions: ['people:read'], ip_whitelist: ['not-an-ip'] });
  passed(t, await call(s, PEOPLE_LIST, ws.id, { token: bad.key }), 'malformed entry, not enforced');
});

t.test('IP allowlist enforced (HERALD_ENFORCE_IP_ALLOWLIST=true) on the socket address', async (t) => {
  const ws = await newWorkspace(enf);
  const mk = (ip_whitelist: string[], permissions = ['people:read', 'campaigns:trigger']) => newKey(enf, ws, { permissions, ip_whitelist });
  const trigger = route(TRIGGER);

  const ten = await mk(['10.0.0.0/8']);
  refused(t, PEOPLE_LIST, await call(enf, PEOPLE_LIST, ws.id, { token: ten.key }), '10.0.0.0/8 from 127.0.0.1');
  refused(t, trigger, await call(enf, trigger, ws.id, { token: ten.key }), 'trigger, 10.0.0.0/8 from 127.0.0.1');
  refused(t, PEOPLE_LIST, await call(enf, PEOPLE_LIST, ws.id, { token: ten.key, headers: { 'x-forwarded-for': '10.1.2.3' } }), 'X-Forwarded-For is not trusted without trusted proxies');

  passed(t, await call(enf, PEOPLE_LIST, ws.id, { token: (await mk(['127.0.0.0/8'])).key }), '127.0.0.0/8');
  passed(t, await call(enf, PEOPLE_LIST, ws.id, { token: (await mk(['127.0.0.1'])).key }), '127.0.0.1');
  passed(t, await call(enf, PEOPLE_LIST, ws.id, { token: (await mk(['10.0.0.0/8', '127.0.0.1/32'])).key }), 'one matching entry among several');
  passed(t, await call(enf, PEOPLE_LIST, ws.id, { token: (await mk([])).key }), 'no allowlist');

  const bad = await mk(['not-an-ip']);
  refused(t, PEOPLE_LIST, await call(enf, PEOPLE_LIST, ws.id, { token: bad.key }), 'a malformed entry never matches');
  for (const entry of ['127.0.0.1/99', '127.0.0', '127.0.0.0/', '*', '127.0.0.1-127.0.0.2']) {
    refused(t, PEOPLE_LIST, await call(enf, PEOPLE_LIST, ws.id, { token: (await mk([entry])).key }), `malformed entry ${entry}`);
  }
  passed(t, await call(enf, PEOPLE_LIST, ws.id, { token: (await mk(['not-an-ip', '127.0.0.1'])).key }), 'a malformed entry does not spoil a good one');

  // Unauthenticated requests are refused before the allowlist; 401 stays 401.
  unauthorized(t, await call(enf, PEOPLE_LIST, ws.id, { token: `${ten.key.split('.')[0]}.${randomBytes(32).toString('hex')}` }), 'wrong secret on an allowlisted key');

  // A change of allowlist applies at once.
  const u = await enf.req('PUT', `/workspaces/${ws.id}/api-keys/${ten.id}`, { token: ws.token, body: { ip_whitelist: ['127.0.0.1'] } });
  t.equal(u.status, 200, u.text);
  passed(t, await call(enf, PEOPLE_LIST, ws.id, { token: ten.key }), 'after widening the allowlist');
  const u2 = await enf.req('PUT', `/workspaces/${ws.id}/api-keys/${ten.id}`, { token: ws.token, body: { ip_whitelist: ['192.0.2.0/24'] } });
  t.equal(u2.status, 200, u2.text);
  refused(t, PEOPLE_LIST, await call(enf, PEOPLE_LIST, ws.id, { token: ten.key }), 'after narrowing the allowlist');
});

t.test('IP allowlist with HERALD_TRUSTED_PROXIES: the right-most untrusted X-Forwarded-For hop', async (t) => {
  const ws = await newWorkspace(prox);
  const mk = (ip_whitelist: string[]) => newKey(prox, ws, { permissions: ['people:read'], ip_whitelist });
  const doc = await mk(['203.0.113.0/24']);
  const other = await mk(['198.51.100.0/24']);
  const local = await mk(['127.0.0.1']);
  const xff = (v: string) => ({ 'x-forwarded-for': v });

  passed(t, await call(prox, PEOPLE_LIST, ws.id, { token: doc.key, headers: xff('203.0.113.7') }), '203.0.113.7 in 203.0.113.0/24');
  refused(t, PEOPLE_LIST, await call(prox, PEOPLE_LIST, ws.id, { token: other.key, headers: xff('203.0.113.7') }), '203.0.113.7 not in 198.51.100.0/24');
  refused(t, PEOPLE_LIST, await call(prox, PEOPLE_LIST, ws.id, { token: local.key, headers: xff('203.0.113.7') }), 'the proxy address is not the client');
  passed(t, await call(prox, PEOPLE_LIST, ws.id, { token: doc.key, headers: xff('198.51.100.9, 203.0.113.7') }), 'right-most hop wins');
  refused(t, PEOPLE_LIST, await call(prox, PEOPLE_LIST, ws.id, { token: doc.key, headers: xff('203.0.113.7, 198.51.100.9') }), 'a spoofed left-most hop is ignored');
  passed(t, await call(prox, PEOPLE_LIST, ws.id, { token: other.key, headers: xff('203.0.113.7, 198.51.100.9') }), 'right-most hop 198.51.100.9');
  passed(t, await call(prox, PEOPLE_LIST, ws.id, { token: doc.key, headers: xff('203.0.113.7, 127.0.0.1') }), 'trusted hops are skipped');
  refused(t, PEOPLE_LIST, await call(prox, PEOPLE_LIST, ws.id, { token: doc.key }), 'no X-Forwarded-For: the client is the socket peer');
  passed(t, await call(prox, PEOPLE_LIST, ws.id, { token: local.key }), 'no X-Forwarded-For, allowlist 127.0.0.1');
  const bad = await mk(['not-an-ip']);
  refused(t, PEOPLE_LIST, await call(prox, PEOPLE_LIST, ws.id, { token: bad.key, headers: xff('203.0.113.7') }), 'malformed entry never matches');
});

t.test('CORS on the browser-callable routes', async (t) => {
  const ws = await newWorkspace(s);
  const pub = await newKey(s, ws, { key_type: 'public' });
  const pre = await s.req('OPTIONS', '/track', {
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });
  t.equal(pre.status, 204, pre.text);
  t.equal(pre.headers.get('access-control-allow-origin'), '*');
  t.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
  t.match((pre.headers.get('access-control-allow-headers') ?? '').toLowerCase(), /authorization/);
  t.match((pre.headers.get('access-control-allow-headers') ?? '').toLowerCase(), /content-type/);
  for (const p of ['/identify', '/track/batch', '/people/u1/devices']) {
    const r = await s.req('OPTIONS', p, { headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    t.equal(r.status, 204, `preflight ${p}`);
    t.equal(r.headers.get('access-control-allow-origin'), '*', `preflight ${p} allows any origin`);
  }
  const ok = await s.req('POST', '/identify', { token: pub.key, body: { userId: 'u1' }, headers: { origin: 'https://app.example.com' } });
  passed(t, ok, 'identify with a public key');
  t.equal(ok.headers.get('access-control-allow-origin'), '*', 'identify response carries Access-Control-Allow-Origin');
  const denied = await s.req('POST', '/identify', { body: { userId: 'u1' }, headers: { origin: 'https://app.example.com' } });
  t.equal(denied.status, 401);
  t.equal(denied.headers.get('access-control-allow-origin'), '*', 'a 401 on identify is readable by the browser too');
  const tr = await s.req('POST', '/track', { token: pub.key, body: { event: 'e', external_id: 'u1' }, headers: { origin: 'https://app.example.com' } });
  passed(t, tr, 'track with a public key');
  t.equal(tr.headers.get('access-control-allow-origin'), '*', 'track response carries Access-Control-Allow-Origin');
});

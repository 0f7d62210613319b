// API key management (session routes) (README, Routes, Permissions and Errors).
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { newWorkspace, newKey, eventually, uniqueUser, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { FORBIDDEN, INERT, ROUTE_PERMISSIONS } from '../helpers/assert.js';

const s = await sharedServer();

type Ws = { id: string; owner: string; token: string };

const PUBLIC_SET = ['devices:register', 'events:write', 'people:identify'];

const keysPath = (ws: { id: string }) => `/workspaces/${ws.id}/api-keys`;
const sorted = (a: string[]) => [...a].sort();
const shortWs = (ws: { id: string }) => ws.id.replace(/-/g, '').slice(0, 8);

function create(ws: Ws, body: unknown, token = ws.token): Promise<Res> {
  return s.req('POST', keysPath(ws), { token, body });
}

/** The session-route error body (README, Errors). */
function isSessionError(t: Test, r: Res, status: number, code: string): void {
  t.equal(r.status, status, `status ${status}: ${r.text}`);
  t.equal(r.body?.success, false, 'success:false');
  t.equal(r.body?.error?.code, code, `code ${code}`);
  t.type(r.body?.error?.message, 'string', 'error.message is a string');
  t.ok(r.body?.error && 'details' in r.body.error, 'error.details present');
}

async function listKeys(ws: Ws, token = ws.token): Promise<Res> {
  return s.req('GET', keysPath(ws), { token });
}

t.test('create a secret key: 201 with the full key once, prefix format, defaults', async (t) => {
  const ws = await newWorkspace(s);
  const r = await create(ws, { name: 'server key', permissions: ['people:read', 'events:write'], description: 'for the backend' });
  t.equal(r.status, 201, r.text);
  t.equal(r.body.success, true);
  t.type(r.body.warning, 'string', 'a warning to store the key');
  const k = r.body.api_key;
  t.type(k.id, 'string');
  t.match(k.key_prefix, new RegExp(`^ws_live_${shortWs(ws)}_[0-9A-Za-z]{8}$`), 'prefix ws_live_<8 hex of workspace>_<8 base62>');
  t.match(k.key, new RegExp(`^${k.key_prefix}\\.[0-9a-f]{64}$`), 'key is <prefix>.<64 hex>');
  t.same(sorted(k.permissions), ['events:write', 'people:read']);
  t.equal(k.key_type, 'secret', 'key_type defaults to secret');

  const got = await s.req('GET', `${keysPath(ws)}/${k.id}`, { token: ws.token });
  t.equal(got.status, 200, got.text);
  t.equal(got.body.success, true);
  const g = got.body.api_key;
  t.equal(g.id, k.id);
  t.equal(g.key_prefix, k.key_prefix);
  t.equal(g.name, 'server key');
  t.equal(g.description, 'for the backend');
  t.equal(g.key_type, 'secret');
  t.equal(g.environment, 'live', 'environment defaults to live');
  t.equal(g.expires_at, null);
  t.same(g.ip_whitelist, []);
  t.type(g.created_at, 'string');
  t.equal(g.last_used_at, null, 'never used yet');
  t.notOk('key' in g, 'get never returns the key');
  t.notOk(got.text.includes(k.key.split('.')[1]), 'the secret appears nowhere in get');
});

t.test('two keys in one workspace get distinct prefixes and secrets', async (t) => {
  const ws = await newWorkspace(s);
  const a = await newKey(s, ws, { permissions: ['people:read'] });
  const b = await newKey(s, ws, { permissions: ['people:read'] });
  t.not(a.id, b.id);
  t.not(a.key_prefix, b.key_prefix);
  t.not(a.key.split('.')[1], b.key.split('.')[1]);
});

t.test('name is required; permissions required for secret keys', async (t) => {
  const ws = await newWorkspace(s);
  isSessionError(t, await create(ws, { permissions: ['people:read'] }), 400, 'VALIDATION_ERROR');
  isSessionError(t, await create(ws, { name: '', permissions: ['people:read'] }), 400, 'VALIDATION_ERROR');
  isSessionError(t, await create(ws, { name: 'no perms' }), 400, 'VALIDATION_ERROR');
  isSessionError(t, await create(ws, { name: 'empty perms', permissions: [] }), 400, 'VALIDATION_ERROR');
  isSessionError(t, await create(ws, { name: 'explicit secret, no perms', key_type: 'secret' }), 400, 'VALIDATION_ERROR');
  const l = await listKeys(ws);
  t.equal(l.status, 200);
  t.equal(l.body.total, 0, 'nothing was created');
  t.same(l.body.api_keys, []);
});

t.test('wrong types are 400 VALIDATION_ERROR in the session error shape', async (t) => {
  const ws = await newWorkspace(s);
  const bad: Array<[string, Record<string, unknown>]> = [
    ['name number', { name: 42, permissions: ['people:read'] }],
    ['permissions string', { name: 'k', permissions: 'people:read' }],
    ['permissions of numbers', { name: 'k', permissions: [1, 2] }],
    ['key_type unknown', { name: 'k', permissions: ['people:read'], key_type: 'private' }],
    ['environment unknown', { name: 'k', permissions: ['people:read'], environment: 'staging' }],
    ['expires_at not a date', { name: 'k', permissions: ['people:read'], expires_at: 'tomorrow' }],
    ['expires_at number', { name: 'k', permissions: ['people:read'], expires_at: 1893456000 }],
    ['ip_whitelist string', { name: 'k', permissions: ['people:read'], ip_whitelist: '10.0.0.1' }],
    ['description number', { name: 'k', permissions: ['people:read'], description: 7 }],
  ];
  for (const [label, body] of bad) {
    const r = await create(ws, body);
    t.test(label, async (t) => isSessionError(t, r, 400, 'VALIDATION_ERROR'));
  }
  const notJson = await s.req('POST', keysPath(ws), { token: ws.token, raw: '{"name": ', headers: { 'content-type': 'application/json' } });
  t.equal(notJson.status, 400, 'malformed JSON is 400');
  t.equal(notJson.body?.success, false);
  t.equal((await listKeys(ws)).body.total, 0, 'nothing was created');
});

t.test('unknown permission names are 400; every route permission, the 13 inert names and * are accepted', async (t) => {
  const ws = await newWorkspace(s);
  for (const p of ['people:everything', 'admin:*', 'PEOPLE:READ', 'superuser', '']) {
    const r = await create(ws, { name: `bad ${p}`, permissions: ['people:read', p] });
    isSessionError(t, r, 400, 'VALIDATION_ERROR');
  }
  t.equal((await listKeys(ws)).body.total, 0, 'no key created for unknown names');

  const inert = await create(ws, { name: 'inert', permissions: INERT });
  t.equal(inert.status, 201, inert.text);
  t.same(sorted(inert.body.api_key.permissions), sorted(INERT));
  for (const p of INERT) {
    const r = await create(ws, { name: `inert ${p}`, permissions: [p] });
    t.equal(r.status, 201, `${p} alone accepted: ${r.text}`);
  }
  const routes = await create(ws, { name: 'routes', permissions: ROUTE_PERMISSIONS });
  t.equal(routes.status, 201, routes.text);
  t.same(sorted(routes.body.api_key.permissions), sorted(ROUTE_PERMISSIONS));
  const star = await create(ws, { name: 'star', permissions: ['*'] });
  t.equal(star.status, 201, star.text);
  t.same(star.body.api_key.permissions, ['*']);
  t.match(star.body.api_key.key_prefix, /^ws_live_/);
});

t.test('public keys: pk_live_ prefix, default public set, disallowed permissions refused before creation', async (t) => {
  const ws = await newWorkspace(s);
  const dflt = await create(ws, { name: 'app key', key_type: 'public' });
  t.equal(dflt.status, 201, dflt.text);
  const k = dflt.body.api_key;
  t.equal(k.key_type, 'public');
  t.same(sorted(k.permissions), PUBLIC_SET, 'no permissions asked: the public set');
  t.match(k.key_prefix, new RegExp(`^pk_live_${shortWs(ws)}_[0-9A-Za-z]{8}$`));
  t.match(k.key, new RegExp(`^${k.key_prefix}\\.[0-9a-f]{64}$`));

  const empty = await create(ws, { name: 'app key 2', key_type: 'public', permissions: [] });
  t.equal(empty.status, 201, empty.text);
  t.same(sorted(empty.body.api_key.permissions), PUBLIC_SET, 'empty permissions: the public set');

  const subset = await create(ws, { name: 'app key 3', key_type: 'public', permissions: ['events:write'] });
  t.equal(subset.status, 201, subset.text);
  t.same(subset.body.api_key.permissions, ['events:write'], 'a subset of the public set is kept as asked');

  const before = (await listKeys(ws)).body;
  for (const p of ['people:read', 'push:send', 'people:write', 'devices:write', '*', 'admin', 'events:list']) {
    const r = await create(ws, { name: `refused ${p}`, key_type: 'public', permissions: ['events:write', p] });
    isSessionError(t, r, 400, 'PUBLIC_KEY_PERMISSION');
    t.same(sorted(r.body?.error?.details?.allowed ?? []), PUBLIC_SET, `details list the allowed set (${p})`);
    for (const a of PUBLIC_SET) t.ok(String(r.body?.error?.message).includes(a), `message names ${a}`);
  }
  const after = (await listKeys(ws)).body;
  t.equal(after.total, before.total, 'no key was created by a refused request');
  t.notOk(after.api_keys.some((x: { name: string }) => x.name.startsWith('refused')), 'no refused key in the list');
});

t.test('environment is a label: test keys keep the live prefixes', async (t) => {
  const ws = await newWorkspace(s);
  const sec = await create(ws, { name: 'test env', permissions: ['people:read'], environment: 'test' });
  t.equal(sec.status, 201, sec.text);
  t.match(sec.body.api_key.key_prefix, new RegExp(`^ws_live_${shortWs(ws)}_`));
  const pub = await create(ws, { name: 'test env pub', key_type: 'public', environment: 'test' });
  t.equal(pub.status, 201, pub.text);
  t.match(pub.body.api_key.key_prefix, new RegExp(`^pk_live_${shortWs(ws)}_`));
  const got = await s.req('GET', `${keysPath(ws)}/${sec.body.api_key.id}`, { token: ws.token });
  t.equal(got.body.api_key.environment, 'test');
  const use = await s.req('GET', '/people', { token: sec.body.api_key.key });
  t.equal(use.status, 200, 'a test-environment key authenticates like any other');
});

t.test('expires_at: past is 400, future is stored', async (t) => {
  const ws = await newWorkspace(s);
  const past = await create(ws, { name: 'past', permissions: ['people:read'], expires_at: new Date(Date.now() - 60_000).toISOString() });
  isSessionError(t, past, 400, 'VALIDATION_ERROR');
  t.equal((await listKeys(ws)).body.total, 0, 'nothing created');
  const when = new Date(Date.now() + 86_400_000);
  const fut = await create(ws, { name: 'future', permissions: ['people:read'], expires_at: when.toISOString() });
  t.equal(fut.status, 201, fut.text);
  const got = await s.req('GET', `${keysPath(ws)}/${fut.body.api_key.id}`, { token: ws.token });
  t.equal(Date.parse(got.body.api_key.expires_at), when.getTime(), 'expires_at stored');
  const nul = await create(ws, { name: 'null expiry', permissions: ['people:read'], expires_at: null });
  t.equal(nul.status, 201, nul.text);
});

t.test('list: every live key with metadata, never a secret', async (t) => {
  const ws = await newWorkspace(s);
  const a = await newKey(s, ws, { name: 'a', permissions: ['people:read'], ip_whitelist: ['10.0.0.0/8'] });
  const b = await newKey(s, ws, { name: 'b', key_type: 'public' });
  const other = await newWorkspace(s);
  const c = await newKey(s, other, { name: 'c', permissions: ['*'] });
  const r = await listKeys(ws);
  t.equal(r.status, 200, r.text);
  t.equal(r.body.success, true);
  t.equal(r.body.total, 2);
  t.equal(r.body.api_keys.length, 2);
  t.same(sorted(r.body.api_keys.map((k: { id: string }) => k.id)), sorted([a.id, b.id]), 'only this workspace\'s keys');
  for (const k of r.body.api_keys) {
    t.notOk('key' in k, 'no key field');
    t.notOk('secret' in k || 'secret_hash' in k, 'no secret fields');
    for (const f of ['id', 'key_prefix', 'name', 'description', 'permissions', 'key_type', 'environment', 'expires_at', 'ip_whitelist', 'created_at', 'last_used_at']) {
      t.ok(f in k, `list item has ${f}`);
    }
  }
  for (const full of [a.key, b.key, c.key]) t.notOk(r.text.includes(full.split('.')[1]!), 'no secret appears in the list');
  const ka = r.body.api_keys.find((k: { id: string }) => k.id === a.id);
  t.same(ka.ip_whitelist, ['10.0.0.0/8']);
  t.equal(ka.key_prefix, a.key_prefix);
});

t.test('get: unknown id, non-uuid id and another workspace\'s key are 404', async (t) => {
  const ws = await newWorkspace(s);
  const other = await newWorkspace(s);
  const foreign = await newKey(s, other, { permissions: ['people:read'] });
  isSessionError(t, await s.req('GET', `${keysPath(ws)}/${randomUUID()}`, { token: ws.token }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('GET', `${keysPath(ws)}/not-a-uuid`, { token: ws.token }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('GET', `${keysPath(ws)}/${foreign.id}`, { token: ws.token }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('PUT', `${keysPath(ws)}/${foreign.id}`, { token: ws.token, body: { name: 'stolen' } }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('DELETE', `${keysPath(ws)}/${foreign.id}`, { token: ws.token }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('POST', `${keysPath(ws)}/${foreign.id}/refresh`, { token: ws.token }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('GET', `${keysPath(ws)}/${foreign.id}/usage`, { token: ws.token }), 404, 'NOT_FOUND');
  const still = await s.req('GET', '/people', { token: foreign.key });
  t.equal(still.status, 200, 'the foreign key was neither revoked nor refreshed');
  const got = await s.req('GET', `${keysPath(other)}/${foreign.id}`, { token: other.token });
  t.equal(got.body.api_key.name, 'test key', 'and not renamed');
});

t.test('update: partial, revalidated, expires_at omit/set/null', async (t) => {
  const ws = await newWorkspace(s);
  const when = new Date(Date.now() + 86_400_000).toISOString();
  const k = await newKey(s, ws, { name: 'orig', description: 'd0', permissions: ['people:read'], expires_at: when, ip_whitelist: ['10.0.0.1'] });
  const url = `${keysPath(ws)}/${k.id}`;

  const r1 = await s.req('PUT', url, { token: ws.token, body: { name: 'renamed' } });
  t.equal(r1.status, 200, r1.text);
  t.equal(r1.body.success, true);
  const a1 = r1.body.api_key;
  t.equal(a1.name, 'renamed');
  t.equal(a1.description, 'd0', 'description unchanged');
  t.same(a1.permissions, ['people:read'], 'permissions unchanged');
  t.equal(Date.parse(a1.expires_at), Date.parse(when), 'expires_at omitted: unchanged');
  t.same(a1.ip_whitelist, ['10.0.0.1'], 'ip_whitelist unchanged');
  t.equal(a1.environment, 'live');
  t.equal(a1.key_prefix, k.key_prefix);
  t.notOk('key' in a1, 'update does not return the key');

  const r2 = await s.req('PUT', url, { token: ws.token, body: { description: 'd1', environment: 'test', ip_whitelist: ['192.168.0.0/16'], permissions: ['events:read', 'push:read'] } });
  t.equal(r2.status, 200, r2.text);
  t.equal(r2.body.api_key.description, 'd1');
  t.equal(r2.body.api_key.environment, 'test');
  t.same(r2.body.api_key.ip_whitelist, ['192.168.0.0/16']);
  t.same(sorted(r2.body.api_key.permissions), ['events:read', 'push:read']);
  t.equal(r2.body.api_key.name, 'renamed', 'name unchanged');

  const later = new Date(Date.now() + 2 * 86_400_000).toISOString();
  const r3 = await s.req('PUT', url, { token: ws.token, body: { expires_at: later } });
  t.equal(r3.status, 200, r3.text);
  t.equal(Date.parse(r3.body.api_key.expires_at), Date.parse(later), 'expires_at set');

  const r4 = await s.req('PUT', url, { token: ws.token, body: { expires_at: null } });
  t.equal(r4.status, 200, r4.text);
  t.equal(r4.body.api_key.expires_at, null, 'expires_at null clears');

  const got = await s.req('GET', url, { token: ws.token });
  t.equal(got.body.api_key.expires_at, null, 'cleared expiry persisted');
  t.equal(got.body.api_key.name, 'renamed');
  t.same(sorted(got.body.api_key.permissions), ['events:read', 'push:read']);

  isSessionError(t, await s.req('PUT', url, { token: ws.token, body: { expires_at: new Date(Date.now() - 1000).toISOString() } }), 400, 'VALIDATION_ERROR');
  isSessionError(t, await s.req('PUT', url, { token: ws.token, body: { permissions: ['people:read', 'nope:nope'] } }), 400, 'VALIDATION_ERROR');
  isSessionError(t, await s.req('PUT', url, { token: ws.token, body: { permissions: [] } }), 400, 'VALIDATION_ERROR');
  isSessionError(t, await s.req('PUT', url, { token: ws.token, body: { name: 5 } }), 400, 'VALIDATION_ERROR');
  isSessionError(t, await s.req('PUT', url, { token: ws.token, body: { environment: 'prod' } }), 400, 'VALIDATION_ERROR');
  const after = await s.req('GET', url, { token: ws.token });
  t.same(sorted(after.body.api_key.permissions), ['events:read', 'push:read'], 'refused updates changed nothing');
  t.equal(after.body.api_key.environment, 'test');
  t.equal(after.body.api_key.expires_at, null);

  isSessionError(t, await s.req('PUT', `${keysPath(ws)}/${randomUUID()}`, { token: ws.token, body: { name: 'x' } }), 404, 'NOT_FOUND');
});

t.test('update: new permissions apply to the key at once', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['people:read'] });
  t.equal((await s.req('GET', '/people', { token: k.key })).status, 200, 'people:read opens GET /people');
  const u = await s.req('PUT', `${keysPath(ws)}/${k.id}`, { token: ws.token, body: { permissions: ['events:write'] } });
  t.equal(u.status, 200, u.text);
  const r = await s.req('GET', '/people', { token: k.key });
  t.equal(r.status, 403, 'narrowed key refused on the next request');
  t.same(r.body, FORBIDDEN);
  t.equal((await s.req('POST', '/track', { token: k.key, body: { event: 'x', external_id: 'u' } })).status, 201, 'the new permission opens its route');
});

t.test('update: a public key cannot be widened', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { key_type: 'public' });
  const url = `${keysPath(ws)}/${k.id}`;
  for (const p of ['people:read', 'push:send', '*']) {
    const r = await s.req('PUT', url, { token: ws.token, body: { permissions: ['events:write', p] } });
    isSessionError(t, r, 400, 'PUBLIC_KEY_PERMISSION');
    t.same(sorted(r.body?.error?.details?.allowed ?? []), PUBLIC_SET);
  }
  const got = await s.req('GET', url, { token: ws.token });
  t.same(sorted(got.body.api_key.permissions), PUBLIC_SET, 'permissions unchanged');
  t.equal(got.body.api_key.key_type, 'public');
  const narrow = await s.req('PUT', url, { token: ws.token, body: { permissions: ['people:identify'] } });
  t.equal(narrow.status, 200, narrow.text);
  t.same(narrow.body.api_key.permissions, ['people:identify'], 'narrowing within the public set is allowed');
  const denied = await s.req('GET', '/people', { token: k.key });
  t.equal(denied.status, 403, 'the public key still reaches no people read');
});

t.test('revoke: 404 afterwards, gone from list, stops authenticating at once', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['people:read'] });
  const keep = await newKey(s, ws, { name: 'keep', permissions: ['people:read'] });
  const ok = await s.req('GET', '/people', { token: k.key });
  t.equal(ok.status, 200, 'works before revocation (and is now cached)');
  const del = await s.req('DELETE', `${keysPath(ws)}/${k.id}`, { token: ws.token });
  t.equal(del.status, 200, del.text);
  t.equal(del.body.success, true);
  t.type(del.body.message, 'string');
  const next = await s.req('GET', '/people', { token: k.key });
  t.equal(next.status, 401, 'next request with the revoked key is 401');
  t.equal(next.body?.error, 'Unauthorized');
  t.equal(next.body?.message, 'Invalid or expired API key');
  isSessionError(t, await s.req('GET', `${keysPath(ws)}/${k.id}`, { token: ws.token }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('GET', `${keysPath(ws)}/${k.id}/usage`, { token: ws.token }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('POST', `${keysPath(ws)}/${k.id}/refresh`, { token: ws.token }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('PUT', `${keysPath(ws)}/${k.id}`, { token: ws.token, body: { name: 'x' } }), 404, 'NOT_FOUND');
  isSessionError(t, await s.req('DELETE', `${keysPath(ws)}/${k.id}`, { token: ws.token }), 404, 'NOT_FOUND');
  const l = await listKeys(ws);
  t.same(l.body.api_keys.map((x: { id: string }) => x.id), [keep.id], 'only the other key remains');
  t.equal(l.body.total, 1);
  t.equal((await s.req('GET', '/people', { token: keep.key })).status, 200, 'the other key still works');
  isSessionError(t, await s.req('DELETE', `${keysPath(ws)}/not-a-uuid`, { token: ws.token }), 404, 'NOT_FOUND');
});

t.test('refresh: new secret works, old secret is 401 at once; id, prefix and permissions kept', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['people:read', 'events:read'], key_type: 'secret' });
  t.equal((await s.req('GET', '/people', { token: k.key })).status, 200, 'old key works (and is cached)');
  const r = await s.req('POST', `${keysPath(ws)}/${k.id}/refresh`, { token: ws.token });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.success, true);
  const n = r.body.api_key;
  t.equal(n.id, k.id, 'same id');
  t.equal(n.key_prefix, k.key_prefix, 'same prefix');
  t.same(sorted(n.permissions), sorted(k.permissions), 'same permissions');
  t.equal(n.key_type, 'secret');
  t.match(n.key, new RegExp(`^${k.key_prefix}\\.[0-9a-f]{64}$`));
  t.not(n.key, k.key, 'a new secret');
  const old = await s.req('GET', '/people', { token: k.key });
  t.equal(old.status, 401, 'old secret refused on the next request');
  t.same(Object.keys(old.body ?? {}).sort(), ['details', 'error', 'message']);
  t.equal(old.body?.message, 'Invalid or expired API key');
  t.equal((await s.req('GET', '/people', { token: n.key })).status, 200, 'new secret works');
  const l = await listKeys(ws);
  t.equal(l.body.total, 1, 'still one key');
  t.notOk(l.text.includes(n.key.split('.')[1]), 'list does not show the new secret');
  const again = await s.req('POST', `${keysPath(ws)}/${k.id}/refresh`, { token: ws.token });
  t.equal(again.status, 200);
  t.equal((await s.req('GET', '/people', { token: n.key })).status, 401, 'second refresh retires the first refreshed secret');
  t.equal((await s.req('GET', '/people', { token: again.body.api_key.key })).status, 200);
});

t.test('usage: total_requests, by_day, by_route, last_used_at', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['people:read'] });
  const url = `${keysPath(ws)}/${k.id}/usage`;
  const fresh = await s.req('GET', url, { token: ws.token });
  t.equal(fresh.status, 200, fresh.text);
  t.equal(fresh.body.success, true);
  t.equal(fresh.body.usage.key_id, k.id);
  t.equal(fresh.body.usage.total_requests, 0);
  t.equal(fresh.body.usage.last_used_at, null);
  t.same(fresh.body.usage.by_day, []);
  t.same(fresh.body.usage.by_route, {});

  const started = Date.now();
  for (let i = 0; i < 3; i++) t.equal((await s.req('GET', '/people', { token: k.key })).status, 200);
  t.equal((await s.req('GET', '/people/someone', { token: k.key })).status, 404);
  const u = await eventually(async () => {
    const r = await s.req('GET', url, { token: ws.token });
    return r.body?.usage?.total_requests === 4 ? r.body.usage : null;
  });
  t.ok(u, 'usage reaches 4 requests');
  if (!u) return;
  t.equal(u.total_requests, 4);
  t.same(u.by_route, { 'GET /people': 3, 'GET /people/{id}': 1 });
  const today = new Date().toISOString().slice(0, 10);
  t.same(u.by_day, [{ date: today, requests: 4 }]);
  t.type(u.last_used_at, 'string');
  t.ok(Date.parse(u.last_used_at) >= started - 1000 && Date.parse(u.last_used_at) <= Date.now() + 1000, 'last_used_at is about now');
  const got = await eventually(async () => {
    const r = await s.req('GET', `${keysPath(ws)}/${k.id}`, { token: ws.token });
    return r.body?.api_key?.last_used_at ? r.body.api_key : null;
  });
  t.type(got?.last_used_at, 'string', 'get shows last_used_at');

  isSessionError(t, await s.req('GET', `${keysPath(ws)}/${randomUUID()}/usage`, { token: ws.token }), 404, 'NOT_FOUND');
});

t.test('a member may read keys but not create, update, refresh or revoke; an admin may manage', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['people:read'] });
  const member = uniqueUser('member');
  const admin = uniqueUser('admin');
  const m1 = await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: member, role: 'member' } });
  t.equal(m1.status, 201, m1.text);
  const m2 = await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: admin, role: 'admin' } });
  t.equal(m2.status, 201, m2.text);
  const mt = await s.session(member);
  const at = await s.session(admin);

  const c = await create(ws, { name: 'by member', permissions: ['people:read'] }, mt);
  t.equal(c.status, 403, c.text);
  t.same(c.body, FORBIDDEN);
  const d = await s.req('DELETE', `${keysPath(ws)}/${k.id}`, { token: mt });
  t.equal(d.status, 403, d.text);
  t.same(d.body, FORBIDDEN);
  const u = await s.req('PUT', `${keysPath(ws)}/${k.id}`, { token: mt, body: { permissions: ['*'] } });
  t.equal(u.status, 403, u.text);
  t.same(u.body, FORBIDDEN);
  const rf = await s.req('POST', `${keysPath(ws)}/${k.id}/refresh`, { token: mt });
  t.equal(rf.status, 403, rf.text);
  t.same(rf.body, FORBIDDEN);

  const l = await listKeys(ws, mt);
  t.equal(l.status, 200, l.text);
  t.same(l.body.api_keys.map((x: { id: string }) => x.id), [k.id], 'member lists the keys; nothing was created');
  const g = await s.req('GET', `${keysPath(ws)}/${k.id}`, { token: mt });
  t.equal(g.status, 200, g.text);
  t.same(g.body.api_key.permissions, ['people:read'], 'the member\'s update changed nothing');
  t.equal((await s.req('GET', '/people', { token: k.key })).status, 200, 'the key survived the member\'s revoke and refresh');

  const ac = await create(ws, { name: 'by admin', permissions: ['people:read'] }, at);
  t.equal(ac.status, 201, ac.text);
  const ad = await s.req('DELETE', `${keysPath(ws)}/${ac.body.api_key.id}`, { token: at });
  t.equal(ad.status, 200, ad.text);
});

t.test('a non-member gets 403 on every key-management route; no session is 401', async (t) => {
  const ws = await newWorkspace(s);
  const k = await newKey(s, ws, { permissions: ['people:read'] });
  const stranger = await s.session(uniqueUser('stranger'));
  const routes: Array<[string, string, unknown?]> = [
    ['POST', keysPath(ws), { name: 'x', permissions: ['people:read'] }],
    ['GET', keysPath(ws)],
    ['GET', `${keysPath(ws)}/${k.id}`],
    ['PUT', `${keysPath(ws)}/${k.id}`, { name: 'x' }],
    ['DELETE', `${keysPath(ws)}/${k.id}`],
    ['POST', `${keysPath(ws)}/${k.id}/refresh`],
    ['GET', `${keysPath(ws)}/${k.id}/usage`],
  ];
  for (const [method, path, body] of routes) {
    const r = await s.req(method, path, { token: stranger, body });
    t.equal(r.status, 403, `${method} ${path} as a non-member: ${r.text}`);
    t.same(r.body, FORBIDDEN);
    const none = await s.req(method, path, { body });
    t.equal(none.status, 401, `${method} ${path} without a session`);
    t.equal(none.body?.error, 'Unauthorized');
    t.equal(none.body?.message, 'Invalid or expired session token');
    t.type(none.body?.details, 'string');
    const expired = await s.req(method, path, { token: await s.session(ws.owner, { ttlSeconds: -60 }), body });
    t.equal(expired.status, 401, `${method} ${path} with an expired session`);
    const forged = await s.req(method, path, { token: await s.session(ws.owner, { secret: 'not-the-secret-0123456789abcdefgh' }), body });
    t.equal(forged.status, 401, `${method} ${path} with a session signed by another secret`);
  }
  // A workspace that does not exist is indistinguishable from one the caller is not in.
  const ghost = { id: randomUUID() };
  const r = await s.req('GET', keysPath(ghost), { token: stranger });
  t.equal(r.status, 403);
  t.same(r.body, FORBIDDEN);
  const r2 = await s.req('POST', keysPath(ghost), { token: stranger, body: { name: 'x', permissions: ['*'] } });
  t.equal(r2.status, 403);
  t.same(r2.body, FORBIDDEN);
  const still = await s.req('GET', '/people', { token: k.key });
  t.equal(still.status, 200, 'the key was not touched by the stranger');
  const l = await listKeys(ws);
  t.same(l.body.api_keys.map((x: { id: string; name: string }) => [x.id, x.name]), [[k.id, 'test key']]);
});

t.test('an API key on a key-management route gets 403', async (t) => {
  const ws = await newWorkspace(s);
  const star = await newKey(s, ws, { name: 'star', permissions: ['*'] });
  const pub = await newKey(s, ws, { name: 'pub', key_type: 'public' });
  const routes: Array<[string, string, unknown?]> = [
    ['POST', keysPath(ws), { name: 'made by a key', permissions: ['*'] }],
    ['GET', keysPath(ws)],
    ['GET', `${keysPath(ws)}/${star.id}`],
    ['PUT', `${keysPath(ws)}/${star.id}`, { name: 'x' }],
    ['DELETE', `${keysPath(ws)}/${pub.id}`],
    ['POST', `${keysPath(ws)}/${star.id}/refresh`],
    ['GET', `${keysPath(ws)}/${star.id}/usage`],
  ];
  for (const key of [star, pub]) {
    for (const [method, path, body] of routes) {
      const r = await s.req(method, path, { token: key.key, body });
      t.equal(r.status, 403, `${method} ${path} with ${key.key_prefix}: ${r.text}`);
      t.same(r.body, FORBIDDEN);
    }
  }
  const l = await listKeys(ws);
  t.equal(l.body.total, 2, 'no key was created, none revoked');
  t.equal((await s.req('GET', '/people', { token: star.key })).status, 200, 'the wildcard key was not refreshed');
});

t.test('a removed member loses access to the keys at once', async (t) => {
  const ws = await newWorkspace(s);
  const admin = uniqueUser('admin');
  const add = await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: admin, role: 'admin' } });
  t.equal(add.status, 201, add.text);
  const at = await s.session(admin);
  t.equal((await listKeys(ws, at)).status, 200, 'the admin lists keys');
  const rm = await s.req('DELETE', `/workspaces/${ws.id}/members/${admin}`, { token: ws.token });
  t.equal(rm.status, 200, rm.text);
  const l = await listKeys(ws, at);
  t.equal(l.status, 403, l.text);
  t.same(l.body, FORBIDDEN);
  const c = await create(ws, { name: 'after removal', permissions: ['people:read'] }, at);
  t.equal(c.status, 403, c.text);
  t.same(c.body, FORBIDDEN);
  t.equal((await listKeys(ws)).body.total, 0, 'nothing was created');
});

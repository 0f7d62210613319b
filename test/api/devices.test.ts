// Device tokens through the real HTTP server (README, Routes, Request bodies and Errors).
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { newKey, workspaceWithKeys, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { UUID, ISO_MS, FORBIDDEN, keyError, badRequest } from '../helpers/assert.js';

const s = await sharedServer();

const DEVICE_FIELDS = [
  'app_version', 'created_at', 'device_model', 'device_name', 'device_token', 'id', 'is_active', 'is_valid',
  'last_used_at', 'os_version', 'person_id', 'platform', 'registration_count', 'updated_at', 'workspace_id',
];

const setup = () => workspaceWithKeys(s, { all: ['*'], write: ['devices:write'] });
type Setup = Awaited<ReturnType<typeof setup>>;

const sorted = (a: string[]) => [...a].sort();
const enc = encodeURIComponent;
let tokenSeq = 0;
/** A device token unique in this run (tokens are unique per workspace; workspaces are fresh anyway). */
const tok = (label = 'tok') => `${label}-${process.pid}-${Date.now().toString(36)}-${tokenSeq++}`.padEnd(12, 'x');

function register(token: string, externalId: string, body: unknown): Promise<Res> {
  return s.req('POST', `/people/${enc(externalId)}/devices`, { token, body });
}
function devices(token: string, externalId: string): Promise<Res> {
  return s.req('GET', `/people/${enc(externalId)}/devices`, { token });
}
function unregister(token: string, externalId: string, deviceToken: string, via: 'body' | 'query' = 'body'): Promise<Res> {
  return via === 'body'
    ? s.req('DELETE', `/people/${enc(externalId)}/devices`, { token, body: { token: deviceToken } })
    : s.req('DELETE', `/people/${enc(externalId)}/devices?token=${enc(deviceToken)}`, { token });
}

async function personOf(k: Setup, externalId: string): Promise<Res> {
  return s.req('GET', `/people/${enc(externalId)}`, { token: k.all });
}

t.test('register for an unknown person: 201, person_created, the person exists afterwards', async (t) => {
  const k = await setup();
  t.equal((await personOf(k, 'newcomer')).status, 404, 'unknown before');
  const token = tok();
  const r = await register(k.write, 'newcomer', { token, platform: 'android', device_name: 'Pixel', device_model: 'Pixel 8', os_version: '14', app_version: '1.0.0' });
  t.equal(r.status, 201, r.text);
  t.equal(r.body.success, true);
  t.match(r.body.device_id, UUID);
  t.type(r.body.message, 'string');
  t.equal(r.body.person_created, true);
  t.same(sorted(Object.keys(r.body)), ['device_id', 'message', 'person_created', 'success']);

  const p = await personOf(k, 'newcomer');
  t.equal(p.status, 200, 'the person was created');
  t.equal(p.body.person.userId, 'newcomer');
  t.equal(p.body.person.status, 'active');
  t.same(p.body.person.traits, {});

  const l = await devices(k.write, 'newcomer');
  t.equal(l.status, 200, l.text);
  t.equal(l.body.success, true);
  t.equal(l.body.count, 1);
  t.equal(l.body.devices.length, 1);
  const d = l.body.devices[0];
  t.same(sorted(Object.keys(d)), DEVICE_FIELDS, 'the documented Device fields');
  t.equal(d.id, r.body.device_id);
  t.equal(d.workspace_id, k.ws.id);
  t.equal(d.person_id, p.body.person.id, 'person_id is the person UUID');
  t.equal(d.device_token, token, 'returned as device_token');
  t.equal(d.platform, 'android');
  t.equal(d.device_name, 'Pixel');
  t.equal(d.device_model, 'Pixel 8');
  t.equal(d.os_version, '14');
  t.equal(d.app_version, '1.0.0');
  t.equal(d.is_active, true);
  t.equal(d.is_valid, true);
  t.equal(d.registration_count, 1);
  for (const f of ['last_used_at', 'created_at', 'updated_at']) t.match(d[f], ISO_MS, `${f} ISO 8601 with ms`);
});

t.test('register for a known person: 201 without person_created', async (t) => {
  const k = await setup();
  const idr = await s.req('POST', '/identify', { token: k.all, body: { userId: 'known', traits: { a: 1 } } });
  t.equal(idr.status, 200);
  const r = await register(k.write, 'known', { token: tok(), platform: 'ios' });
  t.equal(r.status, 201, r.text);
  t.equal(r.body.success, true);
  t.notOk('person_created' in r.body, 'person_created absent');
  t.same(sorted(Object.keys(r.body)), ['device_id', 'message', 'success']);
  const p = await personOf(k, 'known');
  t.equal(p.body.person.id, idr.body.person.id, 'same person');
  t.same(p.body.person.traits, { a: 1 }, 'traits untouched');

  // A second device for a person created by the first registration.
  const first = await register(k.write, 'second-dev', { token: tok(), platform: 'web' });
  t.equal(first.body.person_created, true);
  const second = await register(k.write, 'second-dev', { token: tok(), platform: 'web' });
  t.equal(second.status, 201);
  t.notOk('person_created' in second.body, 'only the first call created the person');
  t.equal((await devices(k.write, 'second-dev')).body.count, 2);
});

t.test('re-posting a token: 200, same record, registration_count 2, fields updated', async (t) => {
  const k = await setup();
  const token = tok();
  const a = await register(k.write, 'repost', { token, platform: 'android', device_name: 'Old name', app_version: '1.0.0', os_version: '13' });
  t.equal(a.status, 201);
  const before = (await devices(k.write, 'repost')).body.devices[0];

  const b = await register(k.write, 'repost', { token, platform: 'android', device_name: 'New name', app_version: '2.0.0' });
  t.equal(b.status, 200, b.text);
  t.equal(b.body.success, true);
  t.equal(b.body.device_id, a.body.device_id, 'the same device');
  t.type(b.body.message, 'string');
  t.notOk('person_created' in b.body);

  const l = await devices(k.write, 'repost');
  t.equal(l.body.count, 1, 'still one device');
  const d = l.body.devices[0];
  t.equal(d.registration_count, 2);
  t.equal(d.device_name, 'New name', 'device_name updated');
  t.equal(d.app_version, '2.0.0', 'app_version updated');
  t.equal(d.created_at, before.created_at, 'created_at kept');
  t.ok(d.last_used_at >= before.last_used_at, 'last_used_at not older');
  t.ok(d.updated_at >= before.updated_at, 'updated_at not older');

  const c = await register(k.write, 'repost', { token, platform: 'android' });
  t.equal(c.status, 200);
  t.equal((await devices(k.write, 'repost')).body.devices[0].registration_count, 3, 'counts every registration');
});

t.test('the same token registered for another person moves to that person', async (t) => {
  const k = await setup();
  const token = tok();
  const a = await register(k.write, 'owner-a', { token, platform: 'ios', device_name: 'Phone' });
  t.equal(a.status, 201);
  const other = await register(k.write, 'owner-a', { token: tok(), platform: 'ios' });
  t.equal(other.status, 201);

  const b = await register(k.write, 'owner-b', { token, platform: 'ios' });
  t.equal(b.status, 200, `already registered in the workspace: ${b.text}`);
  t.equal(b.body.device_id, a.body.device_id, 'the same record');
  t.equal(b.body.person_created, true, 'owner-b was created by this call');

  const la = await devices(k.write, 'owner-a');
  t.equal(la.body.count, 1, 'owner-a keeps only the other device');
  t.notOk(la.body.devices.some((d: { device_token: string }) => d.device_token === token), 'the token left owner-a');
  const lb = await devices(k.write, 'owner-b');
  t.equal(lb.body.count, 1);
  t.equal(lb.body.devices[0].device_token, token);
  t.equal(lb.body.devices[0].person_id, (await personOf(k, 'owner-b')).body.person.id);
  t.equal(lb.body.devices[0].registration_count, 2);
  t.equal(lb.body.devices[0].is_active, true);

  // Unregistering through the old owner no longer finds it.
  keyError(t, await unregister(k.write, 'owner-a', token), 404, 'NOT_FOUND');
  t.equal((await devices(k.write, 'owner-b')).body.devices[0].is_active, true, 'still active for owner-b');
});

t.test('validation: token length, platform, refused fields, subscription objects', async (t) => {
  const k = await setup();
  badRequest(t, await register(k.write, 'val', { token: 'x'.repeat(9), platform: 'android' }), 'token');
  badRequest(t, await register(k.write, 'val', { token: 'x'.repeat(4097), platform: 'android' }), 'token');
  badRequest(t, await register(k.write, 'val', { platform: 'android' }), 'token');
  badRequest(t, await register(k.write, 'val', { token: 12345678901, platform: 'android' }), 'token');
  badRequest(t, await register(k.write, 'val', { token: tok(), platform: 'windows' }), 'platform');
  badRequest(t, await register(k.write, 'val', { token: tok(), platform: 'huawei' }), 'platform');
  badRequest(t, await register(k.write, 'val', { token: tok(), platform: 'IOS' }), 'platform');
  badRequest(t, await register(k.write, 'val', { token: tok() }), 'platform');
  badRequest(t, await register(k.write, 'val', { token: tok(), platform: 'ios', person_id: '0190c8a0-0000-7000-8000-000000000000' }), 'person_id');
  badRequest(t, await register(k.write, 'val', { token: tok(), platform: 'ios', workspace_id: k.ws.id }), 'workspace_id');
  badRequest(t, await register(k.write, 'val', { token: { endpoint: 'https://push.example.com/x', keys: { p256dh: 'a', auth: 'b' } }, platform: 'web' }), 'token');
  badRequest(t, await register(k.write, 'val', { token: '{"endpoint":"https://x","keys":{}}', platform: 'web' }), 'token');
  badRequest(t, await register(k.write, 'val', { token: ' {"endpoint":"https://push.example.com/abc"}', platform: 'web' }), 'token');
  const malformed = await s.req('POST', '/people/val/devices', { token: k.write, raw: '{"token":', headers: { 'content-type': 'application/json' } });
  t.equal(malformed.status, 400, 'malformed JSON');
  t.equal((await personOf(k, 'val')).status, 404, 'no rejected registration created the person');

  const min = 'm'.repeat(10);
  const max = 'M'.repeat(4096);
  const a = await register(k.write, 'val', { token: min, platform: 'android' });
  t.equal(a.status, 201, `10 characters: ${a.text}`);
  const b = await register(k.write, 'val', { token: max, platform: 'web' });
  t.equal(b.status, 201, `4,096 characters: ${b.text.slice(0, 200)}`);
  const l = await devices(k.write, 'val');
  t.same(sorted(l.body.devices.map((d: { device_token: string }) => d.device_token)), sorted([min, max]), 'both stored verbatim');
});

t.test('a 4,096-character token that does not compress is stored: registered (201), re-registered (200), unregistered', async (t) => {
  const k = await setup();
  // Random base64 and CJK text: more bytes than a btree index entry holds (2,704), found by the fuzz test.
  const base64 = randomBytes(3072).toString('base64').slice(0, 4096);
  const cjk = Array.from({ length: 4096 }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20_000))).join('');
  for (const [label, deviceToken] of [['base64', base64], ['CJK', cjk]] as const) {
    const first = await register(k.all, 'big-token', { token: deviceToken, platform: 'web' });
    t.equal(first.status, 201, `${label}: ${first.text.slice(0, 200)}`);
    const again = await register(k.all, 'big-token', { token: deviceToken, platform: 'web' });
    t.equal(again.status, 200, `${label}: the same token again`);
    t.equal(again.body.device_id, first.body.device_id, `${label}: one record`);
    const listed = await devices(k.all, 'big-token');
    t.equal(listed.body.devices.find((d: { id: string }) => d.id === first.body.device_id)?.device_token, deviceToken, `${label}: read back exactly`);
    t.equal((await unregister(k.all, 'big-token', deviceToken)).status, 200, `${label}: unregistered`);
  }
  const other = await register(k.all, 'big-token', { token: base64.slice(0, 4095) + (base64.endsWith('A') ? 'B' : 'A'), platform: 'web' });
  t.equal(other.status, 201, 'a token differing in its last character is another device');
});

t.test('the external id in the path is a userId: at most 255 characters', async (t) => {
  const k = await setup();
  const ok = 'e'.repeat(255);
  const r = await register(k.write, ok, { token: tok('len'), platform: 'ios' });
  t.equal(r.status, 201, '255 characters');
  t.equal(r.body.person_created, true);
  const long = 'e'.repeat(256);
  const bad = await register(k.write, long, { token: tok('len'), platform: 'ios' });
  t.equal(bad.status, 400, `a 256-character userId is refused (README, Request bodies): ${bad.text.slice(0, 200)}`);
  t.equal((await personOf(k, long)).status, 404, 'no person with a 256-character userId is created');
});

t.test('concurrent registrations: one person, one record per token', async (t) => {
  const k = await setup();
  const tokens = Array.from({ length: 5 }, () => tok('conc'));
  const rs = await Promise.all(tokens.map((token) => register(k.write, 'conc-new', { token, platform: 'android' })));
  for (const r of rs) t.equal(r.status, 201, r.text);
  t.equal(rs.filter((r) => r.body.person_created === true).length, 1, 'exactly one call created the person');
  t.equal((await devices(k.write, 'conc-new')).body.count, 5);

  const same = tok('conc-same');
  const rs2 = await Promise.all(Array.from({ length: 5 }, () => register(k.write, 'conc-new', { token: same, platform: 'android' })));
  t.same(rs2.map((r) => r.status).sort(), [200, 200, 200, 200, 201], 'one 201, the rest 200');
  t.equal(new Set(rs2.map((r) => r.body.device_id)).size, 1, 'one record');
  const d = (await devices(k.write, 'conc-new')).body.devices.find((x: { device_token: string }) => x.device_token === same);
  t.equal(d.registration_count, 5, 'every registration counted');
});

t.test('concurrent registrations of many people (written together): each token with its person, each person created once', async (t) => {
  const k = await setup();
  const calls = Array.from({ length: 20 }, (_, i) => ({ user: `group-${i % 10}`, token: tok(`group-${i}`) }));
  const rs = await Promise.all(calls.map((c) => register(k.write, c.user, { token: c.token, platform: 'android' })));
  t.same(rs.map((r) => r.status), Array(20).fill(201));
  t.equal(new Set(rs.map((r) => r.body.device_id)).size, 20, 'twenty records');
  for (let p = 0; p < 10; p++) {
    const mine = rs.filter((_, i) => calls[i]!.user === `group-${p}`);
    t.equal(mine.filter((r) => r.body.person_created === true).length, 1, `group-${p} created once`);
    const listed = (await devices(k.write, `group-${p}`)).body.devices.map((d: { device_token: string }) => d.device_token).sort();
    t.same(listed, calls.filter((c) => c.user === `group-${p}`).map((c) => c.token).sort(), `group-${p} holds its two tokens`);
  }
  const shared = tok('group-shared');
  const moved = await Promise.all(Array.from({ length: 4 }, (_, i) => register(k.write, `group-${i}`, { token: shared, platform: 'ios' })));
  t.same(moved.map((r) => r.status).sort(), [200, 200, 200, 201], 'one token registered by four people at once: one record');
  const owners = await Promise.all(Array.from({ length: 4 }, async (_, i) => (await devices(k.write, `group-${i}`)).body.devices.filter((d: { device_token: string }) => d.device_token === shared)));
  t.equal(owners.flat().length, 1, 'held by exactly one person');
  t.equal(owners.flat()[0].registration_count, 4);
});

t.test('registration racing a delete of the same person: never a 5xx (the device goes with the person, or the person is created again)', async (t) => {
  const k = await setup();
  const statuses = new Set<number>();
  for (let i = 0; i < 40; i++) {
    const user = `race-${i}`;
    await register(k.all, user, { token: tok('race'), platform: 'ios' });
    const [reg, del] = await Promise.all([register(k.all, user, { token: tok('race'), platform: 'ios' }), s.req('DELETE', `/people/${user}`, { token: k.all })]);
    statuses.add(reg.status);
    t.ok(reg.status === 201, `registration ${i}: ${reg.status} ${reg.text.slice(0, 200)}`);
    t.equal(del.status, 200, `delete ${i}`);
  }
  t.comment(`registration statuses: ${[...statuses].join(', ')}`);
});

t.test('GET devices: ordered by last_used_at desc; unknown person 404', async (t) => {
  const k = await setup();
  const [t1, t2, t3] = [tok('one'), tok('two'), tok('three')];
  for (const token of [t1, t2, t3]) t.equal((await register(k.write, 'order', { token, platform: 'android' })).status, 201);
  const order = async () => (await devices(k.write, 'order')).body.devices.map((d: { device_token: string }) => d.device_token);
  t.same(await order(), [t3, t2, t1], 'most recently used first');
  t.equal((await register(k.write, 'order', { token: t1, platform: 'android' })).status, 200);
  t.same(await order(), [t1, t3, t2], 're-registering makes a device the most recent');
  const l = await devices(k.write, 'order');
  t.equal(l.body.count, 3, 'count is the number of devices');
  const times = l.body.devices.map((d: { last_used_at: string }) => d.last_used_at);
  t.same(times, [...times].sort().reverse(), 'last_used_at descending');

  keyError(t, await devices(k.write, 'nobody-here'), 404, 'PERSON_NOT_FOUND');
  t.equal((await personOf(k, 'nobody-here')).status, 404, 'GET does not create the person');

  // A known person without devices: an empty list.
  await s.req('POST', '/identify', { token: k.all, body: { userId: 'deviceless' } });
  const e = await devices(k.write, 'deviceless');
  t.equal(e.status, 200);
  t.same(e.body, { success: true, devices: [], count: 0 });
});

t.test('DELETE devices: body {token} or ?token=, then is_active:false', async (t) => {
  const k = await setup();
  const [a, b] = [tok('del-a'), tok('del-b')];
  await register(k.write, 'unreg', { token: a, platform: 'ios' });
  await register(k.write, 'unreg', { token: b, platform: 'android' });

  const r = await unregister(k.write, 'unreg', a, 'body');
  t.equal(r.status, 200, r.text);
  t.equal(r.body.success, true);
  t.type(r.body.message, 'string');
  t.same(sorted(Object.keys(r.body)), ['message', 'success']);
  const q = await unregister(k.write, 'unreg', b, 'query');
  t.equal(q.status, 200, q.text);
  t.equal(q.body.success, true);
  t.type(q.body.message, 'string');

  const l = await devices(k.write, 'unreg');
  t.equal(l.body.count, 2, 'unregistered devices are still listed');
  for (const d of l.body.devices) t.equal(d.is_active, false, `${d.device_token} inactive`);

  // Re-registering re-activates.
  const re = await register(k.write, 'unreg', { token: a, platform: 'ios' });
  t.equal(re.status, 200);
  const l2 = await devices(k.write, 'unreg');
  t.equal(l2.body.devices.find((d: { device_token: string }) => d.device_token === a).is_active, true, 're-activated');
  t.equal(l2.body.devices.find((d: { device_token: string }) => d.device_token === b).is_active, false, 'the other stays inactive');

  keyError(t, await unregister(k.write, 'unreg', 'never-registered-token'), 404, 'NOT_FOUND');
  keyError(t, await unregister(k.write, 'unreg', 'never-registered-token', 'query'), 404, 'NOT_FOUND');
  t.equal((await unregister(k.write, 'no-such-person', a)).status, 404, 'unknown person');
  t.equal((await personOf(k, 'no-such-person')).status, 404, 'DELETE does not create the person');
  const missing = await s.req('DELETE', '/people/unreg/devices', { token: k.write });
  t.equal(missing.status, 400, 'no token at all');
});

t.test('permissions: register, read, write, public key', async (t) => {
  const k = await setup();
  const [reg, read, pub, people] = await Promise.all([
    newKey(s, k.ws, { permissions: ['devices:register'] }),
    newKey(s, k.ws, { permissions: ['devices:read'] }),
    newKey(s, k.ws, { key_type: 'public' }),
    newKey(s, k.ws, { permissions: ['people:write', 'people:read'] }),
  ]);
  t.same(sorted(pub.permissions), ['devices:register', 'events:write', 'people:identify'], 'public key with the default set');

  // devices:register registers and unregisters, cannot list.
  const t1 = tok('reg');
  const r1 = await register(reg.key, 'perm', { token: t1, platform: 'ios' });
  t.equal(r1.status, 201, r1.text);
  const g1 = await devices(reg.key, 'perm');
  t.equal(g1.status, 403, 'devices:register cannot list');
  t.same(g1.body, FORBIDDEN);
  const d1 = await unregister(reg.key, 'perm', t1);
  t.equal(d1.status, 200, 'devices:register unregisters');

  // devices:read lists only.
  const g2 = await devices(read.key, 'perm');
  t.equal(g2.status, 200, 'devices:read lists');
  t.equal(g2.body.count, 1);
  const r2 = await register(read.key, 'perm', { token: tok('read'), platform: 'ios' });
  t.equal(r2.status, 403, 'devices:read cannot register');
  t.same(r2.body, FORBIDDEN);
  const d2 = await unregister(read.key, 'perm', t1);
  t.equal(d2.status, 403, 'devices:read cannot unregister');
  t.same(d2.body, FORBIDDEN);

  // devices:write does all three.
  const t3 = tok('write');
  t.equal((await register(k.write, 'perm', { token: t3, platform: 'android' })).status, 201);
  t.equal((await devices(k.write, 'perm')).status, 200);
  t.equal((await unregister(k.write, 'perm', t3, 'query')).status, 200);

  // A public key registers (and may unregister) but cannot list.
  const t4 = tok('pub');
  const r4 = await register(pub.key, 'perm-public', { token: t4, platform: 'web' });
  t.equal(r4.status, 201, r4.text);
  t.equal(r4.body.person_created, true);
  const g4 = await devices(pub.key, 'perm-public');
  t.equal(g4.status, 403);
  t.same(g4.body, FORBIDDEN);
  t.equal((await unregister(pub.key, 'perm-public', t4)).status, 200, 'public key unregisters');

  // People permissions do not reach devices.
  const r5 = await register(people.key, 'perm', { token: tok('people'), platform: 'ios' });
  t.equal(r5.status, 403);
  t.equal((await devices(people.key, 'perm')).status, 403);
  t.equal((await unregister(people.key, 'perm', t1)).status, 403);

  const l = await devices(k.all, 'perm');
  t.equal(l.body.count, 2, 'nothing registered by a refused call');
});

t.test("one workspace's devices are invisible to another", async (t) => {
  const a = await setup();
  const b = await setup();
  const token = tok('iso');
  const r = await register(a.write, 'iso-user', { token, platform: 'ios' });
  t.equal(r.status, 201);

  keyError(t, await devices(b.write, 'iso-user'), 404, 'PERSON_NOT_FOUND');
  t.equal((await unregister(b.write, 'iso-user', token)).status, 404, "B cannot unregister A's device");
  t.equal((await devices(a.write, 'iso-user')).body.devices[0].is_active, true, 'still active in A');

  // The same token and external id in B are B's own records.
  const rb = await register(b.write, 'iso-user', { token, platform: 'android' });
  t.equal(rb.status, 201, `a new record in B: ${rb.text}`);
  t.equal(rb.body.person_created, true, "B's own person");
  t.not(rb.body.device_id, r.body.device_id);
  const la = await devices(a.write, 'iso-user');
  t.equal(la.body.count, 1);
  t.equal(la.body.devices[0].platform, 'ios', "A's record untouched");
  t.equal(la.body.devices[0].registration_count, 1);
  t.equal(la.body.devices[0].workspace_id, a.ws.id);
  const lb = await devices(b.write, 'iso-user');
  t.equal(lb.body.devices[0].workspace_id, b.ws.id);
  t.not(lb.body.devices[0].person_id, la.body.devices[0].person_id);

  // Moving a token to another person in B does not touch A.
  t.equal((await register(b.write, 'iso-other', { token, platform: 'android' })).status, 200);
  t.equal((await devices(a.write, 'iso-user')).body.count, 1, 'A still has its device');
});

// Token suppression and validation through the real HTTP server
// (README, Routes, Request bodies and Errors).
import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { newKey, workspaceWithKeys, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { UUID, ISO_MS, FORBIDDEN, keyError, badRequest } from '../helpers/assert.js';

const s = await sharedServer();

const setup = () => workspaceWithKeys(s, { push: ['push:send'], devices: ['devices:write'], all: ['*'] });
type Setup = Awaited<ReturnType<typeof setup>>;

const TYPES = ['uninstalled', 'disabled', 'invalid_token', 'opt_out'];
const PLATFORMS = ['ios', 'android', 'web', 'huawei'];
const sorted = (a: string[]) => [...a].sort();

/** A random APNs-shaped token (64 hex characters). */
const iosToken = () => randomBytes(32).toString('hex');
/** A random FCM-shaped token. */
const fcmToken = () => `fcm:${randomBytes(24).toString('base64url')}`;
const masked = (token: string) => `${token.slice(0, 4)}***${token.slice(-4)}`;

const path = (ws: string, rest: string) => `/workspaces/${ws}/push/tokens/${rest}`;
function suppress(key: string, ws: string, body: unknown): Promise<Res> {
  return s.req('POST', path(ws, 'suppress'), { token: key, body });
}
function lift(key: string, ws: string, id: string): Promise<Res> {
  return s.req('DELETE', path(ws, `suppress/${encodeURIComponent(id)}`), { token: key });
}
function validate(key: string, ws: string, tokens: unknown): Promise<Res> {
  return s.req('POST', path(ws, 'validate'), { token: key, body: { tokens } });
}
function register(k: Setup, externalId: string, token: string, platform: string): Promise<Res> {
  return s.req('POST', `/people/${externalId}/devices`, { token: k.devices, body: { token, platform } });
}
/** The documented reason (README, Request bodies) for one token in the key's workspace (undefined when valid). */
async function reasonOf(k: Setup, token: string, platform: string): Promise<string | undefined> {
  const r = await validate(k.push, k.ws.id, [{ token, platform }]);
  if (r.status !== 200) throw new Error(`validate: ${r.status} ${r.text}`);
  return r.body.results[0].reason;
}

t.test('suppress: 201 new, 200 already_suppressed under the same type, 201 under another type', async (t) => {
  const k = await setup();
  const token = iosToken();
  const first = await suppress(k.push, k.ws.id, { device_token: token, platform: 'ios', suppression_type: 'uninstalled', reason: 'app removed' });
  t.equal(first.status, 201, first.text);
  t.equal(first.body.success, true);
  const sup = first.body;
  t.same(sorted(Object.keys(sup)), ['already_suppressed', 'device_token', 'id', 'platform', 'success', 'suppressed_at', 'suppression_type'], 'the record at the top level, no wrapper (README, Routes)');
  t.match(sup.id, UUID);
  t.equal(sup.device_token, masked(token), 'first 4 + *** + last 4');
  t.equal(sup.platform, 'ios');
  t.equal(sup.suppression_type, 'uninstalled');
  t.match(sup.suppressed_at, ISO_MS);
  t.equal(sup.already_suppressed, false);
  t.notOk(first.text.includes(token), 'the raw token is not echoed');

  const again = await suppress(k.push, k.ws.id, { device_token: token, platform: 'ios', suppression_type: 'uninstalled' });
  t.equal(again.status, 200, again.text);
  t.equal(again.body.already_suppressed, true);
  t.equal(again.body.id, sup.id, 'the same suppression');
  t.equal(again.body.suppressed_at, sup.suppressed_at, 'suppressed when it first was');
  t.equal(again.body.device_token, masked(token));
  t.notOk(again.text.includes(token), 'the raw token is not echoed');

  const other = await suppress(k.push, k.ws.id, { device_token: token, platform: 'ios', suppression_type: 'opt_out' });
  t.equal(other.status, 201, `another type is a new suppression: ${other.text}`);
  t.equal(other.body.already_suppressed, false);
  t.equal(other.body.suppression_type, 'opt_out');
  t.not(other.body.id, sup.id);

  // Each of the four types and platforms is accepted.
  for (const [i, type] of TYPES.entries()) {
    const r = await suppress(k.all, k.ws.id, { device_token: fcmToken(), platform: PLATFORMS[i], suppression_type: type, source_campaign_id: randomUUID() });
    t.equal(r.status, 201, `${type} on ${PLATFORMS[i]}: ${r.text}`);
    t.equal(r.body.platform, PLATFORMS[i]);
  }
});

t.test('suppress: a token under 12 characters is shown as ***', async (t) => {
  const k = await setup();
  for (const token of ['short-tok1', 'short-tok12']) {
    const r = await suppress(k.push, k.ws.id, { device_token: token, platform: 'android', suppression_type: 'disabled' });
    t.equal(r.status, 201, r.text);
    t.equal(r.body.device_token, '***', `${token.length} characters`);
    t.notOk(r.text.includes(token), 'the raw token is not echoed');
  }
  const twelve = 'abcdEFGHwxyz';
  const r = await suppress(k.push, k.ws.id, { device_token: twelve, platform: 'web', suppression_type: 'disabled' });
  t.equal(r.body.device_token, 'abcd***wxyz', '12 characters show their ends');
});

t.test('suppress: an unknown suppression_type is INVALID_SUPPRESSION_TYPE listing the four', async (t) => {
  const k = await setup();
  const token = fcmToken();
  for (const type of ['deleted', 'UNINSTALLED', 7]) {
    const r = await suppress(k.push, k.ws.id, { device_token: token, platform: 'android', suppression_type: type });
    keyError(t, r, 400, 'INVALID_SUPPRESSION_TYPE');
    for (const name of TYPES) t.ok(r.body.error.includes(name), `the message lists ${name}: ${r.body.error}`);
  }
  t.equal(await reasonOf(k, token, 'android'), 'not_registered', 'nothing was suppressed');
  badRequest(t, await suppress(k.push, k.ws.id, { device_token: token, platform: 'android' }), 'suppression_type');
});

t.test('suppress: an unknown platform is a 400 listing the platforms', async (t) => {
  const k = await setup();
  const r = await suppress(k.push, k.ws.id, { device_token: fcmToken(), platform: 'windows', suppression_type: 'opt_out' });
  badRequest(t, r, 'platform');
  const detail = r.body.details.find((d: { field: string }) => d.field === 'platform').message;
  for (const p of PLATFORMS) t.ok(detail.includes(p), `lists ${p}: ${detail}`);
  badRequest(t, await suppress(k.push, k.ws.id, { device_token: fcmToken(), suppression_type: 'opt_out' }), 'platform');
  badRequest(t, await suppress(k.push, k.ws.id, { platform: 'ios', suppression_type: 'opt_out' }), 'device_token');
});

t.test('suppress: bad tokens, reasons and ids are 400 and store nothing', async (t) => {
  const k = await setup();
  const token = fcmToken();
  const body = { device_token: token, platform: 'web', suppression_type: 'opt_out' };
  const subscription = { endpoint: 'https://fcm.googleapis.com/fcm/send/abc', keys: { p256dh: 'x'.repeat(20), auth: 'y'.repeat(20) } };
  badRequest(t, await suppress(k.push, k.ws.id, { ...body, device_token: JSON.stringify(subscription) }), 'device_token');
  badRequest(t, await suppress(k.push, k.ws.id, { ...body, device_token: subscription }), 'device_token');
  badRequest(t, await suppress(k.push, k.ws.id, { ...body, device_token: 'x'.repeat(9) }), 'device_token');
  badRequest(t, await suppress(k.push, k.ws.id, { ...body, device_token: 'x'.repeat(4097) }), 'device_token');
  badRequest(t, await suppress(k.push, k.ws.id, { ...body, reason: 'r'.repeat(1001) }), 'reason');
  badRequest(t, await suppress(k.push, k.ws.id, { ...body, source_push_id: 'not-a-uuid' }), 'source_push_id');
  badRequest(t, await suppress(k.push, k.ws.id, { ...body, source_push_id: `urn:uuid:${randomUUID()}` }), 'source_push_id');
  badRequest(t, await suppress(k.push, k.ws.id, { ...body, source_campaign_id: 'not-a-uuid' }), 'source_campaign_id');
  badRequest(t, await suppress(k.push, k.ws.id, { ...body, source_campaign_id: `{${randomUUID()}}` }), 'source_campaign_id');
  const unknown = await suppress(k.push, k.ws.id, { ...body, source_push_id: randomUUID() });
  badRequest(t, unknown, 'source_push_id');
  t.match(unknown.body.message, /push record/, 'says why');
  t.equal(await reasonOf(k, token, 'web'), 'not_registered', 'nothing was suppressed');
  t.equal((await suppress(k.push, k.ws.id, { ...body, reason: 'r'.repeat(1000) })).status, 201, 'the first good request is new');
});

t.test('suppress: a workspace_id in the body is ignored', async (t) => {
  const a = await setup();
  const b = await setup();
  const token = fcmToken();
  await register(a, 'wsid-a', token, 'android');
  await register(b, 'wsid-b', token, 'android');
  const r = await suppress(a.push, a.ws.id, { device_token: token, platform: 'android', suppression_type: 'opt_out', workspace_id: b.ws.id });
  t.equal(r.status, 201, r.text);
  t.equal(await reasonOf(a, token, 'android'), 'suppressed', "in the key's workspace");
  t.equal(await reasonOf(b, token, 'android'), undefined, 'not in the one the body named');
});

t.test('lift: 200 {success, message, id}, then 404; the token is no longer suppressed', async (t) => {
  const k = await setup();
  const token = iosToken();
  await register(k, 'lift', token, 'ios');
  const r = await suppress(k.push, k.ws.id, { device_token: token, platform: 'ios', suppression_type: 'invalid_token' });
  const id = r.body.id;
  t.equal(await reasonOf(k, token, 'ios'), 'suppressed');

  const d = await lift(k.push, k.ws.id, id.toUpperCase());
  t.equal(d.status, 200, d.text);
  t.same(sorted(Object.keys(d.body)), ['id', 'message', 'success']);
  t.equal(d.body.success, true);
  t.type(d.body.message, 'string');
  t.equal(d.body.id, id, 'the id, as Herald writes it');
  t.equal(await reasonOf(k, token, 'ios'), undefined, 'valid again');

  keyError(t, await lift(k.push, k.ws.id, id), 404, 'NOT_FOUND');
  keyError(t, await lift(k.push, k.ws.id, randomUUID()), 404, 'NOT_FOUND');
  keyError(t, await lift(k.push, k.ws.id, 'not-a-uuid'), 404, 'NOT_FOUND');

  const again = await suppress(k.push, k.ws.id, { device_token: token, platform: 'ios', suppression_type: 'invalid_token' });
  t.equal(again.status, 201, 'suppressing again is new');
  t.not(again.body.id, id);
});

t.test("lift: another workspace's suppression is 404 and stays", async (t) => {
  const a = await setup();
  const b = await setup();
  const token = fcmToken();
  await register(b, 'other-ws', token, 'android');
  const rb = await suppress(b.push, b.ws.id, { device_token: token, platform: 'android', suppression_type: 'uninstalled' });
  t.equal(rb.status, 201);
  keyError(t, await lift(a.push, a.ws.id, rb.body.id), 404, 'NOT_FOUND');
  t.equal(await reasonOf(b, token, 'android'), 'suppressed', "B's suppression is untouched");
  t.equal((await lift(b.push, b.ws.id, rb.body.id)).status, 200, 'B lifts its own');
});

t.test('permissions and the workspace in the path', async (t) => {
  const a = await setup();
  const b = await setup();
  const reader = await newKey(s, a.ws, { permissions: ['push:read', 'devices:write', 'people:write'] });
  const body = { device_token: fcmToken(), platform: 'android', suppression_type: 'opt_out' };
  const own = await suppress(a.push, a.ws.id, body);
  t.equal(own.status, 201);
  const calls = (key: string, ws: string) => [
    suppress(key, ws, body),
    lift(key, ws, own.body.id),
    validate(key, ws, [{ token: body.device_token, platform: 'android' }]),
  ];
  for (const r of await Promise.all(calls(reader.key, a.ws.id))) {
    t.equal(r.status, 403, `a key without push:send: ${r.text}`);
    t.same(r.body, FORBIDDEN);
  }
  for (const r of await Promise.all(calls(a.push, b.ws.id))) {
    t.equal(r.status, 403, `another workspace in the path: ${r.text}`);
    t.same(r.body, FORBIDDEN);
  }
  t.equal((await validate(a.all, a.ws.id, [{ token: body.device_token, platform: 'android' }])).body.results[0].reason, 'suppressed', "`*` opens the routes; nothing was lifted");

  const pub = await s.req('POST', `/workspaces/${a.ws.id}/api-keys`, { token: a.ws.token, body: { name: 'app', key_type: 'public', permissions: ['push:send'] } });
  t.equal(pub.body?.error?.code, 'PUBLIC_KEY_PERMISSION', `a public key cannot hold push:send: ${pub.text}`);
});

t.test('validate: every reason in request order, masked, with the summary', async (t) => {
  const k = await setup();
  const good = fcmToken();
  const goodIos = iosToken();
  const suppressedRegistered = iosToken();
  const suppressedUnknown = fcmToken();
  const unknown = iosToken();
  const inactive = fcmToken();
  for (const [token, platform] of [[good, 'android'], [goodIos, 'ios'], [suppressedRegistered, 'ios'], [inactive, 'web']] as const) {
    t.equal((await register(k, 'validate', token, platform)).status, 201);
  }
  for (const token of [suppressedRegistered, suppressedUnknown]) {
    t.equal((await suppress(k.push, k.ws.id, { device_token: token, platform: 'ios', suppression_type: 'opt_out' })).status, 201);
  }
  t.equal((await s.req('DELETE', '/people/validate/devices', { token: k.devices, body: { token: inactive } })).status, 200);

  const entries = [
    { token: good, platform: 'android', expect: undefined },
    { token: goodIos, platform: 'ios', expect: undefined },
    { token: good, platform: 'huawei', expect: undefined },
    { token: 'xyz', platform: 'ios', expect: 'invalid_format' },
    { token: `${goodIos}0`, platform: 'ios', expect: 'invalid_format' },
    { token: 'has whitespace in it', platform: 'web', expect: 'invalid_format' },
    { token: 'short', platform: 'android', expect: 'invalid_format' },
    { token: suppressedRegistered, platform: 'ios', expect: 'suppressed' },
    { token: suppressedUnknown, platform: 'android', expect: 'suppressed' },
    { token: unknown, platform: 'ios', expect: 'not_registered' },
    { token: inactive, platform: 'web', expect: 'inactive' },
  ];
  const r = await validate(k.push, k.ws.id, entries.map(({ token, platform }) => ({ token, platform })));
  t.equal(r.status, 200, r.text);
  t.equal(r.body.success, true);
  t.same(sorted(Object.keys(r.body)), ['results', 'success', 'summary']);
  t.equal(r.body.results.length, entries.length);
  for (const [i, e] of entries.entries()) {
    const res = r.body.results[i];
    t.equal(res.index, i, `result ${i} in request order`);
    t.equal(res.platform, e.platform);
    t.equal(res.device_token, e.token.length >= 12 ? masked(e.token) : '***', `masked: ${res.device_token}`);
    t.equal(res.valid, e.expect === undefined, `valid ${i}`);
    t.equal(res.reason, e.expect, `reason ${i}: ${e.expect}`);
    if (e.expect === undefined) t.notOk('reason' in res, 'no reason on a valid token');
    if (e.token.length > 5) t.notOk(r.text.includes(e.token), `raw token ${i} is not echoed`);
  }
  const valid = entries.filter((e) => e.expect === undefined).length;
  t.same(r.body.summary, { total: entries.length, valid, invalid: entries.length - valid });
});

t.test('validate: one workspace does not see another workspace\'s devices or suppressions', async (t) => {
  const a = await setup();
  const b = await setup();
  const onlyInB = fcmToken();
  const suppressedInB = fcmToken();
  await register(b, 'iso', onlyInB, 'android');
  await register(a, 'iso', suppressedInB, 'android');
  await register(b, 'iso', suppressedInB, 'android');
  t.equal((await suppress(b.push, b.ws.id, { device_token: suppressedInB, platform: 'android', suppression_type: 'opt_out' })).status, 201);
  const r = await validate(a.push, a.ws.id, [{ token: onlyInB, platform: 'android' }, { token: suppressedInB, platform: 'android' }]);
  t.equal(r.body.results[0].reason, 'not_registered', "B's device is not A's");
  t.equal(r.body.results[1].valid, true, "B's suppression does not count in A");
  t.same(r.body.summary, { total: 2, valid: 1, invalid: 1 });
});

t.test('validate: 1 to 1,000 tokens; more is BATCH_TOO_LARGE; malformed entries are 400', async (t) => {
  const k = await setup();
  const registered = fcmToken();
  await register(k, 'many', registered, 'android');
  const many = Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? { token: registered, platform: 'android' } : { token: iosToken(), platform: 'ios' }));
  const r = await validate(k.push, k.ws.id, many);
  t.equal(r.status, 200, r.text.slice(0, 300));
  t.equal(r.body.results.length, 1000);
  t.same(r.body.summary, { total: 1000, valid: 500, invalid: 500 });
  t.equal(r.body.results[999].index, 999);
  t.equal(r.body.results[999].reason, 'not_registered');

  const over = await validate(k.push, k.ws.id, [...many, { token: registered, platform: 'android' }]);
  keyError(t, over, 400, 'BATCH_TOO_LARGE');
  badRequest(t, await validate(k.push, k.ws.id, []), 'tokens');
  badRequest(t, await s.req('POST', path(k.ws.id, 'validate'), { token: k.push, body: {} }), 'tokens');
  const badPlatform = await validate(k.push, k.ws.id, [{ token: registered, platform: 'windows' }]);
  badRequest(t, badPlatform, 'tokens.0.platform');
  for (const p of PLATFORMS) t.ok(badPlatform.text.includes(p), `lists ${p}`);
  badRequest(t, await validate(k.push, k.ws.id, [{ platform: 'ios' }]), 'tokens.0.token');
  badRequest(t, await validate(k.push, k.ws.id, [{ token: 42, platform: 'ios' }]), 'tokens.0.token');
});

t.test('suppress: a source_push_id naming a push record of this workspace', async (t) => {
  const a = await setup();
  const b = await setup();
  t.equal((await register(a, 'source', fcmToken(), 'android')).status, 201);
  const sent = await s.req('POST', `/workspaces/${a.ws.id}/push/send`, { token: a.push, body: { external_id: 'source', title: 'Hi', body: 'there' } });
  t.equal(sent.status, 200, sent.text);
  const messageId = sent.body.message_id;
  const body = { device_token: fcmToken(), platform: 'android', suppression_type: 'opt_out', source_push_id: messageId };
  const r = await suppress(a.push, a.ws.id, body);
  t.equal(r.status, 201, `a push record of this workspace: ${r.text}`);
  badRequest(t, await suppress(b.push, b.ws.id, body), 'source_push_id');
});

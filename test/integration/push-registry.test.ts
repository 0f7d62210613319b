// The provider registry (src/delivery/providers.ts) over a real PostgreSQL, with credentials
// stored through Herald's own PUT /workspaces/{id}/channels/push and pointing at the fake FCM and
// APNs (test/fakes): it sends through them; one provider per credential, reused; android and web
// share FCM; a platform without credentials goes to the sandbox or fails naming the channel; a
// change is picked up at once after `invalidate` and within the TTL without it, keeping the
// unchanged channel's provider and closing the replaced one after its sends; credentials sealed
// under another key fail as configuration errors, never the sandbox; the LRU closes what it
// drops. Last, the deployment's way of trusting a private CA: NODE_EXTRA_CA_CERTS in a process
// of its own, with no `ca` option.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderRegistry, type ProviderRegistryOptions } from '../../src/delivery/providers.js';
import type { DevicePlatform as Platform } from '../../src/domain/tokens.js';
import { openPostgres } from '../../src/store/pg.js';
import { parseAllowList } from '../../src/domain/private-hosts.js';
import { sendWithRetries } from '../../src/push/index.js';
import { setLogLevel } from '../../src/logger.js';
import { eventually, newWorkspace, startServer, storeUrl, type TestServer } from '../helpers/server.js';
import { startFakeApns, type FakeApns } from '../fakes/fake-apns.js';
import { startFakeFcm, type FakeFcm } from '../fakes/fake-fcm.js';

setLogLevel('error');
const KEY = randomBytes(32);
const MESSAGE = { title: 'Hello', body: 'World' };
const dev = (platform: Platform, token: string) => ({ token, platform });


interface Fakes {
  fcm: FakeFcm;
  apns: FakeApns;
}

/** Fake providers of the test's own, so the connections it counts are its registry's alone. */
async function startFakes(t: Test): Promise<Fakes> {
  const f = { fcm: await startFakeFcm(), apns: await startFakeApns() };
  t.teardown(async () => {
    await f.fcm.close();
    await f.apns.close();
  });
  return f;
}

const shared = await startFakes(t);
const { fcm, apns } = shared;

// The server stores the credentials; its FCM endpoint is a fake's, so a token_uri off Google's host is taken (docs/isolation.md).
const srv: TestServer = await startServer({ HERALD_SECRETS_KEY: KEY.toString('hex'), HERALD_FCM_ENDPOINT: fcm.url });
t.teardown(() => srv.stop());
const db = openPostgres(storeUrl(srv), 4);
t.teardown(() => db.close());

const apnsCreds = (f: Fakes, over: Record<string, unknown> = {}) => ({ key_p8: f.apns.keyP8, key_id: f.apns.keyId, team_id: f.apns.teamId, bundle_id: f.apns.bundleId, ...over });
const both = (f: Fakes) => ({ fcm: { service_account: f.fcm.account }, apns: apnsCreds(f) });

/** A workspace whose credentials (set through the API, in the server's actor) point at the fakes. */
async function workspace(body: Record<string, unknown> = both(shared)) {
  const ws = await newWorkspace(srv, 'Registry');
  await put(ws, body);
  return ws;
}

async function put(ws: { id: string; token: string }, body: Record<string, unknown>): Promise<void> {
  const r = await srv.req('PUT', `/workspaces/${ws.id}/channels/push`, { token: ws.token, body });
  if (r.status !== 200) throw new Error(`PUT channels: ${r.status} ${r.text}`);
}

// The fake FCM's token endpoint (a tenant's token_uri) is on 127.0.0.1: allowed as the tests allow it.
const LOCAL = parseAllowList(['127.0.0.1']);
const options = (f: Fakes): ProviderRegistryOptions => ({ mode: 'live', secretsKey: KEY, fcmEndpoint: f.fcm.url, apnsEndpoint: f.apns.url, ca: f.fcm.ca + f.apns.ca, allowedPrivateHosts: LOCAL });

function registry(t: Test, over: Partial<ProviderRegistryOptions> = {}, f: Fakes = shared): ProviderRegistry {
  const r = new ProviderRegistry(db, { ...options(f), ...over });
  t.teardown(() => r.close());
  return r;
}

t.test('sends through the fakes: ios to APNs, android and web to FCM, with the stored credentials', async (t) => {
  const ws = await workspace();
  const reg = registry(t);
  const providers = await reg.forWorkspace(ws.id);
  const ios = providers.forPlatform('ios');
  const android = providers.forPlatform('android');
  t.equal(ios.name, 'apns');
  t.equal(android.name, 'fcm');
  t.equal(providers.forPlatform('web'), android, 'web and android share the FCM provider');
  t.match(await ios.send(MESSAGE, [dev('ios', 'reg-ios-1'), dev('ios', 'dead-reg-1')]), [{ kind: 'delivered' }, { kind: 'dead_token', suppression: 'uninstalled' }]);
  t.match(await android.send(MESSAGE, [dev('android', 'reg-and-1'), dev('web', 'reg-web-1')]), [{ kind: 'delivered', providerMessageId: /^projects\/herald-test\// }, { kind: 'delivered' }]);
  const got = apns.received.find((r) => r.path === '/3/device/reg-ios-1')!;
  t.equal(got.headers['apns-topic'], apns.bundleId, 'the stored bundle id is the topic');
  t.ok(fcm.received.some((r) => r.body.message.token === 'reg-web-1' && r.path === '/v1/projects/herald-test/messages:send'), 'the stored project id is in the path');
});

t.test('one provider per credential, reused across sends and lookups; concurrent lookups build once', async (t) => {
  const ws = await workspace();
  const reg = registry(t);
  const fetches = fcm.tokenFetches;
  const sessions = { fcm: fcm.sessions, apns: apns.sessions };
  const all = await Promise.all(Array.from({ length: 5 }, () => reg.forWorkspace(ws.id)));
  const android = all[0]!.forPlatform('android');
  t.ok(all.every((p) => p.forPlatform('android') === android && p.forPlatform('ios') === all[0]!.forPlatform('ios')), 'the same providers');
  for (let i = 0; i < 5; i++) {
    const p = await reg.forWorkspace(ws.id);
    t.same((await p.forPlatform('android').send(MESSAGE, [dev('android', `reuse-a-${i}`)])).map((o) => o.kind), ['delivered']);
    t.same((await p.forPlatform('ios').send(MESSAGE, [dev('ios', `reuse-i-${i}`)])).map((o) => o.kind), ['delivered']);
  }
  t.equal(fcm.tokenFetches - fetches, 1, 'one OAuth token for every FCM send');
  t.equal(fcm.sessions - sessions.fcm, 1, 'one FCM connection');
  t.equal(apns.sessions - sessions.apns, 1, 'one APNs connection');
});

t.test('a platform without credentials: the sandbox in sandbox mode, a config error naming the channel in live mode', async (t) => {
  const ws = await workspace({ fcm: { service_account: fcm.account } });
  const live = await registry(t).forWorkspace(ws.id);
  t.match(await live.forPlatform('ios').send(MESSAGE, [dev('ios', 'x-1')]), [{ kind: 'config_error', error: 'no APNs credentials are configured in this workspace' }]);
  t.equal(live.forPlatform('ios').name, 'apns');
  t.match(await live.forPlatform('android').send(MESSAGE, [dev('android', 'x-2')]), [{ kind: 'delivered' }], 'the configured channel sends');
  const sandbox = await registry(t, { mode: 'sandbox' }).forWorkspace(ws.id);
  t.equal(sandbox.forPlatform('ios').name, 'sandbox');
  t.match(await sandbox.forPlatform('ios').send(MESSAGE, [dev('ios', 'x-3'), dev('ios', 'fail-1')]), [{ kind: 'delivered', providerMessageId: /^sandbox-/ }, { kind: 'rejected' }]);
  t.equal(sandbox.forPlatform('android').name, 'fcm', 'a configured channel is never the sandbox');
  const none = await newWorkspace(srv, 'Registry none');
  const empty = await registry(t).forWorkspace(none.id);
  t.match(await empty.forPlatform('web').send(MESSAGE, [dev('web', 'x-4')]), [{ kind: 'config_error', error: /no FCM credentials/ }]);
});

t.test('invalidate: the next lookup uses the new credentials; the unchanged channel keeps its provider; the replaced one closes', async (t) => {
  const f = await startFakes(t);
  const ws = await workspace(both(f));
  const reg = registry(t, { ttlMs: 600_000, retireGraceMs: 0 }, f);
  const before = await reg.forWorkspace(ws.id);
  const oldIos = before.forPlatform('ios');
  t.match(await oldIos.send(MESSAGE, [dev('ios', 'inv-1')]), [{ kind: 'delivered' }]);
  t.equal(f.apns.openSessions, 1);
  await put(ws, { apns: { bundle_id: 'com.example.other' } });
  t.equal((await reg.forWorkspace(ws.id)).forPlatform('ios'), oldIos, 'without invalidate, the long TTL keeps the cached provider');
  reg.invalidate(ws.id);
  const after = await reg.forWorkspace(ws.id);
  t.not(after.forPlatform('ios'), oldIos, 'a new APNs provider');
  t.equal(after.forPlatform('android'), before.forPlatform('android'), 'FCM unchanged: same provider, same connections');
  t.match(await after.forPlatform('ios').send(MESSAGE, [dev('ios', 'inv-2')]), [{ kind: 'config_error', error: /DeviceTokenNotForTopic/ }], 'built from the new bundle id');
  t.equal(f.apns.sessions, 2, 'the new provider has its own connection');
  t.ok(await eventually(async () => f.apns.openSessions === 1, 5000), `the replaced provider's connection is closed (${f.apns.openSessions} open)`);
  await put(ws, { apns: null });
  reg.invalidate(ws.id);
  t.match(await (await reg.forWorkspace(ws.id)).forPlatform('ios').send(MESSAGE, [dev('ios', 'inv-3')]), [{ kind: 'config_error', error: /no APNs credentials/ }], 'removed');
});

t.test('without invalidate (a PUT on another replica): picked up once the TTL has passed', async (t) => {
  const ws = await workspace();
  const reg = registry(t, { ttlMs: 300 });
  const before = (await reg.forWorkspace(ws.id)).forPlatform('ios');
  await put(ws, { apns: { bundle_id: 'com.example.elsewhere' } });
  const changed = await eventually(async () => (await reg.forWorkspace(ws.id)).forPlatform('ios') !== before, 5000);
  t.ok(changed, 'a new provider after the TTL');
  t.match(await (await reg.forWorkspace(ws.id)).forPlatform('ios').send(MESSAGE, [dev('ios', 'ttl-1')]), [{ kind: 'config_error', error: /DeviceTokenNotForTopic/ }]);
  const same = (await reg.forWorkspace(ws.id)).forPlatform('ios');
  await new Promise((r) => setTimeout(r, 400));
  t.equal((await reg.forWorkspace(ws.id)).forPlatform('ios'), same, 'no change stored: the version check keeps the provider');
});

t.test('a send under way when its credentials change, retries included, finishes on the old provider, which closes after it', async (t) => {
  const f = await startFakes(t);
  const ws = await workspace(both(f));
  const reg = registry(t, { retireGraceMs: 2_000 }, f);
  const old = (await reg.forWorkspace(ws.id)).forPlatform('android');
  t.match(await old.send(MESSAGE, [dev('android', 'warm-1')]), [{ kind: 'delivered' }]);
  // 503 with Retry-After: 1 the first time: the second attempt comes a second later, on `old`.
  const underWay = sendWithRetries(old, MESSAGE, [dev('android', 'retry-change-1')]);
  await eventually(async () => f.fcm.received.some((r) => r.body.message.token === 'retry-change-1'), 5000);
  await put(ws, { fcm: { service_account: f.fcm.account } }); // sealed again: new bytes, a new provider
  reg.invalidate(ws.id);
  const fresh = (await reg.forWorkspace(ws.id)).forPlatform('android');
  t.not(fresh, old);
  t.match(await fresh.send(MESSAGE, [dev('android', 'after-change-1')]), [{ kind: 'delivered' }]);
  t.equal(f.fcm.openSessions, 2, 'both open meanwhile');
  t.match(await underWay, [{ kind: 'delivered' }], 'the retry went out on the old provider, still open');
  t.equal(f.fcm.received.filter((r) => r.body.message.token === 'retry-change-1').length, 2);
  t.ok(await eventually(async () => f.fcm.openSessions === 1, 10_000), `then the old provider closed (${f.fcm.openSessions} open)`);
});

t.test('credentials sealed under another key: a config error for that channel, even in sandbox mode', async (t) => {
  const ws = await workspace();
  const reg = registry(t, { mode: 'sandbox', secretsKey: randomBytes(32) });
  const p = await reg.forWorkspace(ws.id);
  for (const [platform, channel] of [['ios', 'APNs'], ['android', 'FCM']] as const) {
    t.match(await p.forPlatform(platform).send(MESSAGE, [dev(platform, 'key-1')]), [{ kind: 'config_error', error: new RegExp(`stored ${channel} credentials cannot be opened.*set them again`) }]);
  }
});

t.test('bounded: the least recently used workspace beyond the maximum is closed', async (t) => {
  const f = await startFakes(t);
  const [a, b] = [await workspace(both(f)), await workspace(both(f))];
  const reg = registry(t, { maxWorkspaces: 1, retireGraceMs: 0 }, f);
  const first = (await reg.forWorkspace(a.id)).forPlatform('ios');
  t.match(await first.send(MESSAGE, [dev('ios', 'lru-1')]), [{ kind: 'delivered' }]);
  t.equal(f.apns.openSessions, 1);
  t.match(await (await reg.forWorkspace(b.id)).forPlatform('ios').send(MESSAGE, [dev('ios', 'lru-2')]), [{ kind: 'delivered' }]);
  t.equal(f.apns.sessions, 2);
  t.ok(await eventually(async () => f.apns.openSessions === 1, 5000), `A's connection closed when B took its place (${f.apns.openSessions} open)`);
  t.not((await reg.forWorkspace(a.id)).forPlatform('ios'), first, 'A is built again when asked for');
});

t.test('close: every connection closed; later lookups refused', async (t) => {
  const f = await startFakes(t);
  const ws = await workspace(both(f));
  const reg = new ProviderRegistry(db, options(f));
  const p = await reg.forWorkspace(ws.id);
  await p.forPlatform('ios').send(MESSAGE, [dev('ios', 'close-1')]);
  await p.forPlatform('android').send(MESSAGE, [dev('android', 'close-2')]);
  t.same([f.fcm.openSessions, f.apns.openSessions], [1, 1]);
  await reg.close();
  t.ok(await eventually(async () => f.fcm.openSessions === 0 && f.apns.openSessions === 0, 5000), 'connections closed');
  await t.rejects(reg.forWorkspace(ws.id), /closed/);
});

t.test('NODE_EXTRA_CA_CERTS, as a deployment trusts a private CA: no ca option', async (t) => {
  const ws = await workspace();
  const dir = mkdtempSync(join(tmpdir(), 'herald-ca-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'ca.pem'), fcm.ca + apns.ca);
  const dist = (p: string) => new URL(`../../dist/src/${p}`, import.meta.url).href;
  const script = `
    const { ProviderRegistry } = await import(${JSON.stringify(dist('delivery/providers.js'))});
    const { openPostgres } = await import(${JSON.stringify(dist('store/pg.js'))});
    const { parseAllowList } = await import(${JSON.stringify(dist('domain/private-hosts.js'))});
    const db = openPostgres(process.env.URL, 1);
    const reg = new ProviderRegistry(db, { mode: 'live', secretsKey: Buffer.from(process.env.KEY, 'hex'), fcmEndpoint: process.env.FCM, apnsEndpoint: process.env.APNS, allowedPrivateHosts: parseAllowList(['127.0.0.1']) });
    const p = await reg.forWorkspace(process.env.WS);
    const out = [
      ...(await p.forPlatform('android').send({ title: 'x' }, [{ token: 'ca-android', platform: 'android' }])),
      ...(await p.forPlatform('ios').send({ title: 'x' }, [{ token: 'ca-ios', platform: 'ios' }])),
    ];
    await reg.close();
    await db.close();
    process.stdout.write(JSON.stringify(out));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'), URL: storeUrl(srv), KEY: KEY.toString('hex'), FCM: fcm.url, APNS: apns.url, WS: ws.id, HERALD_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => child.once('exit', r));
  t.equal(code, 0, err);
  t.match(JSON.parse(out || '[]'), [{ kind: 'delivered' }, { kind: 'delivered' }], 'both delivered over TLS trusted through NODE_EXTRA_CA_CERTS');
  t.ok(fcm.received.some((r) => r.body.message.token === 'ca-android') && apns.received.some((r) => r.path === '/3/device/ca-ios'), 'the fakes received them');
});

t.test('the same without the CA: refused by TLS, so the test above proves the variable', async (t) => {
  const ws = await workspace();
  const reg = registry(t, { ca: undefined });
  const fetches = fcm.tokenFetches;
  const out = await (await reg.forWorkspace(ws.id)).forPlatform('android').send(MESSAGE, [dev('android', 'no-ca-1')]);
  // The TLS failure is classified (the tenant sees no certificate text); the token request never arrived.
  t.same(out, [{ kind: 'retryable', error: 'FCM token endpoint unreachable' }]);
  t.equal(fcm.tokenFetches, fetches, 'refused by TLS before the request');
});

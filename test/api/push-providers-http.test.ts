// Sends through the fake FCM and APNs (test/fakes) on a Herald with HERALD_PUSH_PROVIDER=live, so
// a platform without credentials fails instead of going to the sandbox (docs/channels.md): what
// the providers receive (rendered content, reserved custom_data keys stripped), dead-token
// feedback, retries on 429/503 with Retry-After, configuration errors, missing credentials.
import t, { type Test } from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { makeP8 } from '../fakes/fake-apns.js';
import type { Res } from '../helpers/server.js';
import { PushWs, apnsSends, fcmSends, isProviderError, isSent, isSkipped, pushToken, startPushServer } from '../helpers/push.js';

const { s, fakes } = await startPushServer(t, { HERALD_PUSH_PROVIDER: 'live' });
const { fcm, apns } = fakes;

/** A workspace whose android/web go to the fake FCM and ios to the fake APNs. */
async function faked(): Promise<PushWs> {
  const w = await PushWs.create(s);
  await w.useFakes(fakes);
  return w;
}

const CUSTOM = {
  greeting: 'Hello {{ name }}',
  count: 3,
  keep: 'k',
  from: 'reserved by FCM',
  notification: 'reserved by FCM',
  message_type: 'reserved by FCM',
  'google.c.a.e': '1',
  'gcm.n.e': '1',
  aps: { badge: 99 },
  nested: { list: ['{{ name }}', 1] },
};
const CONTENT = { title: 'Hi {{ name }}', body: '{{ traits.plan }} plan', image_url: 'https://example.com/{{ name }}.png', custom_data: CUSTOM, variables: { name: 'Ann' } };

/** CONTENT sent to a person (plan pro) with one device of `platform` in a faked workspace: sent by `provider`. */
async function sendContent(t: Test, platform: 'android' | 'ios', provider: string): Promise<{ w: PushWs; token: string; r: Res }> {
  const w = await faked();
  const token = pushToken();
  await w.personWith('someone', [[token, platform]], { plan: 'pro' });
  const r = await w.send({ external_id: 'someone', ...CONTENT });
  isSent(t, r, provider);
  return { w, token, r };
}

t.test('FCM: the request carries the rendered message; FCM-reserved data keys are stripped', async (t) => {
  const { w, token, r } = await sendContent(t, 'android', 'fcm');
  t.match(r.body.provider_id, /^projects\/herald-test\/messages\//, 'provider_id is the FCM message name');

  const got = fcmSends(fakes, token);
  t.equal(got.length, 1, 'one request');
  const msg = got[0]!.body.message as { notification?: Record<string, string>; data?: Record<string, string> };
  t.equal(got[0]!.path, '/v1/projects/herald-test/messages:send');
  t.same(msg.notification, { title: 'Hi Ann', body: 'pro plan', image: 'https://example.com/Ann.png' }, 'notification rendered, image_url too');
  t.equal(msg.data?.greeting, 'Hello Ann', 'custom_data string values rendered');
  t.equal(msg.data?.count, '3', 'FCM data values are strings');
  t.equal(msg.data?.keep, 'k');
  for (const k of ['from', 'notification', 'message_type', 'google.c.a.e', 'gcm.n.e']) t.notOk(k in (msg.data ?? {}), `${k} stripped`);

  const st = (await w.status(r.body.message_id)).body.message;
  t.equal(st.provider, 'fcm');
  t.equal(st.deliveries[0]?.provider_id, r.body.provider_id);
});

t.test('APNs: the request carries the rendered alert and the custom data; a custom `aps` is stripped', async (t) => {
  const { token } = await sendContent(t, 'ios', 'apns');
  const got = apnsSends(fakes, token);
  t.equal(got.length, 1, 'one request');
  t.equal(got[0]!.headers['apns-topic'], apns.bundleId);
  const body = got[0]!.body;
  t.match(body.aps, { alert: { title: 'Hi Ann', body: 'pro plan' } }, 'alert rendered');
  t.notOk('badge' in (body.aps ?? {}), "the custom `aps` did not reach Apple's");
  t.equal(body.greeting, 'Hello Ann', 'custom data rendered');
  t.equal(body.count, 3);
  t.equal(body.keep, 'k');
  t.same(body.nested, { list: ['Ann', 1] }, 'strings rendered at any depth, other values as they are');
});

t.test('android and ios devices: each provider gets one request; one sent result', async (t) => {
  const w = await faked();
  const a = pushToken();
  const i = pushToken();
  await w.personWith('both', [[a, 'android'], [i, 'ios']]);
  const r = await w.send({ external_id: 'both', title: 'x' });
  isSent(t, r, r.body?.provider === 'apns' ? 'apns' : 'fcm');
  t.equal(fcmSends(fakes, a).length, 1);
  t.equal(apnsSends(fakes, i).length, 1);
  const st = (await w.status(r.body.message_id)).body.message;
  t.same(st.deliveries.map((d: { status: string }) => d.status), ['sent', 'sent']);
});

t.test('a batch through the fakes: one request per recipient device, rendered per recipient', async (t) => {
  const w = await faked();
  const tokens = [pushToken(), pushToken(), pushToken()];
  const ids = [];
  for (const [n, token] of tokens.entries()) ids.push(await w.personWith(`b${n}`, [[token, 'android']]));
  const r = await w.batch({ title: 'Hi {{ name }}', variables: { name: 'all' }, recipients: ids.map((user_id, n) => ({ user_id, ...(n === 1 ? { variables: { name: 'one' } } : {}) })) });
  t.equal(r.status, 200, r.text);
  t.same(r.body.results.map((x: { status: string; provider: string }) => [x.status, x.provider]), [['sent', 'fcm'], ['sent', 'fcm'], ['sent', 'fcm']]);
  t.same(tokens.map((tok) => fcmSends(fakes, tok).map((x) => (x.body.message as { notification?: { title?: string } }).notification?.title)), [['Hi all'], ['Hi one'], ['Hi all']]);
});

t.test('dead tokens (FCM UNREGISTERED / INVALID_ARGUMENT, APNs 410 / BadDeviceToken): device invalidated, suppression recorded, later sends skipped', async (t) => {
  const cases = [
    ['dead-', 'android', 'uninstalled', fcmSends],
    ['badarg-', 'web', 'invalid_token', fcmSends],
    ['dead-', 'ios', 'uninstalled', apnsSends],
    ['badtoken-', 'ios', 'invalid_token', apnsSends],
  ] as const;
  for (const [prefix, platform, suppression, sends] of cases) {
    const w = await faked();
    const token = pushToken(prefix);
    await w.personWith('gone', [[token, platform]]);
    isProviderError(t, await w.send({ external_id: 'gone', title: 'x' }));
    const d = (await w.devices('gone')).get(token)!;
    t.same([d.is_valid, d.is_active], [false, false], `${platform} ${prefix}: device invalidated`);
    const sup = await w.suppress(token, platform, suppression);
    t.equal(sup.status, 200, `${platform} ${prefix}: a ${suppression} suppression was recorded: ${sup.text}`);
    await isSkipped(t, w, await w.send({ external_id: 'gone', title: 'x' }), 'no_active_device_tokens');
    t.equal(sends(fakes, token).length, 1, `${platform} ${prefix}: the later send reached no provider`);
  }
});

t.test('one good and one dead device through the fakes: 200 sent, the dead one invalidated', async (t) => {
  const w = await faked();
  const good = pushToken();
  const dead = pushToken('dead-');
  await w.personWith('half', [[good, 'ios'], [dead, 'android']]);
  isSent(t, await w.send({ external_id: 'half', title: 'x' }), 'apns');
  const ds = await w.devices('half');
  t.same([ds.get(dead)!.is_valid, ds.get(dead)!.is_active], [false, false]);
  t.same([ds.get(good)!.is_valid, ds.get(good)!.is_active], [true, true]);
});

t.test('retries: 503 and 429 with Retry-After are retried; sent; two attempts recorded', async (t) => {
  const w = await faked();
  const cases = [['retry-', 'android', fcmSends, 'fcm'], ['quota-', 'web', fcmSends, 'fcm'], ['retry-', 'ios', apnsSends, 'apns'], ['busy-', 'ios', apnsSends, 'apns']] as const;
  for (const [n, [prefix, platform, sends, provider]] of cases.entries()) {
    const token = pushToken(prefix);
    await w.personWith(`r${n}`, [[token, platform]]);
    isSent(t, await w.send({ external_id: `r${n}`, title: 'x' }), provider);
    t.equal(sends(fakes, token).length, 2, `${platform} ${prefix}: two attempts`);
    const d = (await w.devices(`r${n}`)).get(token)!;
    t.same([d.is_valid, d.is_active], [true, true], 'device untouched');
  }
});

t.test('configuration errors: 500 PROVIDER_ERROR, devices untouched', async (t) => {
  const check = async (w: PushWs, token: string, platform: 'android' | 'ios', what: string) => {
    await w.personWith('cfg', [[token, platform]]);
    const failedId = isProviderError(t, await w.send({ external_id: 'cfg', title: 'x' }));
    t.equal((await w.status(failedId)).body.message.status, 'failed', `${what}: stored as failed`);
    const d = (await w.devices('cfg')).get(token)!;
    t.same([d.is_valid, d.is_active], [true, true], `${what}: device untouched`);
  };
  // FCM answering 401 for the access token.
  await check(await faked(), pushToken('auth-'), 'android', 'FCM 401');
  // A service account whose key the token endpoint does not accept.
  const wrongKey = await PushWs.create(s);
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await wrongKey.channels({ fcm: { service_account: { ...fcm.account, private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() } } });
  await check(wrongKey, pushToken(), 'android', 'FCM token endpoint refusal');
  // APNs: another app's bundle id (wrong topic), another .p8 key.
  const topic = await PushWs.create(s);
  await topic.channels({ apns: { key_p8: apns.keyP8, key_id: apns.keyId, team_id: apns.teamId, bundle_id: 'com.example.other', production: false } });
  await check(topic, pushToken(), 'ios', 'APNs wrong topic');
  const p8 = await PushWs.create(s);
  await p8.channels({ apns: { key_p8: makeP8(), key_id: apns.keyId, team_id: apns.teamId, bundle_id: apns.bundleId, production: false } });
  await check(p8, pushToken(), 'ios', 'APNs wrong key');
});

t.test('missing credentials (not sandbox): 500 PROVIDER_ERROR naming the channel; devices untouched; a configured platform still sends', async (t) => {
  const w = await PushWs.create(s);
  const a = pushToken();
  const i = pushToken();
  await w.personWith('droid', [[a, 'android']]);
  await w.personWith('phone', [[i, 'ios']]);
  const ra = await w.send({ external_id: 'droid', title: 'x' });
  isProviderError(t, ra);
  t.match(ra.body.error, /fcm/i, 'names the FCM channel');
  const ri = await w.send({ external_id: 'phone', title: 'x' });
  isProviderError(t, ri);
  t.match(ri.body.error, /apns/i, 'names the APNs channel');
  for (const [ext, token] of [['droid', a], ['phone', i]]) {
    const d = (await w.devices(ext!)).get(token!)!;
    t.same([d.is_valid, d.is_active], [true, true], `${ext}: device untouched`);
  }
  t.equal(fcmSends(fakes, a).length + apnsSends(fakes, i).length, 0, 'nothing reached a provider');

  // In a batch that recipient fails.
  const b = await w.batch({ title: 'x', recipients: [{ user_id: await w.person('droid') }] });
  t.equal(b.status, 200, b.text);
  t.equal(b.body.results[0].status, 'failed');
  t.match(b.body.results[0].error, /fcm/i);

  // Only APNs configured: a person with both platforms is sent to (ios), the android device fails.
  const half = await PushWs.create(s);
  await half.channels({ apns: { key_p8: apns.keyP8, key_id: apns.keyId, team_id: apns.teamId, bundle_id: apns.bundleId } });
  const ha = pushToken();
  const hi = pushToken();
  await half.personWith('both', [[ha, 'android'], [hi, 'ios']]);
  const r = await half.send({ external_id: 'both', title: 'x' });
  isSent(t, r, 'apns');
  const st = (await half.status(r.body.message_id)).body.message;
  const byPlatform = Object.fromEntries(st.deliveries.map((d: { platform: string; status: string }) => [d.platform, d.status]));
  t.same(byPlatform, { android: 'failed', ios: 'sent' });
});

/** A batch of `n` people with one android device each through the fake FCM, with `disrupt` armed first. */
async function disruptedBatch(t: Test, n: number, disrupt: () => void): Promise<void> {
  const w = await faked();
  const people = await Promise.all(Array.from({ length: n }, (_, i) => w.personWith(`mid-${i}`, [[pushToken(), 'android']])));
  disrupt();
  const r = await w.batch({ title: 'Mid-batch', recipients: people.map((user_id) => ({ user_id })) });
  t.equal(r.status, 200, r.text);
  t.same(r.body.summary.sent, n, 'every recipient sent: unanswered requests went again on a fresh session');
  t.equal(r.body.summary.failed, 0);
}

t.test('GOAWAY from FCM mid-batch: the batch completes on a new session, every recipient sent', async (t) => {
  const before = fcm.sessions;
  await disruptedBatch(t, 40, () => fcm.goawayAfter(10));
  t.ok(fcm.sessions > before, 'a new session was opened after the GOAWAY');
});

t.test('FCM connection dropped mid-batch: the batch completes on a new session, every recipient sent', async (t) => {
  const before = fcm.sessions;
  await disruptedBatch(t, 40, () => fcm.dropAfter(10));
  t.ok(fcm.sessions > before, 'a new session was opened after the drop');
});

// The push provider layer (src/push) against fake FCM and APNs servers (test/fakes): HTTP/2 over
// TLS with a certificate made at test time. Classification, the FCM OAuth token cache, the
// session pool (more than 100 streams, GOAWAY, a dropped connection), retries with Retry-After,
// APNs token auth, reserved data keys, the sandbox.
import t from 'tap';
import { ApnsProvider, FcmProvider, SandboxProvider, sendWithRetries, UnconfiguredProvider, type PushDevice } from '../../src/push/index.js';
import { OutboundPolicy } from '../../src/net/destinations.js';
import { parseAllowList } from '../../src/domain/private-hosts.js';
import { makeP8, startFakeApns, type FakeApns } from '../fakes/fake-apns.js';
import { startFakeFcm, type FakeFcm } from '../fakes/fake-fcm.js';

const android = (token: string): PushDevice => ({ token, platform: 'android' });
const ios = (token: string): PushDevice => ({ token, platform: 'ios' });
const MESSAGE = { title: 'Hello', body: 'World', imageUrl: 'https://example.com/i.png' };
/** The fake's token endpoint (the service account's token_uri) is on 127.0.0.1, which the tests allow. */
const tokenUriRule = { googleOnly: false, outbound: new OutboundPolicy(parseAllowList(['127.0.0.1'])) };

t.test('FCM', async (t) => {
  let fcm: FakeFcm;
  t.before(async () => {
    fcm = await startFakeFcm();
  });
  t.teardown(() => fcm.close());
  const provider = (now?: () => number) => {
    const p = new FcmProvider(fcm.account, { endpoint: fcm.url, tokenUriRule, ca: fcm.ca, now });
    t.teardown(() => p.close());
    return p;
  };

  t.test('every classification, with FCM v1 bodies and the bearer token checked', async (t) => {
    const p = provider();
    const out = await p.send(MESSAGE, [android('ok-1'), android('dead-1'), android('badarg-1'), android('auth-1'), android('retry-c1'), android('quota-c1')]);
    t.match(out[0], { kind: 'delivered', providerMessageId: /^projects\/herald-test\/messages\// });
    t.match(out[1], { kind: 'dead_token', suppression: 'uninstalled', error: /UNREGISTERED/ });
    t.match(out[2], { kind: 'dead_token', suppression: 'invalid_token', error: /INVALID_ARGUMENT/ });
    t.match(out[3], { kind: 'config_error', error: /401/ });
    t.match(out[4], { kind: 'retryable', retryAfterMs: 1000, error: /503 UNAVAILABLE/ });
    t.match(out[5], { kind: 'retryable', retryAfterMs: 1000, error: /429 QUOTA_EXCEEDED/ });
    const sent = fcm.received.find((r) => r.body.message.token === 'ok-1')!;
    t.equal(sent.path, '/v1/projects/herald-test/messages:send');
    t.match(sent.authorization, /^Bearer ya29\.fake-/);
    t.same(sent.body.message.notification, { title: 'Hello', body: 'World', image: 'https://example.com/i.png' });
  });

  t.test('reserved keys are stripped from custom data; values become strings', async (t) => {
    const p = provider();
    const out = await p.send({ title: 'x', data: { from: 'a', notification: 'b', message_type: 'c', 'google.x': 'd', 'gcm.n.e': '1', order: 42, kept: 'yes' } }, [android('data-1')]);
    t.equal(out[0]!.kind, 'delivered');
    t.same(fcm.received.find((r) => r.body.message.token === 'data-1')!.body.message.data, { order: '42', kept: 'yes' });
  });

  t.test('the OAuth token is fetched once for concurrent sends, cached, and fetched again when expired', async (t) => {
    let clock = Date.now();
    const before = fcm.tokenFetches;
    const p = provider(() => clock);
    const first = await Promise.all([p.send(MESSAGE, [android('tok-1')]), p.send(MESSAGE, [android('tok-2')]), p.send(MESSAGE, [android('tok-3'), android('tok-4')])]);
    t.ok(first.flat().every((o) => o.kind === 'delivered'));
    t.equal(fcm.tokenFetches - before, 1, 'one fetch shared by concurrent callers');
    await p.send(MESSAGE, [android('tok-5')]);
    t.equal(fcm.tokenFetches - before, 1, 'cached');
    clock += 3600_000 - 4 * 60_000; // within the renewal margin of a 1-hour token
    t.equal((await p.send(MESSAGE, [android('tok-6')]))[0]!.kind, 'delivered');
    t.equal(fcm.tokenFetches - before, 2, 'fetched again before it expired');
  });

  t.test('a service account the token endpoint refuses is a config error for every device', async (t) => {
    const p = new FcmProvider({ ...fcm.account, client_email: 'someone-else@x.iam.gserviceaccount.com' }, { endpoint: fcm.url, tokenUriRule, ca: fcm.ca });
    t.teardown(() => p.close());
    const out = await p.send(MESSAGE, [android('a'), android('b')]);
    t.match(out, [{ kind: 'config_error', error: /invalid_grant/ }, { kind: 'config_error' }]);
    const missing = new FcmProvider({ ...fcm.account, private_key: '' }, { endpoint: fcm.url, tokenUriRule });
    t.match(await missing.send(MESSAGE, [android('a')]), [{ kind: 'config_error', error: /private_key/ }]);
    await missing.close();
  });

  t.test('more than 100 concurrent sends use more than one session; sessions are reused', async (t) => {
    const p = provider();
    const sessionsBefore = fcm.sessions;
    const devices = Array.from({ length: 150 }, (_, i) => android(`slow-pool-${i}`));
    const out = await p.send(MESSAGE, devices);
    t.ok(out.every((o) => o.kind === 'delivered'));
    t.equal(p.sessions.sessionsOpened, 2);
    t.equal(fcm.sessions - sessionsBefore, 2);
    t.ok(fcm.maxConcurrentStreams <= 100, `at most 100 streams on a session (saw ${fcm.maxConcurrentStreams})`);
    await p.send(MESSAGE, [android('again-1'), android('again-2')]);
    t.equal(p.sessions.sessionsOpened, 2, 'the next send reuses an open session');
  });

  t.test('GOAWAY mid-batch: refused streams are retried on a fresh session', async (t) => {
    const p = provider();
    await p.send(MESSAGE, [android('warm-goaway')]);
    t.equal(p.sessions.sessionsOpened, 1);
    fcm.goawayAfter(5);
    const devices = Array.from({ length: 30 }, (_, i) => android(`slow-goaway-${i}`));
    const out = await p.send(MESSAGE, devices);
    t.same(out.filter((o) => o.kind !== 'delivered'), []);
    t.equal(p.sessions.sessionsOpened, 2, 'one fresh session after GOAWAY');
    await p.send(MESSAGE, [android('after-goaway')]);
    t.equal(p.sessions.sessionsOpened, 2, 'and that session is kept for later sends');
  });

  t.test('a dropped connection mid-batch: in-flight streams are retried once on a fresh session', async (t) => {
    const p = provider();
    await p.send(MESSAGE, [android('warm-drop')]);
    fcm.dropAfter(10);
    const devices = Array.from({ length: 20 }, (_, i) => android(`slow-drop-${i}`));
    const out = await p.send(MESSAGE, devices);
    t.same(out.filter((o) => o.kind !== 'delivered'), []);
    t.equal(p.sessions.sessionsOpened, 2);
    const arrivals = fcm.received.filter((r) => r.body.message.token.startsWith('slow-drop-')).length;
    t.ok(arrivals > 20, `the sends in flight when the connection dropped were sent again (${arrivals} arrivals for 20 devices)`);
  });

  t.test('retries: 503 and 429 with Retry-After: 1 are retried after a second and then delivered', async (t) => {
    const p = provider();
    const waits: number[] = [];
    const started = Date.now();
    const out = await sendWithRetries(p, MESSAGE, [android('retry-r1'), android('quota-r1'), android('fine-r1'), android('dead-r1')], {
      wait: (ms) => (waits.push(ms), new Promise((r) => setTimeout(r, ms))),
    });
    t.match(out, [{ kind: 'delivered' }, { kind: 'delivered' }, { kind: 'delivered' }, { kind: 'dead_token' }]);
    t.same(waits, [1000], 'one wait, the Retry-After');
    t.ok(Date.now() - started >= 1000);
    const sends = fcm.received.filter((r) => r.body.message.token.endsWith('-r1')).map((r) => r.body.message.token).sort();
    t.same(sends, ['dead-r1', 'fine-r1', 'quota-r1', 'quota-r1', 'retry-r1', 'retry-r1'], 'only the retryable ones were sent again');
  });

  t.test('an FCM answer dripped or oversized: timed out at the total deadline, or cut at the cap', async (t) => {
    const p = new FcmProvider(fcm.account, { endpoint: fcm.url, tokenUriRule, ca: fcm.ca, deadlineMs: 1500 });
    t.teardown(() => p.close());
    fcm.dripMs = 200; // an idle timeout of anything over 200 ms never trips
    t.teardown(() => void (fcm.dripMs = 1000));
    const out = await p.send(MESSAGE, [android('drip-1'), android('huge-1'), android('fine-dh')]);
    t.same(out.slice(0, 2), [
      { kind: 'retryable', error: 'FCM timed out' },
      { kind: 'config_error', error: 'FCM answer too large' },
    ]);
    t.equal(out[2]!.kind, 'delivered', 'the other streams of the session were answered');
    t.equal(p.sessions.sessionsOpened, 1, 'the session stayed usable');
  });

  t.test('a token_uri by host name: connected through the rule\'s lookup when the name is allowed, refused when not', async (t) => {
    const account = { ...fcm.account, token_uri: fcm.account.token_uri.replace('127.0.0.1', 'localhost') };
    const via = (allow: string[]) => {
      const p = new FcmProvider(account, { endpoint: fcm.url, ca: fcm.ca, tokenUriRule: { googleOnly: false, outbound: new OutboundPolicy(parseAllowList(allow)) } });
      t.teardown(() => p.close());
      return p.send(MESSAGE, [android('x')]);
    };
    const fetches = fcm.tokenFetches;
    t.same(await via([]), [{ kind: 'config_error', error: 'FCM token endpoint refused: private address' }]);
    t.equal(fcm.tokenFetches, fetches, 'refused before connecting');
    // The fake checks the assertion's audience against its own 127.0.0.1 URL, so it refuses the grant: it was reached.
    t.same(await via(['localhost']), [{ kind: 'config_error', error: 'FCM token endpoint answered 400 (invalid_grant): check the FCM service account' }]);
    t.equal(fcm.tokenFetches, fetches + 1, 'connected by name');
  });

  t.test("a token_uri off Google's host while the FCM endpoint is Google's: refused at send time", async (t) => {
    const fetches = fcm.tokenFetches;
    const p = new FcmProvider(fcm.account, { endpoint: fcm.url, tokenUriRule: { ...tokenUriRule, googleOnly: true }, ca: fcm.ca });
    t.teardown(() => p.close());
    t.same(await p.send(MESSAGE, [android('x')]), [
      { kind: 'config_error', error: "FCM token endpoint refused: the service account's token_uri must be on https://oauth2.googleapis.com (HERALD_FCM_ENDPOINT is Google's)" },
    ]);
    t.equal(fcm.tokenFetches, fetches, 'not fetched');
  });

  t.test('an unreachable endpoint is retryable', async (t) => {
    const p = new FcmProvider(fcm.account, { endpoint: 'https://127.0.0.1:1', tokenUriRule, ca: fcm.ca });
    t.teardown(() => p.close());
    // the token endpoint is the fake; the send endpoint refuses connections
    t.same(await p.send(MESSAGE, [android('x')]), [{ kind: 'retryable', error: 'FCM unreachable' }], 'the class, without the socket error');
  });
});

t.test('APNs', async (t) => {
  let apns: FakeApns;
  t.before(async () => {
    apns = await startFakeApns();
  });
  t.teardown(() => apns.close());
  const provider = (over: Partial<ConstructorParameters<typeof ApnsProvider>[0]> = {}) => {
    const p = new ApnsProvider(
      { keyP8: apns.keyP8, keyId: apns.keyId, teamId: apns.teamId, bundleId: apns.bundleId, production: false, ...over },
      { endpoint: apns.url, ca: apns.ca },
    );
    t.teardown(() => p.close());
    return p;
  };

  t.test('token auth checked by the fake; every classification', async (t) => {
    const p = provider();
    const out = await p.send({ ...MESSAGE, data: { aps: { badge: 9 }, order: 42 } }, [ios('ok-1'), ios('dead-1'), ios('badtoken-1'), ios('retry-1'), ios('busy-1')]);
    t.match(out[0], { kind: 'delivered', providerMessageId: /^[0-9A-F-]{36}$/ });
    t.match(out[1], { kind: 'dead_token', suppression: 'uninstalled', error: /410 Unregistered/ });
    t.match(out[2], { kind: 'dead_token', suppression: 'invalid_token', error: /400 BadDeviceToken/ });
    t.match(out[3], { kind: 'retryable', error: /503 ServiceUnavailable/ });
    t.match(out[4], { kind: 'retryable', error: /429 TooManyRequests/ });
    const got = apns.received.find((r) => r.path === '/3/device/ok-1')!;
    t.equal(got.headers['apns-topic'], apns.bundleId);
    t.match(got.headers.authorization, /^bearer ey/);
    t.same(got.body.aps, { alert: { body: 'World', title: 'Hello' }, 'mutable-content': 1 }, 'custom aps stripped');
    t.equal(got.body.order, 42);
  });

  t.test('a wrong key or key id is InvalidProviderToken, a wrong bundle id DeviceTokenNotForTopic: config errors', async (t) => {
    t.match(await provider({ keyP8: makeP8() }).send(MESSAGE, [ios('ok-2')]), [{ kind: 'config_error', error: /403 InvalidProviderToken/ }]);
    t.match(await provider({ keyId: 'OTHERKEY00' }).send(MESSAGE, [ios('ok-3')]), [{ kind: 'config_error', error: /InvalidProviderToken/ }]);
    t.match(await provider({ bundleId: 'com.example.other' }).send(MESSAGE, [ios('ok-4')]), [{ kind: 'config_error', error: /DeviceTokenNotForTopic/ }]);
    t.match(await provider({ keyP8: 'not a key' }).send(MESSAGE, [ios('ok-5')]), [{ kind: 'config_error', error: /APNs key is unusable/ }]);
    t.match(await provider({ teamId: '' }).send(MESSAGE, [ios('ok-6')]), [{ kind: 'config_error', error: /lack teamId/ }]);
  });

  t.test('a request APNs never answers: timed out at the deadline; the other devices keep their answers', async (t) => {
    const p = new ApnsProvider(
      { keyP8: apns.keyP8, keyId: apns.keyId, teamId: apns.teamId, bundleId: apns.bundleId, production: false },
      { endpoint: apns.url, ca: apns.ca, deadlineMs: 1000 },
    );
    t.teardown(() => p.close());
    t.match(await p.send(MESSAGE, [ios('stall-1'), ios('ok-stall'), ios('dead-stall')]), [
      { kind: 'retryable', error: 'APNs timed out' },
      { kind: 'delivered' },
      { kind: 'dead_token', error: 'APNs 410 Unregistered (the app was uninstalled)' },
    ]);
  });

  t.test('an unreachable APNs: classified, without node-apn\'s socket text', async (t) => {
    const p = new ApnsProvider({ keyP8: apns.keyP8, keyId: apns.keyId, teamId: apns.teamId, bundleId: apns.bundleId, production: false }, { endpoint: 'https://127.0.0.1:1', ca: apns.ca });
    t.teardown(() => p.close());
    t.same(await p.send(MESSAGE, [ios('x')]), [{ kind: 'retryable', error: 'APNs unreachable' }]);
  });

  t.test('retries: a 503 is retried and then delivered', async (t) => {
    const p = provider();
    const waits: number[] = [];
    const out = await sendWithRetries(p, MESSAGE, [ios('retry-r2'), ios('ok-r2')], { wait: (ms) => (waits.push(ms), new Promise((r) => setTimeout(r, ms))) });
    t.match(out, [{ kind: 'delivered' }, { kind: 'delivered' }]);
    t.equal(waits.length, 1);
    t.equal(apns.received.filter((r) => r.path === '/3/device/retry-r2').length, 2);
  });
});

t.test('sandbox: fail- refused, unregistered- a dead token, anything else delivered', async (t) => {
  const out = await new SandboxProvider().send(MESSAGE, [android('fine'), ios('fail-1'), android('unregistered-1')]);
  t.match(out, [
    { kind: 'delivered', providerMessageId: /^sandbox-/ },
    { kind: 'rejected', error: /provider refused/ },
    { kind: 'dead_token', suppression: 'uninstalled' },
  ]);
});

t.test('no credentials for the channel: a config error naming it', async (t) => {
  t.match(await new UnconfiguredProvider('apns', 'APNs').send(MESSAGE, [ios('x')]), [{ kind: 'config_error', error: /no APNs credentials/ }]);
});

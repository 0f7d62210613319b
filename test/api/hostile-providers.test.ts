// A tenant pointing Herald at hostile destinations (issue 22, findings 1, 3 and 4; docs/isolation.md):
// an FCM token_uri that streams a huge answer or drips one a byte at a time, or that names a
// loopback or private address. The worst such a workspace can do is fail its own sends, with a
// classified error ("FCM token endpoint answer too large", "… timed out", "… refused: private
// address", "… unreachable") that never carries a socket's text nor the endpoint's own words.
import t, { type Test } from 'tap';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { FcmProvider } from '../../src/push/index.js';
import { OutboundPolicy } from '../../src/net/destinations.js';
import { parseAllowList } from '../../src/domain/private-hosts.js';
import type { Res, TestServer } from '../helpers/server.js';
import { PushWs, isProviderError, isSent, pushToken, startFakes, startPushServer } from '../helpers/push.js';
import { NO_LIMITS, sessionError } from '../helpers/assert.js';
import { eventually, startServer } from '../helpers/server.js';

// One actor: every workspace shares it, so a hostile one that crashed or stalled it would be seen by the others.
const { s, fakes } = await startPushServer(t, { HERALD_PUSH_PROVIDER: 'live', HERALD_ACTORS: '1' });
const { fcm } = fakes;

/** A workspace whose FCM service account fetches its token from `tokenUri`, with one android device. */
async function withTokenUri(srv: TestServer, tokenUri: string, account = fcm.account): Promise<PushWs> {
  const w = await PushWs.create(srv);
  await w.channels({ fcm: { service_account: { ...account, token_uri: tokenUri } } });
  await w.personWith('p', [[pushToken(), 'android']]);
  return w;
}

const send = (w: PushWs) => w.send({ external_id: 'p', title: 'Hello', body: 'there' });

/** The send failed with exactly `error` in the 500 body and in the stored record; nothing of a socket's text. */
async function failedWith(t: Test, w: PushWs, r: Res, error: string): Promise<void> {
  const id = isProviderError(t, r);
  t.equal(r.body.error, `No device accepted the push: ${error}`, '500 body: the classified error');
  const st = await w.status(id);
  t.equal(st.body?.message?.status, 'failed');
  t.equal(st.body?.message?.error, error, 'status lookup: the classified error');
  for (const text of [r.text, st.text]) t.notMatch(text, /ECONN|EHOST|ENOTFOUND|EDESTINATION|socket|TLS|SSL|certificate|127\.0\.0\.1|localhost|::1/i, 'no socket text nor address');
}

t.test('a token endpoint streaming a huge 200: cut at the cap; the actor and other workspaces carry on', async (t) => {
  const hostile = await withTokenUri(s, `${fcm.url}/token/huge`);
  const good = await PushWs.create(s);
  await good.useFakes(fakes);
  await good.personWith('p', [[pushToken(), 'android']]);
  const hostileSend = send(hostile);
  // Served while the hostile answer streams in, and after.
  isSent(t, await send(good), 'fcm');
  await failedWith(t, hostile, await hostileSend, 'FCM token endpoint answer too large');
  isSent(t, await send(good), 'fcm');
  t.equal((await s.req('GET', '/healthz')).status, 200);
  t.ok(fcm.hugeBytesSent < 64 * 1024 ** 2, `the answer was not read on (${fcm.hugeBytesSent} bytes written before the hang-up, of 1 GiB)`);
  t.notMatch(s.stderr() + s.stdout(), /actor exited|RangeError/, 'no actor restarted');
});

t.test('error texts: a refused connection is "unreachable"; the endpoint\'s own words are not repeated', async (t) => {
  // A port nothing listens on: the tenant learns that the endpoint is unreachable, not why.
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const w = await withTokenUri(s, `https://127.0.0.1:${port}/token`);
  await failedWith(t, w, await send(w), 'FCM token endpoint unreachable');

  // The fake refuses a grant signed for another account with 400 invalid_grant "Invalid JWT Signature.":
  // the documented code is kept, the description is the endpoint's text and is not.
  const wrong = await PushWs.create(s);
  await wrong.channels({ fcm: { service_account: { ...fcm.account, client_email: 'someone-else@x.iam.gserviceaccount.com' } } });
  await wrong.personWith('p', [[pushToken(), 'android']]);
  await failedWith(t, wrong, await send(wrong), 'FCM token endpoint answered 400 (invalid_grant): check the FCM service account');
});

t.test('a token endpoint dripping its answer (a byte a second for 2 minutes): the send fails, timed out, within the request timeout', { timeout: 60_000 }, async (t) => {
  // Each fetch ends at the 10 s deadline; the retry budget (15 s) allows one more, so the route
  // answers after about 20 s, before the server's 30 s request timeout would answer 503.
  const before = fcm.dripsCut;
  const hostile = await withTokenUri(s, `${fcm.url}/token/drip`);
  const good = await PushWs.create(s);
  await good.useFakes(fakes);
  await good.personWith('p', [[pushToken(), 'android']]);
  const hostileSend = send(hostile);
  isSent(t, await send(good), 'fcm');
  await failedWith(t, hostile, await hostileSend, 'FCM token endpoint timed out');
  t.ok(await eventually(async () => fcm.dripsCut - before === 2), 'two fetches, each cut while the drip was going');
});

t.test('a token endpoint dripping its answer: the fetch ends at its total deadline, timed out (a short deadline, in process)', async (t) => {
  // The deadline is an option of the provider; the server's is 10 s, too long for a test to wait three attempts of.
  const before = fcm.dripsCut;
  const p = new FcmProvider(
    { ...fcm.account, token_uri: `${fcm.url}/token/drip` },
    { endpoint: fcm.url, ca: fcm.ca, deadlineMs: 1500, tokenUriRule: { googleOnly: false, outbound: new OutboundPolicy(parseAllowList(['127.0.0.1'])) } },
  );
  t.teardown(() => p.close());
  fcm.dripMs = 200; // an idle timeout of anything over 200 ms would never trip
  t.teardown(() => void (fcm.dripMs = 1000));
  t.same(await p.send({ title: 'x' }, [{ token: pushToken(), platform: 'android' }]), [{ kind: 'retryable', error: 'FCM token endpoint timed out' }]);
  t.ok(await eventually(async () => fcm.dripsCut - before === 1), 'Herald hung up while the drip (120 s) was still going');
});

t.test('private destinations (no HERALD_ALLOWED_PRIVATE_HOSTS)', async (t) => {
  const own = await startFakes(t);
  const strict = await startServer({ ...NO_LIMITS, ...own.env, HERALD_PUSH_PROVIDER: 'live', HERALD_ALLOWED_PRIVATE_HOSTS: undefined });
  t.teardown(() => strict.stop());
  const w = await PushWs.create(strict);

  t.test('an IP-literal token_uri on a loopback, private or link-local address is refused when set', async (t) => {
    for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '10.0.0.7', '169.254.169.254', '100.64.1.1', '[fd00::1]', '[fe80::1]', '0.0.0.0']) {
      const r = await strict.req('PUT', `/workspaces/${w.id}/channels/push`, {
        token: w.ws.token,
        body: { fcm: { service_account: { ...own.fcm.account, token_uri: `https://${host}:8443/token` } } },
      });
      sessionError(t, r, 400, 'VALIDATION_ERROR');
      t.match(r.body?.error?.details, [{ field: 'fcm.service_account.token_uri', message: /private, loopback or link-local/ }], `${host}: the field and the reason`);
    }
    t.equal((await strict.req('GET', `/workspaces/${w.id}/channels/push`, { token: w.ws.token })).body.data.channels.fcm.configured, false, 'nothing stored');
  });

  t.test('a host name resolving to loopback is refused when connecting, on the resolved address', async (t) => {
    const fetches = own.fcm.tokenFetches;
    // `localhost` is a name, so the PUT takes it; what it resolves to is judged at each connection.
    const listening = await withTokenUri(strict, `https://localhost:${new URL(own.fcm.url).port}/token`, own.fcm.account);
    await failedWith(t, listening, await send(listening), 'FCM token endpoint refused: private address');
    // A port where nothing listens answers the same: a tenant cannot map ports this way.
    const closed = await withTokenUri(strict, 'https://localhost:1/token', own.fcm.account);
    await failedWith(t, closed, await send(closed), 'FCM token endpoint refused: private address');
    t.equal(own.fcm.tokenFetches, fetches, 'no connection was made');
  });
});

t.test('an IP-literal token_uri set by other means is refused at send time, before any connection', async (t) => {
  const fetches = fcm.tokenFetches;
  const p = new FcmProvider(fcm.account, { endpoint: fcm.url, ca: fcm.ca, tokenUriRule: { googleOnly: false, outbound: new OutboundPolicy() } });
  t.teardown(() => p.close());
  t.same(await p.send({ title: 'x' }, [{ token: pushToken(), platform: 'android' }]), [{ kind: 'config_error', error: 'FCM token endpoint refused: private address' }]);
  t.equal(fcm.tokenFetches, fetches, 'no connection was made');
});

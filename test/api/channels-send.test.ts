// Sends through the credentials a workspace stored (docs/channels.md), end to end: a server
// with HERALD_PUSH_PROVIDER=live, HERALD_FCM_ENDPOINT / HERALD_APNS_ENDPOINT at the fake FCM and
// APNs, their certificates trusted through NODE_EXTRA_CA_CERTS (as a deployment trusts a private
// CA). POST /push/send reaches the fakes with the stored credentials; a platform without
// credentials is PROVIDER_ERROR naming the channel; a PUT is used by the very next send.
import t from 'tap';
import { newKey, newWorkspace, uniqueUser } from '../helpers/server.js';
import { startPushServer } from '../helpers/push.js';

const { s, fakes } = await startPushServer(t, { HERALD_PUSH_PROVIDER: 'live' });
const { fcm, apns } = fakes;

const apnsCreds = { key_p8: apns.keyP8, key_id: apns.keyId, team_id: apns.teamId, bundle_id: apns.bundleId };
const hex = (label: string) => Buffer.from(label.padEnd(32, '.')).toString('hex');

/** A workspace with `channels` stored, a key to send, and a person with the given devices. */
async function setup(channels: Record<string, unknown>, devices: { token: string; platform: string }[]) {
  const ws = await newWorkspace(s, 'Channels send');
  if (Object.keys(channels).length > 0) {
    const r = await s.req('PUT', `/workspaces/${ws.id}/channels/push`, { token: ws.token, body: channels });
    if (r.status !== 200) throw new Error(`PUT channels: ${r.status} ${r.text}`);
  }
  const key = (await newKey(s, ws, { permissions: ['push:send', 'devices:register'] })).key;
  const user = uniqueUser('recipient');
  for (const d of devices) {
    const r = await s.req('POST', `/people/${user}/devices`, { token: key, body: d });
    if (r.status !== 201) throw new Error(`device: ${r.status} ${r.text}`);
  }
  const send = (title: string) => s.req('POST', `/workspaces/${ws.id}/push/send`, { token: key, body: { external_id: user, title, body: 'World' } });
  return { ws, send };
}

t.test('a send reaches the fake APNs and FCM with the stored credentials', async (t) => {
  const ios = hex('e2e-ios-1');
  const { send } = await setup({ fcm: { service_account: fcm.account }, apns: apnsCreds }, [
    { token: ios, platform: 'ios' },
    { token: 'e2e-android-token-1', platform: 'android' },
  ]);
  const r = await send('End to end');
  t.equal(r.status, 200, r.text);
  t.equal(r.body.status, 'sent');
  t.ok(['apns', 'fcm'].includes(r.body.provider), `provider ${r.body.provider}`);
  const a = apns.received.find((x) => x.path === `/3/device/${ios}`);
  t.ok(a, 'APNs received it');
  t.equal(a?.headers['apns-topic'], apns.bundleId);
  t.match(a?.body.aps, { alert: { title: 'End to end', body: 'World' } });
  const f = fcm.received.find((x) => x.body.message.token === 'e2e-android-token-1');
  t.ok(f, 'FCM received it');
  t.equal(f?.path, `/v1/projects/${fcm.projectId}/messages:send`);
});

t.test('live: a platform without credentials is PROVIDER_ERROR naming the channel; nothing is sent', async (t) => {
  const before = fcm.received.length;
  const { send } = await setup({ apns: apnsCreds }, [{ token: 'e2e-android-nocreds-1', platform: 'android' }]);
  const r = await send('No FCM');
  t.equal(r.status, 500, r.text);
  t.equal(r.body.code, 'PROVIDER_ERROR');
  t.match(r.body.error, /no FCM credentials are configured in this workspace/);
  t.equal(fcm.received.length, before, 'nothing reached FCM');
});

t.test('a PUT is used by the next send at once (the actor that handled it dropped its providers)', async (t) => {
  const ios = hex('e2e-ios-2');
  const { ws, send } = await setup({ apns: apnsCreds }, [{ token: ios, platform: 'ios' }]);
  t.equal((await send('First')).status, 200);
  const put = await s.req('PUT', `/workspaces/${ws.id}/channels/push`, { token: ws.token, body: { apns: { bundle_id: 'com.example.other' } } });
  t.equal(put.status, 200, put.text);
  const wrong = await send('Wrong topic');
  t.equal(wrong.status, 500, wrong.text);
  t.match(wrong.body.error, /DeviceTokenNotForTopic/, 'sent with the new bundle id');
  t.equal((await s.req('PUT', `/workspaces/${ws.id}/channels/push`, { token: ws.token, body: { apns: { bundle_id: apns.bundleId } } })).status, 200);
  t.equal((await send('Right again')).status, 200);
  const topics = apns.received.filter((x) => x.path === `/3/device/${ios}`).map((x) => x.headers['apns-topic']);
  t.same(topics, [apns.bundleId, 'com.example.other', apns.bundleId]);
});

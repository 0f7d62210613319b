// Without HERALD_PUBLIC_URL, links and callback URLs are built on the address Herald listens on:
// with HERALD_PORT=0 (as the tests start Herald) that is the port picked when listening, never
// port 0.
import t from 'tap';
import { newWorkspace } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';

const s = await sharedServer();

t.test('the callback URLs name the port bound', async (t) => {
  const ws = await newWorkspace(s, 'Public URL');
  const r = await s.req('GET', `/workspaces/${ws.id}/channels`, { token: ws.token });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.data.sms.status_callback_url, `http://127.0.0.1:${s.port}/webhooks/sms/${ws.id}/status`);
  t.equal(r.body.data.sms.inbound_url, `http://127.0.0.1:${s.port}/webhooks/sms/${ws.id}/inbound`);
});

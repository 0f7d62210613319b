// GET /workspaces/{id}/people/{personId} (session): the dashboard's person page reads one
// person by UUID with their devices; another workspace's person, or a non-member, gets nothing.
import t from 'tap';
import { newKey, newWorkspace, uniqueUser } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';

const s = await sharedServer();
const ws = await newWorkspace(s);
const key = (await newKey(s, ws, { permissions: ['people:write', 'devices:write'] })).key;

t.test('a person and their devices', async (t) => {
  t.equal((await s.req('POST', '/identify', { token: key, body: { userId: 'ada', email: 'ada@example.com', traits: { plan: 'pro' } } })).status, 200);
  t.equal((await s.req('POST', '/people/ada/devices', { token: key, body: { token: 'apns-token-0123456789abcdef', platform: 'ios' } })).status, 201);
  const list = await s.req('GET', `/workspaces/${ws.id}/people`, { token: ws.token });
  const id = list.body.people[0].id as string;

  const r = await s.req('GET', `/workspaces/${ws.id}/people/${id}`, { token: ws.token });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.data.person.external_id, 'ada');
  t.equal(r.body.data.person.attributes.plan, 'pro');
  t.equal(r.body.data.devices.length, 1);
  t.equal(r.body.data.devices[0].platform, 'ios');
  t.equal(r.body.data.devices[0].device_token, 'apns-token-0123456789abcdef');

  const upper = await s.req('GET', `/workspaces/${ws.id}/people/${id.toUpperCase()}`, { token: ws.token });
  t.equal(upper.body.data?.person.id, id, 'the UUID in any case');

  const other = await newWorkspace(s, 'Other');
  const elsewhere = await s.req('GET', `/workspaces/${other.id}/people/${id}`, { token: other.token });
  t.equal(elsewhere.status, 404, "another workspace's person is not found");
  t.equal(elsewhere.body.error.code, 'PERSON_NOT_FOUND');
  const outsider = await s.req('GET', `/workspaces/${ws.id}/people/${id}`, { token: await s.session(uniqueUser('outsider')) });
  t.equal(outsider.status, 403, 'a non-member is refused');
});

t.test('unknown or malformed ids: 404', async (t) => {
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    const r = await s.req('GET', `/workspaces/${ws.id}/people/${id}`, { token: ws.token });
    t.equal(r.status, 404, id);
    t.equal(r.body.error.code, 'PERSON_NOT_FOUND', id);
  }
});

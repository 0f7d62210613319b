// GET /workspaces/{id}/events, the dashboard's event debugger (DECISIONS §14): the workspace's
// latest events, newest first, with both of the person's ids; `limit`, `before` paging back;
// this workspace's events only; session auth, members only. Reads lag writes slightly with the
// Log's sink (DATABASE_URL + NATS_URL), hence `eventually`.
import t from 'tap';
import { eventually, startServer, uniqueUser, workspaceWithKeys } from '../helpers/server.js';
import { FORBIDDEN, NO_LIMITS, UUID, ISO_MS, sessionError } from '../helpers/assert.js';

const s = await startServer(NO_LIMITS);
t.teardown(() => s.stop());
const setup = () => workspaceWithKeys(s, { write: ['events:write'] });

t.test('newest first, with external_id and person_id; limit and before page back; one workspace only', async (t) => {
  const { ws, write } = await setup();
  const other = await setup();
  const user = uniqueUser('debugged');
  const times = ['2024-01-01T00:00:01.000Z', '2024-01-01T00:00:02.000Z', '2024-01-01T00:00:03.000Z'];
  for (const [i, timestamp] of times.entries()) {
    const r = await s.req('POST', '/track', { token: write, body: { event: `step_${i}`, external_id: user, parameters: { i }, timestamp } });
    t.equal(r.status, 201, r.text);
  }
  t.equal((await s.req('POST', '/track', { token: other.write, body: { event: 'elsewhere', external_id: user } })).status, 201);
  const list = (query = '') => s.req('GET', `/workspaces/${ws.id}/events${query}`, { token: ws.token });

  // Returns the last answer even when it never holds three: the assertions then say what it held.
  let all = await list();
  await eventually(async () => (all = await list()).body?.events?.length === 3, 20_000);
  t.equal(all.status, 200);
  t.same(all.body.events.map((e: { type: string }) => e.type), ['step_2', 'step_1', 'step_0'], 'newest first, this workspace only');
  const [newest] = all.body.events;
  t.same(Object.keys(newest).sort(), ['created_at', 'external_id', 'id', 'parameters', 'person_id', 'type']);
  t.match(newest, { external_id: user, person_id: UUID, id: UUID, created_at: ISO_MS, parameters: { i: 2 } });
  t.match(all.body, { success: true, total: 3, limit: 50 });

  const first = await list('?limit=2');
  t.same(first.body.events.map((e: { type: string }) => e.type), ['step_2', 'step_1'], 'limit');
  const older = await list(`?limit=2&before=${encodeURIComponent(first.body.events[1].created_at)}`);
  t.same(older.body.events.map((e: { type: string }) => e.type), ['step_0'], 'before: the page after');
});

t.test('refusals: a bad before or limit names the field; a non-member and an API key are refused', async (t) => {
  const { ws, write } = await setup();
  sessionError(t, await s.req('GET', `/workspaces/${ws.id}/events?before=yesterday`, { token: ws.token }), 400, 'VALIDATION_ERROR', 'before');
  sessionError(t, await s.req('GET', `/workspaces/${ws.id}/events?limit=many`, { token: ws.token }), 400, 'VALIDATION_ERROR', 'limit');
  const stranger = await s.req('GET', `/workspaces/${ws.id}/events`, { token: await s.session(uniqueUser('stranger')) });
  t.equal(stranger.status, 403, 'not a member');
  t.same(stranger.body, FORBIDDEN);
  t.equal((await s.req('GET', `/workspaces/${ws.id}/events`, { token: write })).status, 403, 'an API key: sessions only');
  t.equal((await s.req('GET', `/workspaces/${ws.id}/events`)).status, 401, 'no credential');
});

// GET /workspaces/{id}/events, the dashboard's event debugger (README, Dashboard): the workspace's
// latest events, newest first, with both of the person's ids; `limit`, `before` paging back;
// this workspace's events only; session auth, members only. Reads lag writes slightly with the
// Log's sink (DATABASE_URL + NATS_URL), hence `eventually`.
import t from 'tap';
import { eventually, uniqueUser, workspaceWithKeys } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { FORBIDDEN, UUID, ISO_MS, sessionError } from '../helpers/assert.js';

const s = await sharedServer();
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

t.test("name: only the events of that name, in the debugger (with before) and on a person's events; this workspace only", async (t) => {
  const { ws, write } = await setup();
  const other = await setup();
  const [ada, bob] = [uniqueUser('ada'), uniqueUser('bob')];
  const track = (token: string, event: string, external_id: string, timestamp: string) => s.req('POST', '/track', { token, body: { event, external_id, timestamp } });
  for (const [i, [event, who]] of ([['signed_up', ada], ['viewed', ada], ['signed_up', bob], ['viewed', ada], ['signed_up_twice', ada]] as const).entries()) {
    t.equal((await track(write, event, who, `2024-02-01T00:00:0${i}.000Z`)).status, 201);
  }
  t.equal((await track(other.write, 'signed_up', ada, '2024-02-01T00:00:09.000Z')).status, 201);
  const list = (query: string) => s.req('GET', `/workspaces/${ws.id}/events${query}`, { token: ws.token });

  let named = await list('?name=signed_up');
  await eventually(async () => (named = await list('?name=signed_up')).body?.events?.length === 2, 20_000);
  t.same(named.body.events.map((e: { external_id: string; type: string }) => [e.type, e.external_id]), [['signed_up', bob], ['signed_up', ada]], 'the exact name, newest first, not another workspace\'s');
  const before = await list(`?name=signed_up&before=${encodeURIComponent(named.body.events[0].created_at)}&limit=1`);
  t.same(before.body.events.map((e: { external_id: string }) => e.external_id), [ada], 'with before and limit');
  t.same((await list('?name=signed')).body.events, [], 'not a prefix');
  sessionError(t, await list(`?name=${'x'.repeat(256)}`), 400, 'VALIDATION_ERROR', 'name');

  const adaId = named.body.events[1].person_id as string;
  const personEvents = (query: string) => s.req('GET', `/workspaces/${ws.id}/people/${adaId}/events${query}`, { token: ws.token });
  await eventually(async () => (await personEvents('')).body?.events?.length === 4, 20_000);
  const viewed = await personEvents('?name=viewed');
  t.equal(viewed.status, 200, viewed.text);
  t.same(viewed.body.events.map((e: { type: string }) => e.type), ['viewed', 'viewed'], "a person's events of that name");
  t.equal(viewed.body.total, 2);
  t.same((await personEvents('?name=viewed&limit=1')).body.events.length, 1, 'with limit');
  t.same((await personEvents('?name=nothing')).body.events, []);
  sessionError(t, await personEvents('?name='), 400, 'VALIDATION_ERROR', 'name');
});

t.test("a batch sharing one timestamp pages back whole by before_id, in the debugger and on a person's events", async (t) => {
  const { ws, write } = await setup();
  const user = uniqueUser('batched');
  const timestamp = '2024-03-01T00:00:00.000Z';
  const events = Array.from({ length: 5 }, (_, i) => ({ event: `e_${i}`, external_id: user, timestamp }));
  t.equal((await s.req('POST', '/track/batch', { token: write, body: { events } })).status, 201);
  t.equal((await s.req('POST', '/track', { token: write, body: { event: 'earlier', external_id: user, timestamp: '2024-02-29T00:00:00.000Z' } })).status, 201);

  const walk = async (path: string) => {
    const seen: string[] = [];
    let query = '?limit=2';
    for (let pages = 0; pages < 10; pages++) {
      const r = await s.req('GET', `${path}${query}`, { token: ws.token });
      t.equal(r.status, 200, r.text);
      const page = r.body.events as { id: string; type: string; created_at: string }[];
      seen.push(...page.map((e) => e.type));
      if (page.length < 2) break;
      const last = page[page.length - 1]!;
      query = `?limit=2&before=${encodeURIComponent(last.created_at)}&before_id=${last.id}`;
    }
    return seen;
  };
  const debugger_ = `/workspaces/${ws.id}/events`;
  await eventually(async () => (await s.req('GET', debugger_, { token: ws.token })).body?.events?.length === 6, 20_000);
  const all = await walk(debugger_);
  t.same([...all].sort(), ['e_0', 'e_1', 'e_2', 'e_3', 'e_4', 'earlier'], 'every event once, across the pages of the debugger');
  t.equal(all[5], 'earlier', 'the earlier event last');

  const personId = (await s.req('GET', debugger_, { token: ws.token })).body.events[0].person_id as string;
  t.same(await walk(`/workspaces/${ws.id}/people/${personId}/events`), all, "the person's events page the same");

  // Without before_id, `before` alone keeps its meaning: strictly earlier instants.
  const beforeOnly = await s.req('GET', `${debugger_}?before=${encodeURIComponent(timestamp)}`, { token: ws.token });
  t.same(beforeOnly.body.events.map((e: { type: string }) => e.type), ['earlier']);
  sessionError(t, await s.req('GET', `${debugger_}?before_id=${personId}`, { token: ws.token }), 400, 'VALIDATION_ERROR', 'before_id');
  sessionError(t, await s.req('GET', `${debugger_}?before=${encodeURIComponent(timestamp)}&before_id=nope`, { token: ws.token }), 400, 'VALIDATION_ERROR', 'before_id');
});

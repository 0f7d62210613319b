// Workspace analytics (docs/analytics.md): daily counts and distinct people of an event, and
// funnels (order, window, first step-1 event), on one data set with its answers written out by
// hand. CI runs this file in both modes: on the embedded default the answers come from
// PostgreSQL's events, with CLICKHOUSE_URL (and NATS_URL) from ClickHouse, so the same
// assertions check that both give the same answers. A deleted person's events still count in
// both (ClickHouse keeps its copy; the store moves them to analytics_events). Events reach
// ClickHouse through the Log's sink shortly after the track, hence `eventually`.
import t from 'tap';
import { eventually, newKey, uniqueUser, workspaceWithKeys } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { FORBIDDEN, sessionError } from '../helpers/assert.js';

const s = await sharedServer();
const { ws, write, remove, read } = await workspaceWithKeys(s, { write: ['events:write'], remove: ['people:delete'], read: ['events:read'] });
const other = await workspaceWithKeys(s, { write: ['events:write'], read: ['events:read'] });
const [p1, p2, p3, p4, p5] = ['p1', 'p2', 'p3', 'p4', 'p5'].map((l) => uniqueUser(l)) as [string, string, string, string, string];

// [person, event, timestamp]: the funnel signed_up → purchase_completed → subscription_started.
const DATA: [string, string, string][] = [
  // p1: every step, the third 23 h after the first; signs up again the next day.
  [p1, 'signed_up', '2025-03-01T10:00:00.000Z'],
  [p1, 'purchase_completed', '2025-03-01T12:00:00.000Z'],
  [p1, 'subscription_started', '2025-03-02T09:00:00.000Z'],
  [p1, 'signed_up', '2025-03-02T12:00:00.000Z'],
  // p2: subscribes before purchasing (not the funnel's order), then purchases: two steps. Deleted below.
  [p2, 'signed_up', '2025-03-01T11:00:00.000Z'],
  [p2, 'subscription_started', '2025-03-01T12:00:00.000Z'],
  [p2, 'purchase_completed', '2025-03-01T13:00:00.000Z'],
  // p3: purchases 25 h after signing up: outside a 1d window, inside 2d.
  [p3, 'signed_up', '2025-03-02T09:00:00.000Z'],
  [p3, 'purchase_completed', '2025-03-03T10:00:00.000Z'],
  [p3, 'subscription_started', '2025-03-03T11:00:00.000Z'],
  // p4: signs up after the range.
  [p4, 'signed_up', '2025-03-05T00:00:00.000Z'],
  [p4, 'purchase_completed', '2025-03-05T01:00:00.000Z'],
  // p5: purchases before signing up only.
  [p5, 'purchase_completed', '2025-03-01T09:00:00.000Z'],
  [p5, 'signed_up', '2025-03-01T09:30:00.000Z'],
];

const daily = (q: string, token = ws.token, id = ws.id) => s.req('GET', `/workspaces/${id}/analytics/events?${q}`, { token });
const funnel = (body: unknown, token = ws.token, id = ws.id) => s.req('POST', `/workspaces/${id}/analytics/funnel`, { token, body });
const STEPS = ['signed_up', 'purchase_completed', 'subscription_started'];
const MARCH = 'event=signed_up&from=2025-03-01&to=2025-03-03';

t.before(async () => {
  for (let i = 0; i < DATA.length; i += 5) {
    const events = DATA.slice(i, i + 5).map(([external_id, event, timestamp]) => ({ event, external_id, timestamp }));
    const r = await s.req('POST', '/track/batch', { token: write, body: { events } });
    if (r.status !== 201) throw new Error(`track failed: ${r.status} ${r.text}`);
  }
  // Another workspace's events of the same names and people, on the same days: never counted here.
  const r = await s.req('POST', '/track/batch', { token: other.write, body: { events: DATA.map(([external_id, event, timestamp]) => ({ event, external_id, timestamp })) } });
  if (r.status !== 201) throw new Error(`track failed: ${r.status} ${r.text}`);
  await eventually(async () => (await s.req('GET', `/people/${encodeURIComponent(p2)}/events`, { token: read })).body?.events?.length === 3, 20_000);
  const d = await s.req('DELETE', `/people/${encodeURIComponent(p2)}`, { token: remove });
  if (d.status !== 200) throw new Error(`delete failed: ${d.status} ${d.text}`);
  // Every event readable in the analytics store (ClickHouse lags the Log's sink).
  const all = await eventually(async () => (await daily('event=purchase_completed&from=2025-03-01&to=2025-03-05')).body?.total?.count === 5, 30_000);
  // And the other workspace's, which the sink may store after them.
  const others = await eventually(async () => (await daily('event=purchase_completed&from=2025-03-01&to=2025-03-05', other.ws.token, other.ws.id)).body?.total?.count === 5, 30_000);
  if (!all || !others) throw new Error('the events never reached the analytics store');
});

t.test('daily counts: every day of the range, distinct people per day and over the range', async (t) => {
  const r = await daily(MARCH);
  t.equal(r.status, 200, r.text);
  t.same(r.body, {
    success: true,
    event: 'signed_up',
    from: '2025-03-01',
    to: '2025-03-03',
    standard: true,
    days: [
      { date: '2025-03-01', count: 3, people: 3 },
      { date: '2025-03-02', count: 2, people: 2 },
      { date: '2025-03-03', count: 0, people: 0 },
    ],
    total: { count: 5, people: 4 },
  });
  const one = await daily('event=signed_up&from=2025-03-02&to=2025-03-02');
  t.same(one.body.days, [{ date: '2025-03-02', count: 2, people: 2 }], 'one day: its bounds are UTC midnights');
  const custom = await daily('event=purchase_completed&from=2025-03-01&to=2025-03-05');
  t.same(custom.body.total, { count: 5, people: 5 }, 'the deleted person\'s purchase still counts');
  t.equal(custom.body.standard, true);
  const none = await daily('event=never_seen&from=2025-03-01&to=2025-03-02');
  t.same(none.body, { success: true, event: 'never_seen', from: '2025-03-01', to: '2025-03-02', standard: false, days: [{ date: '2025-03-01', count: 0, people: 0 }, { date: '2025-03-02', count: 0, people: 0 }], total: { count: 0, people: 0 } });
});

t.test('funnel: order, the window from step 1, the first step-1 event in the range', async (t) => {
  const day = await funnel({ steps: STEPS, from: '2025-03-01', to: '2025-03-03', window: '1d' });
  t.equal(day.status, 200, day.text);
  t.same(day.body, {
    success: true,
    from: '2025-03-01',
    to: '2025-03-03',
    window: '1d',
    steps: [
      { event: 'signed_up', people: 4 },
      { event: 'purchase_completed', people: 2 },
      { event: 'subscription_started', people: 1 },
    ],
  }, 'p3 purchased 25 h after signing up; p2 subscribed before purchasing; p5 purchased before signing up');
  const twoDays = await funnel({ steps: STEPS, from: '2025-03-01', to: '2025-03-03', window: '2d' });
  t.same(twoDays.body.steps.map((x: { people: number }) => x.people), [4, 3, 2], 'a 2d window takes p3 to the end');
  const hours = await funnel({ steps: STEPS, from: '2025-03-01', to: '2025-03-03', window: '2h' });
  t.same(hours.body.steps.map((x: { people: number }) => x.people), [4, 2, 0], 'within 2 h: p1 and p2 purchase, nobody subscribes');
  const reversed = await funnel({ steps: ['purchase_completed', 'signed_up'], from: '2025-03-01', to: '2025-03-01', window: '1h' });
  t.same(reversed.body.steps.map((x: { people: number }) => x.people), [3, 1], 'purchase then sign-up within 1 h: p5 only');
  const later = await funnel({ steps: ['signed_up', 'purchase_completed'], from: '2025-03-04', to: '2025-03-06', window: '1d' });
  t.same(later.body.steps.map((x: { people: number }) => x.people), [1, 1], 'p4 in a later range');
  const repeated = await funnel({ steps: ['signed_up', 'signed_up'], from: '2025-03-01', to: '2025-03-03', window: '2d' });
  t.same(repeated.body.steps.map((x: { people: number }) => x.people), [4, 1], 'the same event twice: p1 signed up again');
});

t.test('an API key with events:read reads its own workspace; other keys and workspaces are refused', async (t) => {
  const byKey = await daily(MARCH, read);
  t.equal(byKey.status, 200, byKey.text);
  t.same(byKey.body.total, { count: 5, people: 4 }, 'the same answer as the session');
  t.equal((await funnel({ steps: STEPS, from: '2025-03-01', to: '2025-03-03', window: '1d' }, read)).status, 200);
  const without = await daily(MARCH, write);
  t.equal(without.status, 403, 'a key without events:read');
  t.same(without.body, FORBIDDEN);
  t.equal((await daily(MARCH, other.read)).status, 403, "another workspace's key");
  t.equal((await daily(MARCH, other.ws.token)).status, 403, "another workspace's owner");
  t.equal((await funnel({ steps: STEPS, from: '2025-03-01', to: '2025-03-03', window: '1d' }, other.ws.token)).status, 403);
  t.equal((await daily(MARCH, '')).status, 401, 'no credential');
  t.equal((await daily(MARCH, 'ws_live_garbage')).status, 401, 'a malformed key');
  const pub = await newKey(s, ws, { key_type: 'public' });
  t.equal((await daily(MARCH, pub.key)).status, 403, 'a public key (it cannot hold events:read)');
  const star = await newKey(s, ws, { permissions: ['*'] });
  t.equal((await daily(MARCH, star.key)).status, 200, '* opens it');
});

t.test('another workspace sees only its own events', async (t) => {
  const r = await daily(MARCH, other.ws.token, other.ws.id);
  // Its copy of the data set, with nobody deleted: p2's sign-up is there too.
  t.same(r.body.total, { count: 5, people: 4 });
  const empty = await workspaceWithKeys(s, {});
  const nothing = await daily(MARCH, empty.ws.token, empty.ws.id);
  t.same(nothing.body.total, { count: 0, people: 0 }, 'a workspace without events: zeros');
  const f = await funnel({ steps: STEPS, from: '2025-03-01', to: '2025-03-03', window: '1d' }, empty.ws.token, empty.ws.id);
  t.same(f.body.steps.map((x: { people: number }) => x.people), [0, 0, 0]);
});

t.test('bad input is 400 VALIDATION_ERROR naming the field', async (t) => {
  for (const [q, field] of [
    ['from=2025-03-01&to=2025-03-03', 'event'],
    ['event=signed_up&from=2025-02-30&to=2025-03-03', 'from'],
    ['event=signed_up&from=yesterday&to=2025-03-03', 'from'],
    ['event=signed_up&from=2025-03-03&to=2025-03-01', 'to'],
    ['event=signed_up&from=2024-01-01&to=2025-01-01', 'to'],
    ['event=signed_up&from=1969-12-31&to=1970-01-02', 'from'],
  ] as const) {
    sessionError(t, await daily(q), 400, 'VALIDATION_ERROR', field);
  }
  t.equal((await daily('event=signed_up&from=2024-01-01&to=2024-12-31')).status, 200, '366 days (a leap year) is the most');
  const base = { steps: STEPS, from: '2025-03-01', to: '2025-03-03', window: '1d' };
  for (const [body, field] of [
    [{ ...base, steps: ['signed_up'] }, 'steps'],
    [{ ...base, steps: [...STEPS, 'a', 'b', 'c'] }, 'steps'],
    [{ ...base, steps: ['signed_up', ''] }, 'steps.1'],
    [{ ...base, window: '1w' }, 'window'],
    [{ ...base, window: '91d' }, 'window'],
    [{ ...base, window: undefined }, 'window'],
    [{ ...base, to: '2025-02-28' }, 'to'],
    [{ ...base, extra: true }, 'extra'],
  ] as const) {
    const r = await funnel(body);
    sessionError(t, r, 400, 'VALIDATION_ERROR');
    t.ok(JSON.stringify(r.body.error.details).includes(field), `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.body.error.details)}`);
  }
  t.equal((await funnel({ ...base, steps: [...STEPS, 'a', 'b'], window: '90d' })).status, 200, '5 steps and a 90d window are the most');
});

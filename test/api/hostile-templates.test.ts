// Expensive templates from one workspace do not stall another (issue 22, finding 2): Liquid
// renders in the actor's render pool (src/render/pool.ts) within a budget per recipient and per
// send, so a push whose 30 custom_data fields are nested loops, or a batch of 20 such
// recipients, costs its own workspace a 400 or `failed` records, and the workspace sharing the
// actor (HERALD_ACTORS=1 makes it certain) is answered meanwhile. Before the pool, those renders
// ran on the actor thread for 12 s and more: every request to the actor then outlived the
// request timeout set here (503).
import t, { type Test } from 'tap';
import { badRequest } from '../helpers/assert.js';
import { PushWs, isSent, pushToken, startPushServer } from '../helpers/push.js';
import type { Res } from '../helpers/server.js';

const { s } = await startPushServer(t, {
  HERALD_ACTORS: '1',
  HERALD_REQUEST_TIMEOUT_MS: '8000',
  // A wider per-recipient budget than the default, so the hostile sends below stay in the pool
  // long enough for the bystander's requests to overlap them on any machine.
  HERALD_RENDER_BUDGET_MS: '250',
  HERALD_RENDER_SEND_BUDGET_MS: '1000',
});

/** About 0.4 s of rendering on the CI machine (below liquidjs's old 1 s per field, so all 30 fields ran). */
const loops = (n: number) => `{% for i in (1..${n}) %}{% for j in (1..${n}) %}{% endfor %}{% endfor %}`;
const thirtyFields = (n: number) => Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, loops(n)]));
/**
 * Seconds of rendering (2.6 s on this machine) that stays under liquidjs's memoryLimit: each range
 * counts against it, so loops(1000) alone ran out of memory (1,001,000) in 0.2 s on a fast machine,
 * before any budget, and failed with another error.
 */
const OUTLASTS_BUDGETS = '{% for i in (1..990) %}{% for j in (1..990) %}{% assign k = j %}{% endfor %}{% endfor %}';

const BUDGET = /template render budget exceeded \((250 ms per recipient|1000 ms per send)\)/;

/**
 * Sends `probe` (another workspace's request) one after another until `hostile` is answered;
 * every probe must succeed, and at least one must be answered before the hostile request is.
 */
async function servedMeanwhile(t: Test, hostile: Promise<Res>, probe: () => Promise<Res>, status: number): Promise<Res> {
  let done = false;
  const answer = hostile.finally(() => (done = true));
  let before = 0;
  while (!done) {
    const r = await probe();
    t.equal(r.status, status, `the other workspace is served: ${r.text.slice(0, 200)}`);
    if (r.status !== status) break;
    if (!done) before++;
  }
  t.ok(before >= 1, `answered while the hostile send was rendering (${before} requests)`);
  return answer;
}

const bystander = async () => {
  const w = await PushWs.create(s);
  let n = 0;
  return { w, track: () => s.req('POST', '/track', { token: w.keys.all, body: { event: 'probe', external_id: `p-${n++}` } }) };
};

t.test('a push with 30 nested-loop custom_data fields: 400 with the budget error; the other workspace is served meanwhile', async (t) => {
  const hostile = await PushWs.create(s);
  await hostile.personWith('h', [[pushToken(), 'android']]);
  const { track } = await bystander();

  const r = await servedMeanwhile(t, hostile.send({ external_id: 'h', title: 'x', custom_data: thirtyFields(600) }), track, 201);
  badRequest(t, r);
  t.match(r.body.message, BUDGET, r.text.slice(0, 300));
  t.match(r.body.details?.[0]?.field, /^custom_data\.f\d+$/, 'names the field the budget ran out in');
});

t.test('a batch of 20 such recipients: each failed with the budget error and stored so; the other workspace is served meanwhile', async (t) => {
  const hostile = await PushWs.create(s);
  const people: string[] = [];
  for (let i = 0; i < 20; i++) people.push(await hostile.personWith(`h${i}`, [[pushToken(), 'android']]));
  const { track } = await bystander();

  const r = await servedMeanwhile(t, hostile.batch({ title: 'x', custom_data: { loop: OUTLASTS_BUDGETS }, recipients: people.map((user_id) => ({ user_id })) }), track, 201);
  t.equal(r.status, 200, r.text.slice(0, 300));
  const results = r.body.results as { status: string; error: string; message_id: string }[];
  t.same(results.map((x) => x.status), Array(20).fill('failed'));
  for (const x of results) t.match(x.error, BUDGET);
  t.match(results[0]!.error, /250 ms per recipient/, 'the first recipients run out of their own budget');
  t.match(results[19]!.error, /1000 ms per send/, 'the rest fail once the send has spent its budget, unrendered');
  const stored = await hostile.status(results[19]!.message_id);
  t.equal(stored.body.message.status, 'failed');
  t.match(stored.body.message.error, BUDGET);
});

t.test("a workspace's queue of expensive sends does not hold another workspace's templated push", async (t) => {
  const hostile = await PushWs.create(s);
  const people: string[] = [];
  for (let i = 0; i < 5; i++) people.push(await hostile.personWith(`q${i}`, [[pushToken(), 'android']]));
  const { w } = await bystander();
  await w.personWith('ann', [[pushToken(), 'android']]);

  const batch = () => hostile.batch({ title: 'x', custom_data: { loop: OUTLASTS_BUDGETS }, recipients: people.map((user_id) => ({ user_id })) });
  let hostileDone = 0;
  const queue = Array.from({ length: 3 }, () => batch().finally(() => hostileDone++));
  // Let the hostile sends reach the pool first (not a measurement: the order below holds either way).
  await new Promise((r) => setTimeout(r, 200));
  const r = await w.send({ external_id: 'ann', title: 'Hi {{ person.external_id }}' });
  isSent(t, r);
  t.ok(hostileDone < 3, `answered before the hostile queue drained (${hostileDone} of 3 done)`);
  for (const h of await Promise.all(queue)) t.equal(h.status, 200, h.text.slice(0, 200));
});

t.test('a webhook campaign whose push node loops: its 20 sends failed with the budget error; the other workspace is served throughout', async (t) => {
  const hostile = await PushWs.create(s);
  const people: string[] = [];
  for (let i = 0; i < 20; i++) people.push(await hostile.personWith(`c${i}`, [[pushToken(), 'android']]));
  const { track } = await bystander();
  const hdr = { token: hostile.ws.token, headers: { 'x-workspace-id': hostile.id } };
  const node = { id: 'loop', type: 'push', title: 'x', custom_data: { loop: OUTLASTS_BUDGETS } };
  const c = await s.req('POST', '/campaigns', { ...hdr, body: { name: 'Loops', trigger_type: 'webhook', trigger_config: {}, audience_config: {}, workflow_definition: { nodes: [node] } } });
  t.equal(c.status, 201, c.text.slice(0, 300));
  const id = c.body.data.campaign.id as string;
  t.equal((await s.req('PUT', `/campaigns/${id}`, { ...hdr, body: { status: 'active' } })).status, 200);

  const fired = await s.req('POST', `/campaigns/${id}/trigger`, { token: hostile.keys.all, body: { workspace_id: hostile.id } });
  t.equal(fired.status, 202, fired.text.slice(0, 300));
  // The executor sends in the background: the other workspace keeps being served until all 20 failed.
  let failed = 0;
  while (failed < 20) {
    const r = await track();
    t.equal(r.status, 201, `the other workspace is served: ${r.text.slice(0, 200)}`);
    if (r.status !== 201) break;
    const st = await s.req('GET', `/campaigns/${id}`, hdr);
    t.equal(st.status, 200, st.text.slice(0, 200));
    if (st.status !== 200) break;
    failed = st.body.data.stats.failed;
  }
  const history = await hostile.history(people[19]!);
  t.equal(history.body.messages[0]?.status, 'failed');
  t.match(history.body.messages[0]?.error, BUDGET);
});

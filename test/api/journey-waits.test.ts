// Journeys waiting for an event (docs/campaigns-runtime.md, Journeys) through HTTP: the
// abandoned-cart journey (an event trigger, a wait of 2 days for purchase_completed, then an exit
// for those who bought and a split on traits.plan, email or SMS, for those who did not), run with
// HERALD_TIME_SCALE so the 2 days last seconds; a kill -9 while people wait; activation's refusals.
import t from 'tap';
import pg from 'pg';
import { ownDatabase } from '../helpers/database.js';
import { eventually, serversOnOneDir, startServer, storeUrl, workspaceWithKeys, type Herald } from '../helpers/server.js';

t.setTimeout(240_000);

const TWO_DAYS_S = 2 * 86_400;
type Ws = { id: string; token: string };
type Message = { external_id: string; channel: string; status: string };
type Nodes = Record<string, { entered: number; completed: number; took?: Record<string, number> }>;
const hdr = (ws: Ws) => ({ token: ws.token, headers: { 'x-workspace-id': ws.id } });

/** The abandoned-cart journey: a purchase (with a total above 0) in 2 days exits, else (an hour later) email for pro, SMS for the rest. */
const ABANDONED_CART = [
  { id: 'wait', type: 'wait_for_event', event_name: 'purchase_completed', filters: [{ field: 'parameters.total', operator: 'gt', value: 0 }], timeout: '2d', on_event: 'bought', on_timeout: 'pause' },
  { id: 'bought', type: 'exit' },
  // An hour's delay: unscaled, the test would wait for it in vain.
  { id: 'pause', type: 'delay', minutes: 60, next: 'plan' },
  { id: 'plan', type: 'split', condition: { field: 'traits.plan', operator: 'eq', value: 'pro' }, yes: 'mail', no: 'text' },
  { id: 'mail', type: 'email', subject: 'Your cart', text: 'Still thinking it over?', next: 'end' },
  { id: 'text', type: 'sms', body: 'Your cart misses you', next: 'end' },
  { id: 'end', type: 'exit' },
];

/** A workspace with these people and an active abandoned-cart campaign triggered by cart_abandoned. */
async function abandonedCart(s: Herald, people: { userId: string; email: string; phone: string; traits: Record<string, unknown> }[]) {
  const k = await workspaceWithKeys(s, { write: ['people:write', 'events:write'] });
  const p = await s.req('POST', '/people/batch', { token: k.write, body: { identify: people } });
  if (p.status !== 200) throw new Error(`people: ${p.status} ${p.text}`);
  const c = await s.req('POST', '/campaigns', { ...hdr(k.ws), body: { name: 'Abandoned cart', trigger_type: 'event', trigger_config: { event_names: ['cart_abandoned'] }, workflow_definition: { nodes: ABANDONED_CART } } });
  if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`);
  const id = c.body.data.campaign.id as string;
  const a = await s.req('PUT', `/campaigns/${id}`, { ...hdr(k.ws), body: { status: 'active' } });
  if (a.status !== 200) throw new Error(`activate: ${a.status} ${a.text}`);
  /** Tracks an event (on `on`: a server started again on the same store). */
  const track = async (userId: string, event: string, parameters: Record<string, unknown> = {}, on = s) => {
    const r = await on.req('POST', '/track', { token: k.write, body: { userId, event, parameters } });
    if (r.status !== 201) throw new Error(`track: ${r.status} ${r.text}`);
    return r.body.data as { status: string };
  };
  return { ws: k.ws, id, track };
}

async function messagesOf(s: Herald, ws: Ws, campaignId: string): Promise<Message[]> {
  const m = await s.req('GET', `/workspaces/${ws.id}/campaigns/${campaignId}/messages?limit=50`, { token: ws.token });
  return (m.body.messages ?? []) as Message[];
}

async function nodesOf(s: Herald, ws: Ws, campaignId: string): Promise<Nodes> {
  const r = await s.req('GET', `/campaigns/${campaignId}`, hdr(ws));
  return (r.body.data.nodes ?? {}) as Nodes;
}

const PEOPLE = [
  { userId: 'buyer', email: 'buyer@example.com', phone: '+15005550001', traits: { plan: 'pro' } },
  { userId: 'pro', email: 'pro@example.com', phone: '+15005550002', traits: { plan: 'pro' } },
  { userId: 'free', email: 'free@example.com', phone: '+15005550003', traits: { plan: 'free' } },
];

t.test('the abandoned-cart journey: the buyer exits with nothing, the others time out to the split, email or SMS', async (t) => {
  // 2 days last 6 s.
  const s = await startServer({ HERALD_TIME_SCALE: String(6 / TWO_DAYS_S) });
  t.teardown(() => s.stop());
  const j = await abandonedCart(s, PEOPLE);
  for (const p of PEOPLE) t.equal((await j.track(p.userId, 'cart_abandoned')).status, 'processed');
  await j.track('buyer', 'purchase_completed', { total: 42 });
  await j.track('free', 'purchase_completed', { total: 0 }); // the wait's filter refuses it: free still waits
  const messages = await eventually(async () => {
    const m = await messagesOf(s, j.ws, j.id);
    return m.length >= 2 ? m : null;
  }, 60_000);
  if (!messages) return t.fail('the timed-out people were messaged');
  const nodes = await eventually(async () => {
    const n = await nodesOf(s, j.ws, j.id);
    return n.end?.completed === 2 ? n : null;
  }, 30_000);
  // The buyer's late purchase, and the others' after their timeout, move nothing.
  await j.track('buyer', 'purchase_completed', { total: 1 });
  await j.track('pro', 'purchase_completed', { total: 1 });
  await new Promise((r) => setTimeout(r, 1000));
  t.same(
    (await messagesOf(s, j.ws, j.id)).map((m) => `${m.external_id}:${m.channel}`).sort(),
    ['free:sms', 'pro:email'],
    'the buyer got nothing; pro got the email, free the SMS',
  );
  t.same(nodes, {
    wait: { entered: 3, completed: 3, took: { bought: 1, pause: 2 } },
    bought: { entered: 1, completed: 1 },
    pause: { entered: 2, completed: 2 },
    plan: { entered: 2, completed: 2, took: { mail: 1, text: 1 } },
    mail: { entered: 1, completed: 1 },
    text: { entered: 1, completed: 1 },
    end: { entered: 2, completed: 2 },
  }, "the wait's took: one by the event, two by the timeout");
  t.same(await nodesOf(s, j.ws, j.id), nodes, 'each transition counted once');

  t.test('events racing the timeouts: each wait is left once, by one branch or the other', async (t) => {
    const people = Array.from({ length: 30 }, (_, i) => ({ userId: `r${i}`, email: `r${i}@example.com`, phone: `+1500555${String(1000 + i)}`, traits: { plan: 'pro' } }));
    const r = await abandonedCart(s, people);
    const started = Date.now();
    for (const p of people) await r.track(p.userId, 'cart_abandoned');
    // The purchases come one by one, the last cart's first, timed so that the deadlines (6 s after
    // each cart) fall among them: the first carts' buyers are late, the last carts' in time.
    const pace = (Date.now() - started) / people.length;
    await new Promise((res) => setTimeout(res, Math.max(0, started + 6_000 + pace - Date.now())));
    for (const p of [...people].reverse()) await r.track(p.userId, 'purchase_completed', { total: 5 });
    const nodes = await eventually(async () => {
      const n = await nodesOf(s, r.ws, r.id);
      return (n.bought?.completed ?? 0) + (n.end?.completed ?? 0) === people.length ? n : null;
    }, 60_000);
    if (!nodes) return t.fail('every journey ended');
    const took = nodes.wait!.took!;
    t.equal((took.bought ?? 0) + (took.pause ?? 0), people.length, `each wait left once (${took.bought ?? 0} by the event, ${took.pause ?? 0} by the timeout)`);
    t.equal(nodes.wait!.completed, people.length);
    const mails = await eventually(async () => {
      const m = await messagesOf(s, r.ws, r.id);
      return m.length >= (took.pause ?? 0) ? m : null;
    }, 30_000);
    if (!mails) return t.fail('the timed out were emailed');
    t.equal(mails.length, took.pause ?? 0, 'one email for each timed out, none for the others');
    t.equal(new Set(mails.map((m) => m.external_id)).size, mails.length, 'nobody twice');
  });

  t.test('activation refuses a bad wait, naming the node', async (t) => {
    const refused = async (nodes: object[]) => {
      const c = await s.req('POST', '/campaigns', { ...hdr(j.ws), body: { name: 'Bad', trigger_type: 'event', trigger_config: { event_names: ['x'] }, workflow_definition: { nodes } } });
      t.equal(c.status, 201, c.text);
      const r = await s.req('PUT', `/campaigns/${c.body.data.campaign.id as string}`, { ...hdr(j.ws), body: { status: 'active' } });
      t.equal(r.status, 400, r.text);
      t.equal(r.body.error?.code ?? r.body.code, 'ACTIVATION_FAILED');
      return (r.body.error?.details ?? r.body.details ?? []) as { field: string; message: string }[];
    };
    const push = { id: 'p', type: 'push', title: 'P' };
    const wait = { id: 'w', type: 'wait_for_event', event_name: 'paid', timeout: '1h', on_event: 'p', on_timeout: 'p' };
    t.match(await refused([{ ...wait, timeout: undefined }, push]), [{ field: 'workflow_definition.nodes.0.timeout', message: /is required on wait_for_event node w/ }], 'no timeout');
    for (const timeout of ['2 days', '0s', '400d', '-1h']) {
      t.match(await refused([{ ...wait, timeout }, push]), [{ field: 'workflow_definition.nodes.0.timeout', message: /must be a duration .* on wait_for_event node w/ }], `timeout ${timeout}`);
    }
    t.match(await refused([{ ...wait, event_name: undefined }, push]), [{ field: 'workflow_definition.nodes.0.event_name', message: /node w/ }], 'no event name');
    t.match(await refused([{ ...wait, on_event: undefined }, push]), [{ field: 'workflow_definition.nodes.0.on_event', message: /is required on wait_for_event node w/ }], 'a branch missing');
    t.match(await refused([{ ...wait, on_timeout: 'nowhere' }, push]), [{ field: 'workflow_definition.nodes.0.on_timeout', message: /names no node of the workflow \(nowhere\), on node w/ }], 'a dangling branch');
    t.match(await refused([{ ...wait, on_timeout: 'w' }, push]), [{ field: 'workflow_definition.nodes.0.on_timeout', message: /names node w itself/ }], 'a branch to itself');
    const cycle = await refused([{ id: 'a', type: 'push', title: 'A' }, { ...wait, on_timeout: 'a', on_event: 'p' }, push]);
    t.match(cycle, [{ field: 'workflow_definition.nodes.0', message: /node a is on a cycle \(a → w → a\)/ }], 'a cycle through the timeout');
    const filters = await refused([{ ...wait, filters: [{ field: 'parameters.total', operator: 'between', value: 1 }, { field: 'paid', operator: 'performed_count_gte', value: { count: 1 } }] }, push]);
    t.match(filters, [
      { field: 'workflow_definition.nodes.0.filters.0.operator', message: /is not a known operator.*\(wait_for_event node w\)/ },
      { field: 'workflow_definition.nodes.0.filters.1.operator', message: /performed_count_\* is not available on a wait/ },
    ], 'filters checked as an event trigger\'s, without counts');
  });
});

t.test('a kill -9 while people wait: after the restart each wait resumes or times out exactly once', async (t) => {
  const DB = await ownDatabase(t);
  // 2 days last 40 s: longer than a restart, so the buyer is still waiting when the server is back.
  const servers = await serversOnOneDir(t, { ...DB, HERALD_TIME_SCALE: String(40 / TWO_DAYS_S) }, 'wait-kill');
  const j = await abandonedCart(servers.first, PEOPLE.slice(0, 2));
  const store = async (s: Herald) => {
    const c = new pg.Client({ connectionString: storeUrl(s, DB) });
    c.on('error', () => {}); // the embedded store goes down with the kill
    await c.connect();
    t.teardown(() => c.end().catch(() => {}));
    return c;
  };
  const before = await store(servers.first);
  const waiting = `SELECT count(*)::int AS n FROM campaign_enrolments WHERE campaign_id = $1 AND next_node = 'wait' AND wait_until IS NOT NULL AND state = 'waiting'`;
  for (const p of PEOPLE.slice(0, 2)) await j.track(p.userId, 'cart_abandoned');
  t.ok(await eventually(async () => (await before.query(waiting, [j.id])).rows[0].n === 2, 30_000), 'both waits started');
  await servers.first.stop('SIGKILL');

  const again = await servers.again();
  await j.track('buyer', 'purchase_completed', { total: 9 }, again);
  const done = await eventually(async () => {
    const n = await nodesOf(again, j.ws, j.id);
    return n.end?.completed === 1 && n.bought?.completed === 1 ? n : null;
  }, 120_000);
  if (!done) return t.fail('the buyer exited and pro timed out to its email');
  await new Promise((r) => setTimeout(r, 1000));
  t.same((await messagesOf(again, j.ws, j.id)).map((m) => `${m.external_id}:${m.channel}`), ['pro:email'], 'one email, to pro; nothing to the buyer');
  t.same((await nodesOf(again, j.ws, j.id)).wait, { entered: 2, completed: 2, took: { bought: 1, pause: 1 } }, 'each wait left once');
  const states = await (await store(again)).query('SELECT state, next_node, wait_until FROM campaign_enrolments WHERE campaign_id = $1', [j.id]);
  t.same(states.rows, [{ state: 'done', next_node: null, wait_until: null }, { state: 'done', next_node: null, wait_until: null }], 'both journeys ended');
});

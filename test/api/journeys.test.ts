// Journeys (docs/campaigns-runtime.md, "Journeys") through HTTP against a running server: a split
// evaluated for each person when they reach it (push on yes, email on no), a random split's
// proportions by weight, an exit ending the journey, and activation's refusals naming the node.
import t from 'tap';
import pg from 'pg';
import { storeUrl, workspaceWithKeys, type Herald } from '../helpers/server.js';
import { heldOut } from '../../src/domain/journeys.js';
import { sharedServer } from '../helpers/shared-server.js';

const s: Herald = await sharedServer();

type Ws = { id: string; token: string };
type Message = { external_id: string; channel: string; status: string };
const hdr = (ws: Ws) => ({ token: ws.token, headers: { 'x-workspace-id': ws.id } });

/** Polls `f` until it answers something (or fails after `ms`). */
async function until<T>(f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A workspace with these people (batches of 100). */
async function workspace(people: { userId: string; email?: string; traits?: Record<string, unknown> }[]) {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  for (let i = 0; i < people.length; i += 100) {
    const r = await s.req('POST', '/people/batch', { token: k.write, body: { identify: people.slice(i, i + 100) } });
    if (r.status !== 200) throw new Error(`people: ${r.status} ${r.text}`);
  }
  return k;
}

async function create(ws: Ws, nodes: object[]): Promise<string> {
  const c = await s.req('POST', '/campaigns', { ...hdr(ws), body: { name: 'Journey', trigger_type: 'webhook', trigger_config: {}, audience_config: {}, workflow_definition: { nodes } } });
  if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`);
  return c.body.data.campaign.id as string;
}

/** Activates and triggers the campaign; answers once `count` messages are recorded. */
async function run(k: { ws: Ws; trigger: string }, nodes: object[], count: number): Promise<{ id: string; messages: Message[] }> {
  const id = await create(k.ws, nodes);
  const a = await s.req('PUT', `/campaigns/${id}`, { ...hdr(k.ws), body: { status: 'active' } });
  if (a.status !== 200) throw new Error(`activate: ${a.status} ${a.text}`);
  const f = await s.req('POST', `/campaigns/${id}/trigger`, { token: k.trigger, body: { workspace_id: k.ws.id } });
  if (f.status !== 202) throw new Error(`trigger: ${f.status} ${f.text}`);
  const messages = await until(async () => {
    const all: Message[] = [];
    let path = `/workspaces/${k.ws.id}/campaigns/${id}/messages?limit=50`;
    for (;;) {
      const m = await s.req('GET', path, { token: k.ws.token });
      const page = (m.body.messages ?? []) as (Message & { created_at: string; message_id: string })[];
      all.push(...page);
      const last = page[page.length - 1];
      if (page.length < 50 || !last) break;
      path = `/workspaces/${k.ws.id}/campaigns/${id}/messages?limit=50&before=${encodeURIComponent(last.created_at)}&before_id=${last.message_id}`;
    }
    return all.length >= count ? all : undefined;
  });
  return { id, messages };
}

t.test('a split sends push on yes and email on no, evaluating each person when they reach it', async (t) => {
  const k = await workspace([
    { userId: 'ann', email: 'ann@example.com', traits: { plan: 'pro' } },
    { userId: 'bob', email: 'bob@example.com', traits: { plan: 'free' } },
    { userId: 'cat', email: 'cat@example.com' },
  ]);
  const { id, messages } = await run(k, [
    { id: 'plan', type: 'split', condition: { field: 'traits.plan', operator: 'eq', value: 'pro' }, yes: 'thanks', no: 'upsell' },
    { id: 'thanks', type: 'push', title: 'Thanks, pro', next: 'done' },
    { id: 'upsell', type: 'email', subject: 'Go pro', text: 'Upgrade today' },
    { id: 'done', type: 'exit' },
  ], 3);
  const by = new Map(messages.map((m) => [m.external_id, m]));
  t.equal(messages.length, 3, 'one message per person');
  t.match(by.get('ann'), { channel: 'push' }, 'yes: the push node');
  t.match(by.get('bob'), { channel: 'email' }, 'no: the email node');
  t.match(by.get('cat'), { channel: 'email' }, 'a missing trait is a no');
  // Per-node stats: once the exit has run, every node's counts are in.
  const nodes = await until(async () => {
    const r = await s.req('GET', `/campaigns/${id}`, hdr(k.ws));
    const n = r.body.data.nodes as Record<string, { entered: number; completed: number; took?: Record<string, number> }> | undefined;
    return n?.done?.completed === 3 ? n : undefined;
  });
  t.same(nodes, {
    plan: { entered: 3, completed: 3, took: { thanks: 1, upsell: 2 } },
    thanks: { entered: 1, completed: 1 },
    upsell: { entered: 2, completed: 2 },
    done: { entered: 3, completed: 3 }, // upsell names no next: the node after it in the list
  }, 'entered, completed and the split\'s took per branch');
  const list = await s.req('POST', '/campaigns', { ...hdr(k.ws), body: { name: 'List', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'p', type: 'push', title: 'Hi' }] } } });
  const plain = await s.req('GET', `/campaigns/${list.body.data.campaign.id as string}`, hdr(k.ws));
  t.notOk('nodes' in plain.body.data, 'a list workflow reads as before');
});

t.test('an exit ends the journey: the node after it in the list is not run', async (t) => {
  const k = await workspace([{ userId: 'ann', traits: { vip: true } }, { userId: 'bob', traits: { vip: false } }]);
  const nodes = [
    { id: 'vip', type: 'split', condition: { field: 'traits.vip', operator: 'eq', value: true }, yes: 'hello', no: 'after' },
    { id: 'hello', type: 'push', title: 'Hello VIP', next: 'bye' },
    { id: 'bye', type: 'exit' },
    { id: 'after', type: 'email', subject: 'After the exit', text: 'Hi' },
  ];
  const { id } = await run(k, nodes, 2);
  // Had the exit fallen through to the next node of the list, ann would get its email too.
  await new Promise((r) => setTimeout(r, 2000));
  const m = await s.req('GET', `/workspaces/${k.ws.id}/campaigns/${id}/messages`, { token: k.ws.token });
  const got = (m.body.messages as Message[]).map((x) => `${x.external_id}:${x.channel}`).sort();
  t.same(got, ['ann:push', 'bob:email']);
});

t.test("a random split's branches take roughly their weights' shares, each enrolment once", async (t) => {
  const people = Array.from({ length: 200 }, (_, i) => ({ userId: `p${i}` }));
  const k = await workspace(people);
  const { messages } = await run(k, [
    { id: 'ab', type: 'random_split', branches: [{ weight: 1, next: 'a' }, { weight: 3, next: 'b' }] },
    { id: 'a', type: 'push', title: 'Variant A', next: 'end' },
    { id: 'b', type: 'email', subject: 'Variant B', text: 'B', next: 'end' },
    { id: 'end', type: 'exit' },
  ], 200);
  t.equal(new Set(messages.map((m) => m.external_id)).size, 200, 'everyone got one message');
  t.equal(messages.length, 200, 'and only one');
  const a = messages.filter((m) => m.channel === 'push').length;
  t.ok(a >= 25 && a <= 80, `about a quarter took A (weight 1 of 4): ${a} of 200`);
});

t.test('activation refuses cycles, unreachable nodes and dangling ids, naming the node', async (t) => {
  const k = await workspace([]);
  const refused = async (nodes: object[]) => {
    const id = await create(k.ws, nodes);
    const r = await s.req('PUT', `/campaigns/${id}`, { ...hdr(k.ws), body: { status: 'active' } });
    t.equal(r.status, 400, r.text);
    t.equal(r.body.error?.code ?? r.body.code, 'ACTIVATION_FAILED');
    return (r.body.error?.details ?? r.body.details ?? []) as { field: string; message: string }[];
  };
  const cycle = await refused([{ id: 'a', type: 'push', title: 'A' }, { id: 'b', type: 'push', title: 'B', next: 'a' }]);
  t.match(cycle, [{ field: 'workflow_definition.nodes.0', message: /node a is on a cycle/ }]);
  const dangling = await refused([{ id: 's', type: 'split', condition: { field: 'traits.x', operator: 'exists' }, yes: 'p', no: 'nowhere' }, { id: 'p', type: 'push', title: 'P' }]);
  t.match(dangling, [{ field: 'workflow_definition.nodes.0.no', message: /names no node of the workflow \(nowhere\), on node s/ }]);
  const unreachable = await refused([{ id: 'p', type: 'push', title: 'P', next: 'e' }, { id: 'lost', type: 'push', title: 'L' }, { id: 'e', type: 'exit' }]);
  t.match(unreachable, [{ field: 'workflow_definition.nodes.1', message: /node lost is unreachable/ }]);
  const weights = await refused([{ id: 'r', type: 'random_split', branches: [{ weight: 0, next: 'p' }, { weight: 1, next: 'p' }] }, { id: 'p', type: 'push', title: 'P' }]);
  t.match(weights, [{ field: 'workflow_definition.nodes.0.branches.0.weight' }]);
});

t.test('holdout_percent: that share of enrolments is held out, sent nothing, and counted', async (t) => {
  const k = await workspace(Array.from({ length: 200 }, (_, i) => ({ userId: `h${i}` })));
  const id = await create(k.ws, [{ id: 'p', type: 'push', title: 'Hi' }]);
  const tooMany = await s.req('PUT', `/campaigns/${id}`, { ...hdr(k.ws), body: { holdout_percent: 51 } });
  t.equal(tooMany.status, 400, 'at most 50');
  const set = await s.req('PUT', `/campaigns/${id}`, { ...hdr(k.ws), body: { holdout_percent: 30, status: 'active' } });
  t.equal(set.status, 200, set.text);
  t.equal(set.body.data.campaign.holdout_percent, 30);
  const f = await s.req('POST', `/campaigns/${id}/trigger`, { token: k.trigger, body: { workspace_id: k.ws.id } });
  t.equal(f.status, 202, f.text);
  const stats = await until(async () => {
    const r = await s.req('GET', `/campaigns/${id}`, hdr(k.ws));
    const st = r.body.data.stats as { held_out: number; skipped: number; sent: number; failed: number };
    return st.held_out + st.skipped + st.sent + st.failed >= 200 ? st : undefined;
  });
  // Exactly those the rule picks from their enrolment ids (a hash: about 30%, the same on every claim).
  const sql = new pg.Client({ connectionString: storeUrl(s) });
  await sql.connect();
  const rows = (await sql.query<{ id: string; state: string }>('SELECT id::text, state FROM campaign_enrolments WHERE campaign_id = $1', [id])).rows;
  await sql.end();
  const picked = rows.filter((r) => heldOut(r.id, 30));
  t.equal(stats.held_out, picked.length, `held out: ${stats.held_out} of 200, the ones the rule picks`);
  t.ok(picked.every((r) => r.state === 'held_out'), 'each of them held out');
  t.ok(rows.filter((r) => !heldOut(r.id, 30)).every((r) => r.state !== 'held_out'), 'no other held out');
  const m = await s.req('GET', `/workspaces/${k.ws.id}/campaigns/${id}/messages?limit=50`, { token: k.ws.token });
  t.equal(stats.held_out + stats.skipped + stats.sent + stats.failed, 200, 'every enrolment either held out or messaged, once');
  t.ok((m.body.messages as unknown[]).length > 0, 'the others were messaged');
});

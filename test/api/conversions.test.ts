// Campaign goals and conversions (docs/campaigns-runtime.md, Goals and conversions) through HTTP
// against a running server: a person who performs the goal event within the window after their
// first message of the campaign is converted exactly once (stats.converted, a `converted` event
// on that message), whoever tracks it late, early, twice, or got no message; a converted person
// leaves the journey (no message after the delay); the goal's validation.
import t, { type Test } from 'tap';
import pg from 'pg';
import { type Ws, sessionError } from '../helpers/assert.js';
import { checkResponse } from '../helpers/contract.js';
import { eventually, newKey, newWorkspace, storeUrl } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';

const s = await sharedServer();
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

const hdr = (ws: Ws) => ({ token: ws.token, headers: { 'x-workspace-id': ws.id } });

interface W {
  ws: Ws;
  key: string;
}
interface Message {
  message_id: string;
  external_id: string;
  status: string;
  sent_at: string | null;
  events: { type: string; at: string; details?: Record<string, unknown> }[];
}

async function workspace(): Promise<W> {
  const ws = await newWorkspace(s, 'Goals');
  return { ws, key: (await newKey(s, ws, { permissions: ['*'] })).key };
}

/** A person in `group`, with an android device (the sandbox provider accepts it) unless `device` is false. */
async function person(w: W, user: string, group: string, device = true): Promise<void> {
  const r = await s.req('POST', '/identify', { token: w.key, body: { userId: user, traits: { group } } });
  if (r.status !== 200) throw new Error(`identify: ${r.status} ${r.text}`);
  if (!device) return;
  const d = await s.req('POST', `/people/${user}/devices`, { token: w.key, body: { token: `tok-${user}-0123456789`, platform: 'android' } });
  if (d.status !== 201) throw new Error(`device: ${d.status} ${d.text}`);
}

/** A webhook campaign to group `a` with `goal`, activated and triggered: its id. */
async function campaign(w: W, nodes: object[], goal: object): Promise<string> {
  const c = await s.req('POST', '/campaigns', {
    ...hdr(w.ws),
    body: { name: 'Goal', trigger_type: 'webhook', trigger_config: {}, audience_config: { filters: [{ field: 'traits.group', operator: 'eq', value: 'a' }] }, workflow_definition: { nodes }, goal },
  });
  if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`);
  const id = c.body.data.campaign.id as string;
  const a = await s.req('PUT', `/campaigns/${id}`, { ...hdr(w.ws), body: { status: 'active' } });
  if (a.status !== 200) throw new Error(`activate: ${a.status} ${a.text}`);
  const f = await s.req('POST', `/campaigns/${id}/trigger`, { token: w.key, body: { workspace_id: w.ws.id } });
  if (f.status !== 202) throw new Error(`trigger: ${f.status} ${f.text}`);
  return id;
}

async function messages(w: W, id: string): Promise<Message[]> {
  const r = await s.req('GET', `/workspaces/${w.ws.id}/campaigns/${id}/messages?limit=100`, { token: w.ws.token });
  if (r.status !== 200) throw new Error(`messages: ${r.status} ${r.text}`);
  return r.body.messages;
}

/** The campaign's messages once there are `n`. */
async function messagesOnce(w: W, id: string, n: number): Promise<Message[]> {
  const all = await eventually(async () => {
    const m = await messages(w, id);
    return m.length >= n ? m : undefined;
  }, 30_000);
  if (!all) throw new Error(`fewer than ${n} messages`);
  return all;
}

async function stats(w: W, id: string): Promise<Record<string, number>> {
  const r = await s.req('GET', `/campaigns/${id}`, hdr(w.ws));
  await checkResponse('GET', `/api/v1/campaigns/${id}`, r.status, r.text);
  return r.body.data.stats;
}

async function track(t: Test, w: W, user: string, event: string, timestamp?: string): Promise<string> {
  const r = await s.req('POST', '/track', { token: w.key, body: { event, userId: user, ...(timestamp ? { timestamp } : {}) } });
  t.equal(r.status, 201, r.text);
  return r.body.data.event_id;
}

const later = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

t.test('converted once per person: in the window after the first message, not late, early, twice, nor without a message', async (t) => {
  const w = await workspace();
  for (const u of ['ann', 'bob', 'cal', 'dee', 'eve']) await person(w, u, 'a');
  await person(w, 'fay', 'b'); // not in the audience
  await person(w, 'gus', 'a', false); // in it, skipped: no device
  const id = await campaign(w, [{ id: 'hi', type: 'push', title: 'Hello' }], { event_name: 'purchase', within: '1h' });
  const sent = new Map((await messagesOnce(w, id, 6)).map((m) => [m.external_id, m]));
  t.equal(sent.get('gus')?.status, 'skipped', 'gus got no message');
  t.notOk(sent.has('fay'), 'fay is not in the audience');
  const sentAt = sent.get('cal')!.sent_at!;

  const annEvent = await track(t, w, 'ann', 'purchase');
  await track(t, w, 'bob', 'purchase');
  await track(t, w, 'cal', 'purchase', later(sentAt, 2 * 3_600_000)); // after the window
  // dee twice in one batch and once more: converted once.
  const batch = await s.req('POST', '/track/batch', { token: w.key, body: { events: [{ event: 'purchase', userId: 'dee' }, { event: 'purchase', userId: 'dee' }] } });
  t.equal(batch.status, 201, batch.text);
  await track(t, w, 'dee', 'purchase');
  await track(t, w, 'eve', 'logged_in'); // another event
  await track(t, w, 'eve', 'purchase', later(sent.get('eve')!.sent_at!, -60_000)); // before the first message
  await track(t, w, 'fay', 'purchase');
  await track(t, w, 'gus', 'purchase');
  // A redelivered event (the same messageId) converts no one again.
  for (let i = 0; i < 2; i++) {
    const r = await s.req('POST', '/track', { token: w.key, body: { event: 'purchase', userId: 'dee', messageId: 'once-dee' } });
    t.equal(r.status, 201, r.text);
  }

  // The conversions are recorded before /track answers.
  const st = await stats(w, id);
  t.equal(st.converted, 3, 'ann, bob and dee converted');
  const after = new Map((await messages(w, id)).map((m) => [m.external_id, m]));
  const converted = (u: string) => after.get(u)!.events.filter((e) => e.type === 'converted');
  t.equal(converted('ann').length, 1, "ann's message shows converted");
  t.equal(converted('ann')[0]!.details?.event_id, annEvent, 'naming the goal event');
  t.equal(converted('dee').length, 1, "dee's message shows converted once");
  for (const u of ['cal', 'eve', 'gus']) t.equal(converted(u).length, 0, `${u} did not convert`);
  const status = await s.req('GET', `/workspaces/${w.ws.id}/push/status/${after.get('ann')!.message_id}`, { token: w.key });
  t.equal(status.status, 200, status.text);
  t.match(status.text, /"type":"converted"/, 'the status route shows it too');
});

t.test('a converted person leaves the journey: no message after the delay', async (t) => {
  const w = await workspace();
  await person(w, 'pat', 'a');
  await person(w, 'quin', 'a');
  const id = await campaign(
    w,
    [
      { id: 'first', type: 'push', title: 'First' },
      { id: 'wait', type: 'delay', minutes: 60 },
      { id: 'second', type: 'push', title: 'Second' },
    ],
    { event_name: 'signed_up', within: '1d' },
  );
  await messagesOnce(w, id, 2);
  await track(t, w, 'pat', 'signed_up');
  t.equal((await stats(w, id)).converted, 1);
  // The hour passes: once quin waits at the delay, the wait comes due now.
  const waiting = await eventually(async () => {
    const r = await sql.query(`UPDATE campaign_enrolments SET due_at = now() WHERE campaign_id = $1 AND state = 'waiting' AND next_node = 'second' AND due_at > now() + interval '30 minutes'`, [id]);
    return r.rowCount === 1;
  }, 30_000);
  t.ok(waiting, 'quin waited at the delay');
  const all = await messagesOnce(w, id, 3);
  await new Promise((r) => setTimeout(r, 1_000)); // a second for a wrong send to show, were there one
  const titles = (u: string) => all.filter((m) => m.external_id === u).length;
  t.equal(titles('quin'), 2, 'quin got both messages');
  t.equal((await messages(w, id)).filter((m) => m.external_id === 'pat').length, 1, 'pat got only the first');
  const states = await sql.query<{ state: string; n: number }>('SELECT state, count(*)::int AS n FROM campaign_enrolments WHERE campaign_id = $1 GROUP BY state ORDER BY state', [id]);
  t.same(states.rows, [{ state: 'converted', n: 1 }, { state: 'done', n: 1 }], "pat's enrolment ended converted");
});

t.test('goal: validated, shown, removed with null', async (t) => {
  const w = await workspace();
  const create = (goal: unknown) => s.req('POST', '/campaigns', { ...hdr(w.ws), body: { name: 'G', trigger_type: 'webhook', trigger_config: {}, goal } });
  for (const [goal, field] of [
    [{ event_name: '', within: '3d' }, 'goal.event_name'],
    [{ event_name: 'purchase', within: '3w' }, 'goal.within'],
    [{ event_name: 'purchase', within: '400d' }, 'goal.within'],
    [{ event_name: 'purchase' }, 'goal.within'],
    [{ event_name: 'purchase', within: '3d', extra: 1 }, 'goal.extra'],
    ['purchase', 'goal'],
  ] as const) {
    const r = await create(goal);
    sessionError(t, r, 400, 'VALIDATION_ERROR');
    t.match(JSON.stringify(r.body.error.details), /goal/, `${JSON.stringify(goal)}: names ${field}`);
  }
  const ok = await create({ event_name: 'purchase', within: '3d' });
  t.equal(ok.status, 201, ok.text);
  await checkResponse('POST', '/api/v1/campaigns', ok.status, ok.text);
  const id = ok.body.data.campaign.id;
  t.same(ok.body.data.campaign.goal, { event_name: 'purchase', within: '3d' });
  t.equal((await stats(w, id)).converted, 0, 'converted shown for a campaign with a goal');
  const removed = await s.req('PUT', `/campaigns/${id}`, { ...hdr(w.ws), body: { goal: null } });
  t.equal(removed.status, 200, removed.text);
  t.notOk('goal' in removed.body.data.campaign, 'removed');
  t.notOk('converted' in (await stats(w, id)), 'and no converted count');
  const zero = await s.req('PUT', `/campaigns/${id}`, { ...hdr(w.ws), body: { goal: { event_name: 'x', within: '0d' } } });
  sessionError(t, zero, 400, 'VALIDATION_ERROR', 'goal.within');
  // A window the schema's pattern refuses is said as one too long is: what a window is.
  const rule = { field: 'goal.within', message: 'must be a window such as "3d", "12h" or "45m", at most 366 days' };
  t.same(zero.body.error.details, [rule], 'the window refused on a save, said plainly');
  t.same((await create({ event_name: 'purchase', within: '3w' })).body.error.details, [rule], 'and on a create');
});

// Event-triggered campaigns through the real HTTP server (docs/campaigns-runtime.md; README, Request bodies and Routes):
// a tracked event enrols its person in the active event campaigns listening to it, and their
// push goes out with the event in the template scope; filters on parameters, traits and person
// fields, and `properties`; max_per_user and first_occurrence held by storage under 20
// concurrent events and across batches; debounce; delay_minutes; performed_count_* counting
// every acknowledged event; the index following status changes at once; workspace isolation;
// and `accepted_with_warnings` when a trigger fails after the event is stored. Responses of
// /track and /track/batch are checked against the OpenAPI document.
import t, { type Test } from 'tap';
import pg from 'pg';
import { type Ws } from '../helpers/assert.js';
import { checkResponse } from '../helpers/contract.js';
import { eventually, newKey, newWorkspace, storeUrl, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';

const s = await sharedServer();
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

const hdr = (ws: Ws) => ({ token: ws.token, headers: { 'x-workspace-id': ws.id } });
const PUSH = { id: 'hello', type: 'push', title: 'Thanks {{ person.external_id }}', body: 'You bought {{ event.item }}' };

interface W {
  ws: Ws;
  key: string;
}

async function workspace(): Promise<W> {
  const ws = await newWorkspace(s, 'Events');
  return { ws, key: (await newKey(s, ws, { permissions: ['*'] })).key };
}

/** A person with traits and an android device (the sandbox provider accepts it). */
async function person(w: W, user: string, traits: Record<string, unknown> = {}, fields: Record<string, unknown> = {}): Promise<string> {
  const r = await s.req('POST', '/identify', { token: w.key, body: { userId: user, traits, ...fields } });
  if (r.status !== 200) throw new Error(`identify: ${r.status} ${r.text}`);
  const d = await s.req('POST', `/people/${user}/devices`, { token: w.key, body: { token: `tok-${user}-0123456789`, platform: 'android' } });
  if (d.status !== 201) throw new Error(`device: ${d.status} ${d.text}`);
  return r.body.person.id;
}

/** An active event campaign with `trigger_config` (event_names defaults to purchase). */
async function campaign(w: W, trigger: Record<string, unknown>, nodes: unknown[] = [PUSH]): Promise<string> {
  const c = await s.req('POST', '/campaigns', {
    ...hdr(w.ws),
    body: { name: 'On purchase', trigger_type: 'event', trigger_config: { event_names: ['purchase'], ...trigger }, workflow_definition: { nodes } },
  });
  if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`);
  const id = c.body.data.campaign.id as string;
  const a = await s.req('PUT', `/campaigns/${id}`, { ...hdr(w.ws), body: { status: 'active' } });
  if (a.status !== 200) throw new Error(`activate: ${a.status} ${a.text}`);
  return id;
}

async function track(t: Test, w: W, user: string, event = 'purchase', parameters: Record<string, unknown> = {}): Promise<Res> {
  const r = await s.req('POST', '/track', { token: w.key, body: { event, userId: user, parameters } });
  t.equal(r.status, 201, r.text);
  await checkResponse('POST', '/api/v1/track', r.status, r.text);
  return r;
}

async function batch(t: Test, w: W, events: { event?: string; userId: string; parameters?: Record<string, unknown> }[]): Promise<Res> {
  const r = await s.req('POST', '/track/batch', { token: w.key, body: { events: events.map((e) => ({ event: 'purchase', ...e })) } });
  t.equal(r.status, 201, r.text);
  await checkResponse('POST', '/api/v1/track/batch', r.status, r.text);
  return r;
}

/** The person's enrolments in the campaign (straight from the store: the stats count all people). */
async function enrolments(campaignId: string, personId: string): Promise<{ entry: number; run_id: string; due_at: Date; enrolled_at: Date }[]> {
  const r = await sql.query('SELECT entry, run_id, due_at, enrolled_at FROM campaign_enrolments WHERE campaign_id = $1 AND person_id = $2 ORDER BY entry', [campaignId, personId]);
  return r.rows;
}

const messages = (w: W, personId: string) => s.req('GET', `/workspaces/${w.ws.id}/people/${personId}/messages`, { token: w.ws.token }).then((r) => r.body.messages as Record<string, unknown>[]);

/** Waits until the sink has stored `n` events of the person (so first-seen and counts include them). */
async function stored(w: W, user: string, n: number): Promise<void> {
  await eventually(async () => (await s.req('GET', `/people/${user}/events`, { token: w.key })).body.total >= n);
}

t.test('a matching event enrols its person, and the push goes out with the event in scope', async (t) => {
  const w = await workspace();
  const ann = await person(w, 'ann');
  const id = await campaign(w, {});
  const r = await track(t, w, 'ann', 'purchase', { item: 'a lamp' });
  t.equal(r.body.data.status, 'processed');
  t.notOk('warnings' in r.body.data, 'no warnings');
  const e = await enrolments(id, ann);
  t.equal(e.length, 1, 'enrolled before the answer');
  t.equal(e[0]!.run_id, r.body.data.event_id, 'under the event as its run');
  await eventually(async () => (await messages(w, ann)).length === 1);
  const [m] = await messages(w, ann);
  t.equal(m!.title, 'Thanks ann');
  t.equal(m!.body, 'You bought a lamp');
  t.equal(m!.campaign_id, id);
  await track(t, w, 'ann', 'page_view');
  t.equal((await enrolments(id, ann)).length, 1, 'an event no campaign listens to enrols nobody');
  const g = await s.req('GET', `/campaigns/${id}`, hdr(w.ws));
  t.equal(g.body.data.stats.enrolled, 1);
  t.equal(g.body.data.stats.triggered, 1);
});

t.test('any of event_names fires the campaign; other workspaces and paused campaigns do not', async (t) => {
  const w = await workspace();
  const other = await workspace();
  const bo = await person(w, 'bo');
  await person(other, 'bo');
  const id = await campaign(w, { event_names: ['signup', 'upgrade'] });
  await track(t, w, 'bo', 'upgrade');
  await track(t, other, 'bo', 'upgrade');
  t.equal((await enrolments(id, bo)).length, 1, 'upgrade fired it');
  const n = await sql.query('SELECT count(*)::int AS n FROM campaign_enrolments WHERE campaign_id = $1', [id]);
  t.equal(n.rows[0].n, 1, "the other workspace's event enrolled nobody here");
  const p = await s.req('PUT', `/campaigns/${id}`, { ...hdr(w.ws), body: { status: 'paused' } });
  t.equal(p.status, 200);
  await track(t, w, 'bo', 'signup');
  t.equal((await enrolments(id, bo)).length, 1, 'paused: the next event enrols nobody');
  await s.req('PUT', `/campaigns/${id}`, { ...hdr(w.ws), body: { status: 'active' } });
  await track(t, w, 'bo', 'signup');
  t.equal((await enrolments(id, bo)).length, 2, 'active again: it does');
});

t.test('filters on parameters, traits and person fields, and properties', async (t) => {
  const w = await workspace();
  const pro = await person(w, 'pro', { plan: 'pro' }, { email: 'pro@example.com' });
  const free = await person(w, 'free', { plan: 'free' }, { email: 'free@example.com' });
  const id = await campaign(w, {
    filters: [
      { field: 'parameters.amount', operator: 'gte', value: 100 },
      { field: 'traits.plan', operator: 'eq', value: 'pro' },
      { field: 'person.email', operator: 'ends_with', value: '@example.com' },
    ],
    properties: { currency: 'EUR' },
  });
  await track(t, w, 'pro', 'purchase', { amount: 50, currency: 'EUR' });
  t.equal((await enrolments(id, pro)).length, 0, 'amount below the filter');
  await track(t, w, 'pro', 'purchase', { amount: 150, currency: 'USD' });
  t.equal((await enrolments(id, pro)).length, 0, 'properties not matched');
  await track(t, w, 'free', 'purchase', { amount: 150, currency: 'EUR' });
  t.equal((await enrolments(id, free)).length, 0, 'trait not matched');
  await track(t, w, 'pro', 'purchase', { amount: 150, currency: 'EUR' });
  t.equal((await enrolments(id, pro)).length, 1, 'every condition holds');
});

t.test('max_per_user holds under 20 concurrent identical events; without it each event is an entry', async (t) => {
  const w = await workspace();
  const cy = await person(w, 'cy');
  const once = await campaign(w, { max_per_user: 1 });
  const every = await campaign(w, {});
  const rs = await Promise.all(Array.from({ length: 20 }, () => s.req('POST', '/track', { token: w.key, body: { event: 'purchase', userId: 'cy' } })));
  t.same(rs.map((r) => r.status), Array(20).fill(201));
  t.ok(rs.every((r) => r.body.data.status === 'processed'), 'no warnings');
  t.equal((await enrolments(once, cy)).length, 1, 'enrolled once');
  const all = await enrolments(every, cy);
  t.same(all.map((e) => e.entry), Array.from({ length: 20 }, (_, i) => i + 1), 'twenty entries, numbered once each');
  const two = await campaign(w, { max_per_user: 2 });
  await batch(t, w, Array.from({ length: 5 }, () => ({ userId: 'cy' })));
  t.equal((await enrolments(two, cy)).length, 2, 'max_per_user 2 across a batch of 5');
});

t.test('first_occurrence: the first time the workspace sees the event for the person, across batches', async (t) => {
  const w = await workspace();
  const old = await person(w, 'old');
  const fresh = await person(w, 'fresh');
  await track(t, w, 'old', 'purchase');
  await stored(w, 'old', 1);
  const id = await campaign(w, { first_occurrence: true });
  await track(t, w, 'old', 'purchase');
  t.equal((await enrolments(id, old)).length, 0, 'seen before the campaign: not a first occurrence');
  const first = await batch(t, w, [{ userId: 'fresh' }, { userId: 'fresh' }, { userId: 'fresh', event: 'refund' }]);
  const e = await enrolments(id, fresh);
  t.equal(e.length, 1, 'one of the two in the batch is the first');
  t.equal(e[0]!.run_id, first.body.results[0].event_id, 'the first of the batch');
  await stored(w, 'fresh', 3);
  await batch(t, w, [{ userId: 'fresh' }]);
  t.equal((await enrolments(id, fresh)).length, 1, 'a later batch is not a first occurrence');
  const racer = await person(w, 'racer');
  await Promise.all(Array.from({ length: 10 }, () => s.req('POST', '/track', { token: w.key, body: { event: 'purchase', userId: 'racer' } })));
  t.equal((await enrolments(id, racer)).length, 1, 'ten concurrent first events: one enrolment');
});

t.test('debounce: no re-enrolment within that many seconds of the last', async (t) => {
  const w = await workspace();
  const dee = await person(w, 'dee');
  const id = await campaign(w, { debounce: 2 });
  await track(t, w, 'dee');
  await track(t, w, 'dee');
  await Promise.all(Array.from({ length: 5 }, () => s.req('POST', '/track', { token: w.key, body: { event: 'purchase', userId: 'dee' } })));
  t.equal((await enrolments(id, dee)).length, 1, 'within 2 s: once');
  await new Promise((r) => setTimeout(r, 2100));
  await track(t, w, 'dee');
  t.equal((await enrolments(id, dee)).length, 2, 'after 2 s: again');
});

t.test('delay_minutes: the workflow starts that much later', async (t) => {
  const w = await workspace();
  const eve = await person(w, 'eve');
  const id = await campaign(w, { delay_minutes: 0.05 }); // 3 s
  const sent = Date.now();
  await track(t, w, 'eve', 'purchase', { item: 'a chair' });
  const [e] = await enrolments(id, eve);
  t.ok(e!.due_at.getTime() - e!.enrolled_at.getTime() >= 2_900, `due 3 s after enrolment (${e!.due_at.getTime() - e!.enrolled_at.getTime()} ms)`);
  await new Promise((r) => setTimeout(r, 1_500));
  t.equal((await messages(w, eve)).length, 0, 'nothing sent before the delay');
  await eventually(async () => (await messages(w, eve)).length === 1, 15_000);
  t.ok(Date.now() - sent >= 3_000, 'sent after the delay');
});

t.test('performed_count_* count every event acknowledged, this one included', async (t) => {
  const w = await workspace();
  const fay = await person(w, 'fay');
  const id = await campaign(w, { filters: [{ field: 'purchase', operator: 'performed_count_eq', value: { count: 3 } }] });
  await track(t, w, 'fay');
  await track(t, w, 'fay');
  t.equal((await enrolments(id, fay)).length, 0, 'two purchases: not yet');
  await track(t, w, 'fay');
  t.equal((await enrolments(id, fay)).length, 1, 'the third: at once, with no wait for the sink by the client');
  await track(t, w, 'fay');
  t.equal((await enrolments(id, fay)).length, 1, 'the fourth: no longer eq 3');
});

t.test('a trigger failing after the event is stored answers accepted_with_warnings and keeps the event', async (t) => {
  const w = await workspace();
  const gus = await person(w, 'gus');
  const id = await campaign(w, {});
  const fine = await campaign(w, {});
  // A refusal planted on this campaign's enrolments only.
  await sql.query(`CREATE FUNCTION refuse_enrolment() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'planted refusal'; END $$`);
  await sql.query(`CREATE TRIGGER refuse BEFORE INSERT ON campaign_enrolments FOR EACH ROW WHEN (NEW.campaign_id = '${id}') EXECUTE FUNCTION refuse_enrolment()`);
  t.teardown(() => sql.query('DROP TRIGGER IF EXISTS refuse ON campaign_enrolments; DROP FUNCTION IF EXISTS refuse_enrolment()'));
  const r = await track(t, w, 'gus');
  t.equal(r.body.data.status, 'accepted_with_warnings');
  t.equal(r.body.data.warnings.length, 1);
  t.match(r.body.data.warnings[0], new RegExp(`campaign ${id} was not triggered: .*planted refusal`));
  t.equal((await enrolments(fine, gus)).length, 1, 'the other campaign enrolled');
  const b = await batch(t, w, [{ userId: 'gus' }, { userId: 'gus', event: 'page_view' }]);
  t.equal(b.body.results[0].status, 'accepted_with_warnings');
  t.equal(b.body.results[0].warnings.length, 1);
  t.equal(b.body.results[1].status, 'processed', 'the unmatched entry is processed');
  t.notOk('warnings' in b.body.results[1]);
  await stored(w, 'gus', 3);
  t.equal((await enrolments(fine, gus)).length, 2, 'nothing lost for the campaign that works');
});

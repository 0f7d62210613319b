// Segments through the real HTTP server (docs/audiences.md): CRUD; bad condition trees refused
// naming the limit or the path; the count and members computed in the background, then kept
// as people, events and devices arrive (no recomputation); segment_entered / segment_exited
// events with segment_id, triggering an event campaign; a campaign's audience_config
// {segment_id}; workspace isolation.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { eventually, newKey, newWorkspace, storeUrl, triggerWebhookCampaign } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { ISO_MS, UUID, sessionError, type Ws } from '../helpers/assert.js';
import { checkResponse } from '../helpers/contract.js';

const s = await sharedServer();
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

const segs = (ws: Ws, rest = '') => `/workspaces/${ws.id}/segments${rest}`;
const hdr = (ws: Ws) => ({ token: ws.token, headers: { 'x-workspace-id': ws.id } });

interface W {
  ws: Ws;
  key: string;
}

async function workspace(): Promise<W> {
  const ws = await newWorkspace(s, 'Segments');
  return { ws, key: (await newKey(s, ws, { permissions: ['*'] })).key };
}

async function identify(w: W, userId: string, traits: Record<string, unknown>, fields: Record<string, unknown> = {}): Promise<string> {
  const r = await s.req('POST', '/identify', { token: w.key, body: { userId, traits, ...fields } });
  if (r.status !== 200) throw new Error(r.text);
  return r.body.person.id;
}

async function track(w: W, userId: string, event: string): Promise<void> {
  const r = await s.req('POST', '/track', { token: w.key, body: { userId, event } });
  if (r.status !== 201) throw new Error(r.text);
}

async function segment(w: W, conditions: unknown, name = 'Buyers'): Promise<string> {
  const r = await s.req('POST', segs(w.ws), { token: w.ws.token, body: { name, conditions } });
  if (r.status !== 201) throw new Error(r.text);
  return r.body.data.segment.id;
}

const read = async (w: W, id: string) => (await s.req('GET', segs(w.ws, `/${id}`), { token: w.ws.token })).body.data.segment;
const ready = (w: W, id: string) => eventually(async () => (await read(w, id)).status === 'ready');
/**
 * Until the workspace's first `n` events are in the store: a segment computed from scratch reads
 * the store, which the JetStream Log's sink fills shortly after the answer (at once on the
 * embedded default). Events that arrive later reach the segment through their own evaluation.
 */
const stored = (w: W, n: number) =>
  eventually(async () => (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE workspace_id = $1', [w.ws.id])).rows[0]!.n >= n);
const members = async (w: W, id: string): Promise<string[]> =>
  ((await s.req('GET', segs(w.ws, `/${id}/people?limit=1000`), { token: w.ws.token })).body.people as { external_id: string }[]).map((p) => p.external_id).sort();

/** A workflow that sends nothing while the test runs: enrolments are what it reads. */
const WAIT_THEN_PUSH = { nodes: [{ id: 'wait', type: 'delay', minutes: 60 }, { id: 'hello', type: 'push', title: 'Hi', body: 'Welcome' }] };
const PRO_BUYERS = { all: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }, { event: { name: 'purchase', count: { op: 'gte', value: 2 }, within: '30d' } }] };

function nested(depth: number): unknown {
  let node: unknown = { field: 'traits.a', operator: 'exists' };
  for (let i = 0; i < depth; i++) node = { any: [node] };
  return node;
}

t.test('segments: create, read, list, rename, delete; bad trees are refused naming the limit', async (t) => {
  const w = await workspace();
  const r = await s.req('POST', segs(w.ws), { token: w.ws.token, body: { name: 'Pro buyers', conditions: PRO_BUYERS } });
  t.equal(r.status, 201, r.text);
  t.match(r.body.data.segment, { id: UUID, workspace_id: w.ws.id, name: 'Pro buyers', conditions: PRO_BUYERS, count: 0, created_at: ISO_MS });
  const id = r.body.data.segment.id;
  await ready(w, id);
  t.equal((await s.req('GET', segs(w.ws), { token: w.ws.token })).body.total, 1);
  const ten = (await s.req('GET', segs(w.ws), { token: w.ws.token })).body.segments.find((x: { name: string }) => x.name === 'ten');
  t.notOk(ten, 'not yet created');
  const u = await s.req('PUT', segs(w.ws, `/${id}`), { token: w.ws.token, body: { name: 'Renamed' } });
  t.equal(u.status, 200, u.text);
  t.equal(u.body.data.segment.name, 'Renamed');
  t.equal(u.body.data.segment.status, 'ready', 'a rename computes nothing');

  const refused = async (conditions: unknown, field: string, says: RegExp) => {
    const r = await s.req('POST', segs(w.ws), { token: w.ws.token, body: { name: 'bad', conditions } });
    sessionError(t, r, 400, 'VALIDATION_ERROR', field);
    t.match(r.body.error.message, says);
  };
  await refused(nested(12), 'conditions', /the limit is 10/);
  await refused(nested(11), 'conditions', /the limit is 10/);
  t.equal((await s.req('POST', segs(w.ws), { token: w.ws.token, body: { name: 'ten', conditions: nested(10) } })).status, 201, '10 deep is the limit');
  // 50 deep is refused before parsing: the body nests deeper than any body may.
  const deeper = await s.req('POST', segs(w.ws), { token: w.ws.token, body: { name: 'deeper', conditions: nested(50) } });
  sessionError(t, deeper, 400, 'VALIDATION_ERROR', 'body');
  t.match(deeper.text, /deeper than 32 levels/);
  const wide = { any: Array.from({ length: 1000 }, (_, i) => ({ field: `traits.t${i}`, operator: 'exists' })) };
  await refused(wide, 'conditions', /the limit is 200/);
  const bad = await s.req('POST', segs(w.ws), { token: w.ws.token, body: { name: 'bad', conditions: { all: [{ event: { name: 'x', count: { op: 'about', value: 1 } } }, { has_channel: 'fax' }] } } });
  sessionError(t, bad, 400, 'VALIDATION_ERROR', 'conditions.all.0.event.count');
  t.match(bad.text, /conditions\.all\.1\.has_channel/);
  await refused({ all: [{ event: { name: 'x', count: { op: 'gte', value: 1 }, within: '2y' } }] }, 'conditions.all.0.event.within', /at most 366 days/);
  await refused({ all: [{ in_list: randomUUID() }] }, 'conditions', /not of this workspace/);
  await refused({ all: [] }, 'conditions.all', /at least one/);
  await refused({ all: [{ field: 'parameters.x', operator: 'eq', value: 1 }] }, 'conditions.all.0.field', /traits/);
  sessionError(t, await s.req('GET', segs(w.ws, `/${randomUUID()}`), { token: w.ws.token }), 404, 'NOT_FOUND');
  sessionError(t, await s.req('GET', segs(w.ws, '/not-a-uuid'), { token: w.ws.token }), 404, 'NOT_FOUND');

  t.equal((await s.req('DELETE', segs(w.ws, `/${id}`), { token: w.ws.token })).status, 200);
  t.equal((await s.req('GET', segs(w.ws, `/${id}`), { token: w.ws.token })).status, 404);
});

t.test('count and members: computed in the background, then kept as traits, events and devices arrive', async (t) => {
  const w = await workspace();
  for (const u of ['ann', 'bo', 'cy']) await identify(w, u, { plan: u === 'cy' ? 'free' : 'pro' });
  for (const u of ['ann', 'ann', 'bo', 'cy', 'cy']) await track(w, u, 'purchase');
  t.ok(await stored(w, 5));
  const id = await segment(w, PRO_BUYERS);
  await ready(w, id);
  const seg = await read(w, id);
  t.equal(seg.count, 1, 'ann alone: bo bought once, cy is free');
  t.match(seg.progress, { walked: 3, total: 3 });
  t.same(await members(w, id), ['ann']);
  // The answers are the OpenAPI document's.
  for (const path of [segs(w.ws), segs(w.ws, `/${id}`), segs(w.ws, `/${id}/people`)]) {
    const r = await s.req('GET', path, { token: w.ws.token });
    await checkResponse('GET', `/api/v1${path}`, r.status, r.text);
  }

  await track(w, 'bo', 'purchase');
  t.equal((await read(w, id)).count, 2, 'bo entered with the event, before the answer');
  await identify(w, 'cy', { plan: 'pro' });
  t.same(await members(w, id), ['ann', 'bo', 'cy'], 'cy entered with the trait change');
  await identify(w, 'ann', { plan: 'free' });
  t.same(await members(w, id), ['bo', 'cy'], 'ann left');
  t.equal((await read(w, id)).count, 2);
  await identify(w, 'dee', { plan: 'pro' });
  t.equal((await read(w, id)).count, 2, 'a new person with no purchases is not a member');

  // Reachability: a device makes a person reachable by push.
  const push = await segment(w, { all: [{ has_channel: 'push' }] }, 'Push');
  await ready(w, push);
  t.equal((await read(w, push)).count, 0);
  const d = await s.req('POST', '/people/dee/devices', { token: w.key, body: { token: 'tok-dee-0123456789', platform: 'android' } });
  t.equal(d.status, 201, d.text);
  t.same(await members(w, push), ['dee']);
  const off = await s.req('DELETE', '/people/dee/devices', { token: w.key, body: { token: 'tok-dee-0123456789' } });
  t.equal(off.status, 200, off.text);
  t.same(await members(w, push), [], 'the device gone, dee left');

  // New conditions are computed again in the background.
  const u = await s.req('PUT', segs(w.ws, `/${id}`), { token: w.ws.token, body: { conditions: { any: [{ field: 'traits.plan', operator: 'eq', value: 'free' }] } } });
  t.equal(u.status, 200, u.text);
  await ready(w, id);
  t.same(await members(w, id), ['ann']);
  const counted = await sql.query('SELECT count(*)::int AS n FROM segment_members WHERE segment_id = $1', [id]);
  t.equal((await read(w, id)).count, counted.rows[0].n, 'the kept count is the members');
});

t.test('segment_entered and segment_exited are events that trigger campaigns; an audience by segment', async (t) => {
  const w = await workspace();
  const ann = await identify(w, 'ann', { plan: 'free' });
  const bo = await identify(w, 'bo', { plan: 'pro' });
  const id = await segment(w, { all: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }] }, 'Pro');
  await ready(w, id);
  t.same(await members(w, id), ['bo']);
  const c = await s.req('POST', '/campaigns', {
    ...hdr(w.ws),
    body: { name: 'Welcome to pro', trigger_type: 'event', trigger_config: { event_names: ['segment_entered'], filters: [{ field: 'parameters.segment_id', operator: 'eq', value: id }] }, workflow_definition: WAIT_THEN_PUSH },
  });
  t.equal(c.status, 201, c.text);
  const campaignId = c.body.data.campaign.id;
  const on = await s.req('PUT', `/campaigns/${campaignId}`, { ...hdr(w.ws), body: { status: 'active' } });
  t.equal(on.status, 200, on.text);

  await identify(w, 'ann', { plan: 'pro' });
  const enrolled = await sql.query('SELECT person_id::text FROM campaign_enrolments WHERE campaign_id = $1', [campaignId]);
  t.same(enrolled.rows.map((r) => r.person_id), [ann], 'ann entered, and the campaign enrolled her');
  await identify(w, 'bo', { plan: 'free' });
  const events = await eventually(async () => {
    const r = await s.req('GET', `/workspaces/${w.ws.id}/people/${bo}/events`, { token: w.ws.token });
    return (r.body.events as { type: string; parameters: Record<string, unknown> }[]).filter((e) => e.type.startsWith('segment_')).length > 0 ? r.body.events : null;
  });
  t.match(events, [{ type: 'segment_exited', parameters: { segment_id: id } }]);

  // A webhook campaign to the segment's members.
  const trigger = (await newKey(s, w.ws, { permissions: ['campaigns:trigger'] })).key;
  const hook = await s.req('POST', '/campaigns', { ...hdr(w.ws), body: { name: 'To pro', trigger_type: 'webhook', trigger_config: {}, audience_config: { segment_id: id }, workflow_definition: WAIT_THEN_PUSH } });
  t.equal(hook.status, 201, hook.text);
  t.equal((await s.req('PUT', `/campaigns/${hook.body.data.campaign.id}`, { ...hdr(w.ws), body: { status: 'active' } })).status, 200);
  const fired = await s.req('POST', `/campaigns/${hook.body.data.campaign.id}/trigger`, { token: trigger, body: { workspace_id: w.ws.id, trigger_data: {} } });
  t.equal(fired.status, 202, fired.text);
  t.equal(fired.body.people_queued ?? fired.body.data?.people_queued, 1, 'ann alone');
  const hooked = await sql.query('SELECT person_id::text FROM campaign_enrolments WHERE campaign_id = $1', [hook.body.data.campaign.id]);
  t.same(hooked.rows.map((r) => r.person_id), [ann]);

  sessionError(t, await s.req('DELETE', segs(w.ws, `/${id}`), { token: w.ws.token }), 409, 'SEGMENT_IN_USE');
  t.equal((await read(w, id)).name, 'Pro', 'still there');

  const both = await s.req('POST', '/campaigns', { ...hdr(w.ws), body: { name: 'x', trigger_type: 'webhook', trigger_config: {}, audience_config: { segment_id: id, filters: [] }, workflow_definition: WAIT_THEN_PUSH } });
  t.equal(both.status, 201, 'a draft is stored as sent');
  const act = await s.req('PUT', `/campaigns/${both.body.data.campaign.id}`, { ...hdr(w.ws), body: { status: 'active' } });
  t.equal(act.status, 400, 'segment_id with filters cannot go live');

  // A batch of identifies: its people evaluated together.
  const b = await s.req('POST', '/people/batch', { token: w.key, body: { identify: [{ userId: 'cy', traits: { plan: 'pro' } }, { userId: 'dan', traits: { plan: 'pro' } }, { userId: 'ann', traits: { plan: 'free' } }] } });
  t.equal(b.status, 200, b.text);
  t.same(await members(w, id), ['cy', 'dan']);
  const again = await sql.query('SELECT count(*)::int AS n FROM campaign_enrolments WHERE campaign_id = $1', [campaignId]);
  t.equal(again.rows[0].n, 3, 'cy and dan entered too, and were enrolled');
});

t.test('workspace isolation: segments, their members and audiences are the workspace\'s own', async (t) => {
  const a = await workspace();
  const b = await workspace();
  await identify(a, 'ann', { plan: 'pro' });
  await identify(b, 'ann', { plan: 'pro' });
  const id = await segment(a, { all: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }] });
  await ready(a, id);
  t.equal((await read(a, id)).count, 1, "b's ann is not a's");
  sessionError(t, await s.req('GET', `/workspaces/${b.ws.id}/segments/${id}`, { token: b.ws.token }), 404, 'NOT_FOUND');
  sessionError(t, await s.req('GET', `/workspaces/${b.ws.id}/segments/${id}/people`, { token: b.ws.token }), 404, 'NOT_FOUND');
  t.equal((await s.req('GET', `/workspaces/${a.ws.id}/segments/${id}`, { token: b.ws.token })).status, 403);
  const c = await s.req('POST', '/campaigns', { ...hdr(b.ws), body: { name: 'x', trigger_type: 'webhook', trigger_config: {}, audience_config: { segment_id: id }, workflow_definition: WAIT_THEN_PUSH } });
  sessionError(t, c, 400, 'VALIDATION_ERROR', 'audience_config.segment_id');
  await identify(b, 'ann', { plan: 'free' });
  t.equal((await read(a, id)).count, 1, "b's change leaves a's segment as it was");
  t.equal((await s.req('GET', `/workspaces/${b.ws.id}/segments`, { token: b.ws.token })).body.total, 0);
});

t.test('list membership: people imported into a list enter an in_list segment, without a recomputation', async (t) => {
  const w = await workspace();
  const l = await s.req('POST', `/workspaces/${w.ws.id}/lists`, { token: w.ws.token, body: { name: 'VIP' } });
  t.equal(l.status, 201, l.text);
  const listId = l.body.data.list.id;
  await identify(w, 'ann', { plan: 'pro' });
  const id = await segment(w, { all: [{ in_list: listId }, { any: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }, { field: 'traits.tier', operator: 'eq', value: 'gold' }] }] }, 'VIP pros');
  await ready(w, id);
  t.equal((await read(w, id)).count, 0);
  const computedAt = (await read(w, id)).computed_at;
  const up = await s.req('POST', `/workspaces/${w.ws.id}/lists/${listId}/import`, { token: w.ws.token, raw: 'external_id,tier\nann,\nbo,gold\ncy,tin\n', headers: { 'content-type': 'text/csv' } });
  t.equal(up.status, 202, up.text);
  await eventually(async () => (await members(w, id)).length === 2, 10_000);
  t.same(await members(w, id), ['ann', 'bo'], 'ann (pro) and bo (gold) entered with the import; cy (tin) did not');
  t.equal((await read(w, id)).computed_at, computedAt, 'kept, not computed again');
});

t.test('windowed event conditions expire on time, without a recomputation', async (t) => {
  const w = await workspace();
  await identify(w, 'ann', {});
  // An event 59 minutes and 50 seconds old: inside a 1-hour window for ten more seconds.
  const at = new Date(Date.now() - 3_590_000).toISOString();
  const r = await s.req('POST', '/track', { token: w.key, body: { userId: 'ann', event: 'visit', timestamp: at } });
  t.equal(r.status, 201, r.text);
  t.ok(await stored(w, 1));
  const id = await segment(w, { all: [{ event: { name: 'visit', count: { op: 'gte', value: 1 }, within: '60m' } }] }, 'Recent visitors');
  await ready(w, id);
  const entered = await members(w, id);
  t.same(entered, ['ann'], 'inside the window');
  const computedAt = (await read(w, id)).computed_at;
  const left = await eventually(async () => (await members(w, id)).length === 0, 30_000);
  t.ok(left, 'ann left once her visit aged out of the window');
  t.equal((await read(w, id)).computed_at, computedAt, 'aged, not computed again');
  // Read once the store has it (the JetStream Log's sink applies it shortly after).
  const exited = await eventually(async () => {
    const events = await s.req('GET', '/people/ann/events', { token: w.key });
    return (events.body.events as { type: string }[]).some((e) => e.type === 'segment_exited');
  });
  t.ok(exited, 'segment_exited recorded');
});

t.test('concurrent tracks: each person enters once, the count is the members', async (t) => {
  const w = await workspace();
  const id = await segment(w, { all: [{ event: { name: 'purchase', count: { op: 'gte', value: 1 } } }] }, 'Buyers');
  await ready(w, id);
  const users = Array.from({ length: 10 }, (_, i) => `u${i}`);
  await Promise.all([...users, ...users, ...users].map((u) => track(w, u, 'purchase')));
  t.equal((await read(w, id)).count, 10);
  t.same(await members(w, id), [...users].sort());
  const entered = await eventually(async () => {
    const r = await sql.query(`SELECT count(*)::int AS n FROM events WHERE workspace_id = $1 AND type = 'segment_entered'`, [w.ws.id]);
    return r.rows[0].n >= 10 ? r.rows[0].n : null;
  });
  t.equal(entered, 10, 'one segment_entered per person, however many of their events came together');
});

t.test('evaluated again after changes the person did not request: a device moved away, a complaint from the provider, an anonymous merge', async (t) => {
  const w = await workspace();
  // A token registered to eve, then to fay: eve has no device left.
  const push = await segment(w, { all: [{ has_channel: 'push' }] }, 'Push');
  await ready(w, push);
  for (const who of ['eve', 'fay']) {
    const d = await s.req('POST', `/people/${who}/devices`, { token: w.key, body: { token: 'tok-moving-0123456789', platform: 'ios' } });
    t.ok(d.status === 200 || d.status === 201, d.text);
  }
  t.same(await members(w, push), ['fay'], 'eve left when her token moved to fay');

  // A provider's complaint unsubscribes gil: no longer reachable by email.
  await identify(w, 'gil', {}, { email: 'gil@example.com' });
  const mail = await segment(w, { all: [{ has_channel: 'email' }] }, 'Email');
  await ready(w, mail);
  t.same(await members(w, mail), ['gil']);
  const campaign = await triggerWebhookCampaign(s, w.ws, w.key, { id: 'mail', type: 'email', subject: 'S', text: 'T' });
  const sent = await eventually(async () => {
    const r = await s.req('GET', `/workspaces/${w.ws.id}/campaigns/${campaign}/messages`, { token: w.ws.token });
    return (r.body?.messages as { message_id: string; to?: string }[] | undefined)?.find((m) => m.to === 'gil@example.com');
  }, 20_000);
  t.ok(sent, 'the email was sent');
  const hooks = await s.req('PUT', `/workspaces/${w.ws.id}/channels/email`, {
    token: w.ws.token, body: { smtp: { host: '127.0.0.1', port: 2525, security: 'none' }, from: { email: 'news@herald.example' }, webhooks: { provider: 'postmark', username: 'pm', password: 'pm-pass' } },
  });
  t.equal(hooks.status, 200, hooks.text);
  const complaint = await s.req('POST', `${s.base}/webhooks/email/${w.ws.id}`, {
    raw: JSON.stringify({ RecordType: 'SpamComplaint', ID: 'pm-complaint-1', MessageID: sent!.message_id }),
    headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('pm:pm-pass').toString('base64')}` },
  });
  t.match(complaint.body, { applied: 1 }, complaint.text);
  t.same(await members(w, mail), [], 'gil left with the complaint, before its answer');

  // The anonymous visitor's purchase moves to zed with the merge.
  const buyers = await segment(w, { all: [{ event: { name: 'purchase', count: { op: 'gte', value: 1 } } }] }, 'Buyers');
  await ready(w, buyers);
  await track(w, 'anon-7f3a', 'purchase');
  t.same(await members(w, buyers), ['anon-7f3a']);
  await identify(w, 'zed', {}, { anonymousId: 'anon-7f3a' });
  t.ok(await eventually(async () => (await members(w, buyers)).join() === 'zed', 10_000), 'zed entered once the merge moved the purchase');
});

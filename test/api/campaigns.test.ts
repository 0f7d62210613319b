// Campaign authoring through the real HTTP server (docs/campaigns-runtime.md;
// README, Routes and Errors): create, list, get with stats, update and status moves, each activation
// rule, scheduled on activation, delete, node messages, workspace isolation. Stats are also
// checked against enrolment rows written straight into the store, as the trigger work will.
import t, { type Test } from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { newKey, newWorkspace, storeUrl, uniqueUser, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { UUID, ISO_MS, FORBIDDEN, sessionError, type Ws } from '../helpers/assert.js';

const s = await sharedServer();
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

const CAMPAIGN_FIELDS = ['audience_config', 'created_at', 'id', 'name', 'status', 'trigger_config', 'trigger_type', 'updated_at', 'workflow_definition', 'workspace_id'];
const COUNTERS = { sent: 0, skipped: 0, policy_suppressed: 0, failed: 0, delivered: 0, bounced: 0, complained: 0, opened: 0, clicked: 0 };
const STATS = ['enrolled', 'triggered', ...Object.keys(COUNTERS), 'by_channel', 'last_triggered_at'];
/** A campaign's stats when all its messages are pushes with these counters (totals and by_channel). */
const pushStats = (runs: { enrolled: number; triggered: number; last_triggered_at: string | null }, push: Partial<typeof COUNTERS>) => ({
  ...runs,
  ...COUNTERS,
  ...push,
  by_channel: { push: { ...COUNTERS, ...push }, email: COUNTERS, sms: COUNTERS, webhook: COUNTERS },
});
const future = (days = 7) => new Date(Date.now() + days * 86_400_000).toISOString();
const past = () => new Date(Date.now() - 60_000).toISOString();

/** An event campaign with everything activation needs. */
const READY = {
  name: 'Welcome',
  trigger_type: 'event',
  trigger_config: { event_names: ['signed_up'] },
  workflow_definition: { nodes: [{ id: 'welcome', type: 'push', title: 'Welcome {{ person.first_name }}', body: 'Glad you are here' }] },
};

const hdr = (ws: Ws) => ({ token: ws.token, headers: { 'x-workspace-id': ws.id } });
const create = (ws: Ws, body: unknown) => s.req('POST', '/campaigns', { ...hdr(ws), body });
const get = (ws: Ws, id: string) => s.req('GET', `/campaigns/${id}`, hdr(ws));
const put = (ws: Ws, id: string, body: unknown) => s.req('PUT', `/campaigns/${id}`, { ...hdr(ws), body });
const del = (ws: Ws, id: string) => s.req('DELETE', `/campaigns/${id}`, hdr(ws));
const list = (ws: Ws, query = '') => s.req('GET', `/campaigns${query}`, hdr(ws));
const nodeMessage = (ws: Ws, id: string, node: string, body: unknown) => s.req('PUT', `/workspaces/${ws.id}/campaigns/${id}/node-messages/${node}`, { token: ws.token, body });

interface Campaign {
  id: string;
  updated_at: string;
  [field: string]: unknown;
}

async function created(t: Test, ws: Ws, body: unknown): Promise<Campaign> {
  const r = await create(ws, body);
  t.equal(r.status, 201, r.text);
  return r.body.data.campaign;
}

/** The fields ACTIVATION_FAILED lists, sorted. */
function activationFailed(t: Test, r: Res): string[] {
  sessionError(t, r, 400, 'ACTIVATION_FAILED');
  const details = r.body?.error?.details ?? [];
  t.ok(Array.isArray(details) && details.length > 0, 'details list the problems');
  for (const d of details) t.type(d.message, 'string');
  return details.map((d: { field: string }) => d.field).sort();
}

t.test('POST /campaigns creates a draft', async (t) => {
  const ws = await newWorkspace(s);
  const r = await create(ws, { name: 'Bare', trigger_type: 'webhook', trigger_config: {} });
  t.equal(r.status, 201, r.text);
  t.equal(r.body.success, true);
  t.same(Object.keys(r.body.data).sort(), ['campaign', 'message', 'warnings']);
  t.type(r.body.data.message, 'string');
  t.same(r.body.data.warnings, []);
  const c = r.body.data.campaign;
  t.same(Object.keys(c).sort(), CAMPAIGN_FIELDS, 'no template_id when none was given');
  t.match(c.id, UUID);
  t.equal(c.workspace_id, ws.id);
  t.equal(c.name, 'Bare');
  t.equal(c.status, 'draft');
  t.equal(c.trigger_type, 'webhook');
  t.same(c.trigger_config, {});
  t.same(c.audience_config, {});
  t.same(c.workflow_definition, { nodes: [] });
  t.match(c.created_at, ISO_MS);
  t.equal(c.created_at, c.updated_at);

  // Lenient at creation: an event campaign without event_names, with an unknown operator, is a draft.
  const lenient = await created(t, ws, { name: 'Later', trigger_type: 'event', trigger_config: { filters: [{ field: 'x', operator: 'like' }] }, audience_config: { match: 'most' } });
  t.equal(lenient.status, 'draft');
  t.same(lenient.audience_config, { match: 'most' }, 'kept as written');
  const full = await created(t, ws, READY);
  t.same(full.workflow_definition, READY.workflow_definition);
  t.same(full.trigger_config, READY.trigger_config);
});

t.test('POST /campaigns refuses a body without its required fields, and event_name', async (t) => {
  const ws = await newWorkspace(s);
  for (const [body, field] of [
    [{ trigger_type: 'event', trigger_config: {} }, 'name'],
    [{ name: 'x', trigger_config: {} }, 'trigger_type'],
    [{ name: 'x', trigger_type: 'event' }, 'trigger_config'],
    [{ name: 'x', trigger_type: 'sms', trigger_config: {} }, 'trigger_type'],
    [{ name: 'x', trigger_type: 'event', trigger_config: [] }, 'trigger_config'],
    [{ name: 'x', trigger_type: 'event', trigger_config: {}, workflow_definition: { nodes: [{ id: 'a', type: 'whatsapp' }] } }, 'workflow_definition.nodes.0.type'],
    [{ name: 'x', trigger_type: 'event', trigger_config: {}, workflow_definition: { nodes: [{ id: 'a', type: 'delay' }] } }, 'workflow_definition.nodes.0.minutes'],
    [{ name: 'x', trigger_type: 'event', trigger_config: {}, workflow_definition: { nodes: [{ id: 'a', type: 'push' }, { id: 'a', type: 'push' }] } }, 'workflow_definition.nodes.1.id'],
    [{ name: 'x', trigger_type: 'event', trigger_config: {}, workflow_definition: { nodes: [{ id: 'a/b', type: 'push' }] } }, 'workflow_definition.nodes.0.id'],
    [{ name: 'x', trigger_type: 'event', trigger_config: {}, template_id: randomUUID() }, 'template_id'],
  ] as const) {
    sessionError(t, await create(ws, body), 400, 'VALIDATION_ERROR', field);
  }
  const singular = await create(ws, { name: 'x', trigger_type: 'event', trigger_config: { event_name: 'signed_up' } });
  sessionError(t, singular, 400, 'INVALID_TRIGGER_CONFIG');
  t.match(singular.body.error.message, /replaced by event_names/);
  t.same(singular.body.error.details.map((d: { field: string }) => d.field), ['trigger_config.event_name']);
  t.equal((await list(ws)).body.total, 0, 'nothing was created');
});

t.test('GET /campaigns/{id}: the campaign, its stats and a message', async (t) => {
  const ws = await newWorkspace(s);
  const c = await created(t, ws, READY);
  const r = await get(ws, c.id);
  t.equal(r.status, 200, r.text);
  t.equal(r.body.success, true);
  t.same(Object.keys(r.body.data).sort(), ['campaign', 'message', 'stats']);
  t.same(r.body.data.campaign, c);
  t.type(r.body.data.message, 'string');
  t.same(r.body.data.stats, pushStats({ enrolled: 0, triggered: 0, last_triggered_at: null }, {}));
  t.same(Object.keys(r.body.data.stats).sort(), [...STATS].sort());
  // Upper-case ids name the same campaign.
  t.equal((await get(ws, c.id.toUpperCase())).body.data?.campaign?.id, c.id);
});

t.test('stats count the push records attributed to the campaign in its workspace, by status', async (t) => {
  const ws = await newWorkspace(s);
  const all = (await newKey(s, ws, { permissions: ['*'] })).key;
  const c = await created(t, ws, READY);
  const register = (user: string, token: string) => s.req('POST', `/people/${user}/devices`, { token: all, body: { token, platform: 'android' } });
  const send = (user: string, campaignId: string) => s.req('POST', `/workspaces/${ws.id}/push/send`, { token: all, body: { external_id: user, title: 'Hi', campaign_id: campaignId } });
  t.equal((await register('ok-user', `tok-${randomUUID()}`)).status, 201);
  t.equal((await register('bad-user', `fail-${randomUUID()}`)).status, 201);
  t.equal((await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { send_policy: { max_pushes_per_day: 1 } } } })).status, 200);

  t.equal((await send('ok-user', c.id)).body.status, 'sent');
  t.equal((await send('ok-user', c.id)).body.status, 'policy_suppressed', 'over the daily cap');
  t.equal((await send('bad-user', c.id)).status, 500, 'the provider refused: failed');
  t.equal((await send('nobody-has-devices', c.id)).status, 404);
  await send('ok-user', randomUUID()); // another campaign's

  // The same campaign id sent from another workspace does not count.
  const other = await newWorkspace(s);
  const otherKey = (await newKey(s, other, { permissions: ['*'] })).key;
  await s.req('POST', '/people/u/devices', { token: otherKey, body: { token: `tok-${randomUUID()}`, platform: 'android' } });
  t.equal((await s.req('POST', `/workspaces/${other.id}/push/send`, { token: otherKey, body: { external_id: 'u', title: 'Hi', campaign_id: c.id } })).body.status, 'sent');

  const stats = (await get(ws, c.id)).body.data.stats;
  t.same(stats, pushStats({ enrolled: 0, triggered: 0, last_triggered_at: null }, { sent: 1, policy_suppressed: 1, failed: 1 }));
});

t.test('stats read enrolments; deleting a campaign removes them and keeps its push records', async (t) => {
  const ws = await newWorkspace(s);
  const all = (await newKey(s, ws, { permissions: ['*'] })).key;
  const c = await created(t, ws, READY);
  const people: string[] = [];
  for (const user of ['e1', 'e2']) {
    const r = await s.req('POST', '/identify', { token: all, body: { userId: user } });
    people.push(r.body.person.id);
    await s.req('POST', `/people/${user}/devices`, { token: all, body: { token: `tok-${randomUUID()}`, platform: 'android' } });
  }
  const sent = await s.req('POST', `/workspaces/${ws.id}/push/send`, { token: all, body: { external_id: 'e1', title: 'Hi', campaign_id: c.id } });
  t.equal(sent.body.status, 'sent');
  // Two runs: the first enrolled both people, the second e1 again (its second entry).
  const rows: [string, string, number, string][] = [['run-1', people[0]!, 1, '2030-01-01T10:00:00Z'], ['run-1', people[1]!, 1, '2030-01-01T10:00:00Z'], ['run-2', people[0]!, 2, '2030-01-02T10:00:00Z']];
  for (const [run, person, entry, at] of rows) {
    await sql.query('INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry, enrolled_at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [randomUUID(), ws.id, c.id, person, run, entry, at]);
  }
  const stats = (await get(ws, c.id)).body.data.stats;
  t.same(stats, pushStats({ enrolled: 3, triggered: 2, last_triggered_at: '2030-01-02T10:00:00.000Z' }, { sent: 1 }));
  // The storage constraints the trigger work inserts against.
  await t.rejects(sql.query('INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry) VALUES ($1, $2, $3, $4, $5, 3)', [randomUUID(), ws.id, c.id, people[0], 'run-1']), { code: '23505' }, 'one run enrols a person once');
  await t.rejects(sql.query('INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry) VALUES ($1, $2, $3, $4, $5, 2)', [randomUUID(), ws.id, c.id, people[0], 'run-3']), { code: '23505' }, "a person's nth entry exists once");

  const d = await del(ws, c.id);
  t.equal(d.status, 200, d.text);
  t.same(Object.keys(d.body).sort(), ['message', 'success']);
  sessionError(t, await get(ws, c.id), 404, 'NOT_FOUND');
  t.equal((await sql.query('SELECT 1 FROM campaign_enrolments WHERE campaign_id = $1', [c.id])).rowCount, 0, 'enrolments went with it');
  const status = await s.req('GET', `/workspaces/${ws.id}/push/status/${sent.body.message_id}`, { token: all });
  t.equal(status.status, 200, 'the push record stays');
  t.equal(status.body.message.campaign_id, c.id);
});

t.test('GET /campaigns: newest first, total, filters by status and trigger_type, pages', async (t) => {
  const ws = await newWorkspace(s);
  const a = await created(t, ws, { name: 'a', trigger_type: 'webhook', trigger_config: {} });
  const b = await created(t, ws, READY);
  const c = await created(t, ws, { name: 'c', trigger_type: 'schedule', trigger_config: {} });
  t.equal((await put(ws, b.id, { status: 'active' })).status, 200);
  t.equal((await put(ws, a.id, { status: 'paused' })).status, 200);

  const r = await list(ws);
  t.equal(r.status, 200, r.text);
  t.equal(r.body.success, true);
  t.equal(r.body.total, 3);
  t.same(r.body.campaigns.map((x: { id: string }) => x.id), [c.id, b.id, a.id]);
  // Listed with their stats at a glance (README, Dashboard; test/api/campaign-progress.test.ts).
  for (const x of r.body.campaigns) t.same(Object.keys(x).sort(), [...CAMPAIGN_FIELDS, 'stats'].sort());
  const ids = async (q: string) => {
    const res = await list(ws, q);
    t.equal(res.status, 200, res.text);
    t.equal(res.body.total, res.body.campaigns.length, `${q}: total`);
    return res.body.campaigns.map((x: { id: string }) => x.id);
  };
  t.same(await ids('?status=active'), [b.id]);
  t.same(await ids('?status=paused'), [a.id]);
  t.same(await ids('?status=draft'), [c.id]);
  t.same(await ids('?status=scheduled'), []);
  t.same(await ids('?trigger_type=schedule'), [c.id]);
  t.same(await ids('?trigger_type=event&status=active'), [b.id]);
  t.same(await ids('?trigger_type=event&status=draft'), []);
  const page = await list(ws, '?limit=1&offset=1');
  t.same(page.body.campaigns.map((x: { id: string }) => x.id), [b.id]);
  t.equal(page.body.total, 3, 'total counts every match');
  sessionError(t, await list(ws, '?status=deleted'), 400, 'VALIDATION_ERROR');
  sessionError(t, await list(ws, '?trigger_type=sms'), 400, 'VALIDATION_ERROR');
  // The workspace may come as a query parameter.
  const q = await s.req('GET', `/campaigns?workspace_id=${ws.id}`, { token: ws.token });
  t.equal(q.body.total, 3);
});

t.test('PUT /campaigns/{id}: partial update; objects replaced whole; event_name refused', async (t) => {
  const ws = await newWorkspace(s);
  const c = await created(t, ws, { ...READY, audience_config: { match: 'all' } });
  const r = await put(ws, c.id, { name: 'Renamed' });
  t.equal(r.status, 200, r.text);
  t.same(Object.keys(r.body).sort(), ['data', 'message', 'success']);
  t.equal(r.body.message, 'Campaign updated');
  const u = r.body.data.campaign;
  t.equal(u.name, 'Renamed');
  t.same(u.trigger_config, c.trigger_config, 'omitted: unchanged');
  t.same(u.audience_config, { match: 'all' });
  t.ok(u.updated_at >= c.updated_at);
  const v = (await put(ws, c.id, { trigger_config: { event_names: ['x'], debounce: 60 }, audience_config: {} })).body.data.campaign;
  t.same(v.trigger_config, { event_names: ['x'], debounce: 60 });
  t.same(v.audience_config, {});
  t.same((await get(ws, c.id)).body.data.campaign, v, 'stored');

  const singular = await put(ws, c.id, { trigger_config: { event_name: 'x' } });
  sessionError(t, singular, 400, 'INVALID_TRIGGER_CONFIG');
  t.match(singular.body.error.message, /event_names/);
  t.same((await get(ws, c.id)).body.data.campaign.trigger_config, v.trigger_config, 'nothing saved');
  sessionError(t, await put(ws, c.id, { name: '' }), 400, 'VALIDATION_ERROR');
});

t.test('status moves: any of draft, active, paused, archived, completed from any state; scheduled and failed refused', async (t) => {
  const ws = await newWorkspace(s);
  const c = await created(t, ws, READY);
  const moves = ['active', 'paused', 'active', 'archived', 'completed', 'draft', 'completed', 'active', 'draft', 'archived', 'paused', 'draft', 'active', 'completed', 'paused', 'archived', 'active'];
  let from = 'draft';
  for (const to of moves) {
    const r = await put(ws, c.id, { status: to });
    t.equal(r.status, 200, `${from} → ${to}: ${r.text.slice(0, 200)}`);
    t.equal(r.body.data?.campaign?.status, to);
    from = to;
  }
  t.equal((await get(ws, c.id)).body.data.campaign.status, 'active');
  for (const to of ['scheduled', 'failed', 'running']) {
    const r = await put(ws, c.id, { status: to });
    sessionError(t, r, 400, 'VALIDATION_ERROR');
    t.same(r.body.error.details.map((d: { field: string }) => d.field), ['status']);
    if (to !== 'running') t.match(r.body.error.details[0].message, /set only by the system/);
  }
  t.equal((await get(ws, c.id)).body.data.campaign.status, 'active', 'unchanged');
});

t.test('activation: each rule fails alone, with the campaign left as it was', async (t) => {
  const ws = await newWorkspace(s);
  const cases: [string, Record<string, unknown>, string[]][] = [
    ['event_names missing', { trigger_config: {} }, ['trigger_config.event_names']],
    ['event_names empty', { trigger_config: { event_names: [] } }, ['trigger_config.event_names']],
    ['unknown trigger filter operator', { trigger_config: { event_names: ['a'], filters: [{ field: 'parameters.plan', operator: 'like', value: 'x' }] } }, ['trigger_config.filters.0.operator']],
    ['bad filter field', { trigger_config: { event_names: ['a'], filters: [{ field: 'plan', operator: 'eq', value: 'x' }] } }, ['trigger_config.filters.0.field']],
    ['bad performed_count value', { trigger_config: { event_names: ['a'], filters: [{ field: 'buy', operator: 'performed_count_between', value: { count: 2 } }] } }, ['trigger_config.filters.0.value']],
    ['unknown audience operator', { audience_config: { filters: [{ field: 'traits.plan', operator: 'matches', value: 'x' }] } }, ['audience_config.filters.0.operator']],
    ['first_occurrence with max_per_user 2', { trigger_config: { event_names: ['a'], first_occurrence: true, max_per_user: 2 } }, ['trigger_config.first_occurrence']],
    ['no push node', { workflow_definition: { nodes: [{ id: 'wait', type: 'delay', minutes: 5 }] } }, ['workflow_definition']],
    ['push node without title or body', { workflow_definition: { nodes: [{ id: 'p', type: 'push', image_url: 'https://x/y.png' }] } }, ['workflow_definition.nodes.0']],
    ['a template that does not parse', { workflow_definition: { nodes: [{ id: 'p', type: 'push', title: 'Hi {{ name', body: 'x' }] } }, ['workflow_definition.nodes.0.title']],
  ];
  for (const [what, change, fields] of cases) {
    const c = await created(t, ws, { ...READY, name: what, ...change });
    t.same(activationFailed(t, await put(ws, c.id, { status: 'active' })), fields, what);
    t.equal((await get(ws, c.id)).body.data.campaign.status, 'draft', `${what}: still a draft`);
  }
  const typed: [string, string, Record<string, unknown>, string[]][] = [
    ['schedule without send_at or cron', 'schedule', {}, ['trigger_config.send_at']],
    ['schedule with send_at in the past', 'schedule', { send_at: past() }, ['trigger_config.send_at']],
    ['schedule with cron and no timezone', 'schedule', { cron: '0 9 * * *' }, ['trigger_config.timezone']],
    ['schedule with a bad cron', 'schedule', { cron: '0 25 * * *', timezone: 'UTC' }, ['trigger_config.cron']],
    ['schedule with a bad timezone', 'schedule', { cron: '0 9 * * *', timezone: 'Paris' }, ['trigger_config.timezone']],
    ['dynamic_schedule without trait and offset', 'dynamic_schedule', {}, ['trigger_config.offset_minutes', 'trigger_config.trait']],
    ['dynamic_schedule with a fractional offset', 'dynamic_schedule', { trait: 'birthday', offset_minutes: 1.5 }, ['trigger_config.offset_minutes']],
  ];
  for (const [what, trigger_type, trigger_config, fields] of typed) {
    const c = await created(t, ws, { ...READY, name: what, trigger_type, trigger_config });
    t.same(activationFailed(t, await put(ws, c.id, { status: 'active' })), fields, what);
  }
  // What passes, per type.
  for (const [trigger_type, trigger_config] of [['webhook', {}], ['schedule', { cron: '30 8 * * 1', timezone: 'Europe/Paris' }], ['dynamic_schedule', { trait: 'birthday', offset_minutes: -60 }]] as const) {
    const c = await created(t, ws, { ...READY, trigger_type, trigger_config });
    const r = await put(ws, c.id, { status: 'active' });
    t.equal(r.body.data?.campaign?.status, 'active', `${trigger_type}: ${r.text.slice(0, 300)}`);
  }
});

t.test('activation lists every problem at once; a fix in the same request counts', async (t) => {
  const ws = await newWorkspace(s);
  const c = await created(t, ws, {
    name: 'Broken', trigger_type: 'event',
    trigger_config: { first_occurrence: true, max_per_user: 3, filters: [{ field: 'traits.x', operator: 'resembles', value: 1 }] },
    audience_config: { match: 'some' },
  });
  t.same(activationFailed(t, await put(ws, c.id, { status: 'active' })), [
    'audience_config.match', 'trigger_config.event_names', 'trigger_config.filters.0.operator', 'trigger_config.first_occurrence', 'workflow_definition',
  ]);
  const fixed = await put(ws, c.id, { status: 'active', trigger_config: READY.trigger_config, audience_config: {}, workflow_definition: READY.workflow_definition });
  t.equal(fixed.status, 200, fixed.text);
  t.equal(fixed.body.data.campaign.status, 'active');
  // A live campaign stays valid: an edit that breaks it is refused, a rename is not checked.
  t.same(activationFailed(t, await put(ws, c.id, { trigger_config: {} })), ['trigger_config.event_names']);
  t.equal((await put(ws, c.id, { name: 'Fine' })).status, 200);
  t.same((await get(ws, c.id)).body.data.campaign.trigger_config, READY.trigger_config);
});

t.test('a schedule campaign activated with a future send_at is scheduled; with cron, active', async (t) => {
  const ws = await newWorkspace(s);
  const sendAt = future();
  const c = await created(t, ws, { ...READY, trigger_type: 'schedule', trigger_config: { send_at: sendAt } });
  const r = await put(ws, c.id, { status: 'active' });
  t.equal(r.status, 200, r.text);
  t.equal(r.body.data.campaign.status, 'scheduled');
  t.equal((await get(ws, c.id)).body.data.campaign.status, 'scheduled', 'stored');
  t.same((await list(ws, '?status=scheduled')).body.campaigns.map((x: { id: string }) => x.id), [c.id]);
  sessionError(t, await del(ws, c.id), 409, 'CAMPAIGN_ACTIVE');
  // Still live: moving send_at keeps it scheduled; a cron instead makes it active.
  t.equal((await put(ws, c.id, { trigger_config: { send_at: future(8) } })).body.data.campaign.status, 'scheduled');
  t.same(activationFailed(t, await put(ws, c.id, { trigger_config: { send_at: past() } })), ['trigger_config.send_at']);
  t.equal((await put(ws, c.id, { trigger_config: { cron: '0 9 * * *', timezone: 'UTC' } })).body.data.campaign.status, 'active');
  t.equal((await put(ws, c.id, { status: 'paused' })).body.data.campaign.status, 'paused');
  t.equal((await del(ws, c.id)).status, 200);
});

t.test('DELETE /campaigns/{id}: draft, paused, archived, completed deleted; active and scheduled 409', async (t) => {
  const ws = await newWorkspace(s);
  for (const status of ['draft', 'paused', 'archived', 'completed']) {
    const c = await created(t, ws, READY);
    if (status !== 'draft') t.equal((await put(ws, c.id, { status })).status, 200);
    const r = await del(ws, c.id);
    t.equal(r.status, 200, `${status}: ${r.text}`);
    t.equal(r.body.success, true);
    t.type(r.body.message, 'string');
    sessionError(t, await get(ws, c.id), 404, 'NOT_FOUND');
    sessionError(t, await del(ws, c.id), 404, 'NOT_FOUND');
  }
  const active = await created(t, ws, READY);
  t.equal((await put(ws, active.id, { status: 'active' })).status, 200);
  const refused = await del(ws, active.id);
  sessionError(t, refused, 409, 'CAMPAIGN_ACTIVE');
  t.match(refused.body.error.message, /pause/);
  t.equal((await get(ws, active.id)).status, 200, 'still there');
  t.equal((await put(ws, active.id, { status: 'paused' })).status, 200);
  t.equal((await del(ws, active.id)).status, 200);
});

t.test('node messages: set a push node\'s content; 404 for an unknown node or campaign; 400 for a delay node or a bad template', async (t) => {
  const ws = await newWorkspace(s);
  const c = await created(t, ws, { name: 'Nodes', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'first', type: 'push' }, { id: 'wait', type: 'delay', minutes: 60 }, { id: 'second', type: 'push', body: 'Still there?' }] } });
  sessionError(t, await put(ws, c.id, { status: 'active' }), 400, 'ACTIVATION_FAILED');

  const r = await nodeMessage(ws, c.id, 'first', { title: 'Hello {{ person.first_name }}', body: 'B', custom_data: { screen: 'home' } });
  t.equal(r.status, 200, r.text);
  t.same(r.body, { success: true, data: { node_id: 'first', message: { title: 'Hello {{ person.first_name }}', body: 'B', custom_data: { screen: 'home' } } } });
  const replaced = await nodeMessage(ws, c.id, 'first', { body: 'New body', custom_data: null });
  t.same(replaced.body.data.message, { title: 'Hello {{ person.first_name }}', body: 'New body' }, 'sent fields replace, null removes, omitted stay');
  const nodes = (await get(ws, c.id)).body.data.campaign.workflow_definition.nodes;
  t.same(nodes, [{ id: 'first', type: 'push', title: 'Hello {{ person.first_name }}', body: 'New body' }, { id: 'wait', type: 'delay', minutes: 60 }, { id: 'second', type: 'push', body: 'Still there?' }]);
  t.equal((await put(ws, c.id, { status: 'active' })).body.data?.campaign?.status, 'active', 'activates with the content');

  sessionError(t, await nodeMessage(ws, c.id, 'third', { title: 'x' }), 404, 'NOT_FOUND');
  sessionError(t, await nodeMessage(ws, randomUUID(), 'first', { title: 'x' }), 404, 'NOT_FOUND');
  sessionError(t, await nodeMessage(ws, 'not-a-uuid', 'first', { title: 'x' }), 404, 'NOT_FOUND');
  const delay = await nodeMessage(ws, c.id, 'wait', { title: 'x' });
  sessionError(t, delay, 400, 'VALIDATION_ERROR');
  t.match(delay.body.error.message, /push node/);
  const bad = await nodeMessage(ws, c.id, 'first', { custom_data: { link: '{{ id' } });
  sessionError(t, bad, 400, 'VALIDATION_ERROR');
  t.same(bad.body.error.details.map((d: { field: string }) => d.field), ['custom_data.link']);
  sessionError(t, await nodeMessage(ws, c.id, 'first', { title: 42 }), 400, 'VALIDATION_ERROR');
  // The campaign is live: emptying a node is refused as activation would refuse it.
  t.same(activationFailed(t, await nodeMessage(ws, c.id, 'second', { body: null })), ['workflow_definition.nodes.2']);
  t.same((await get(ws, c.id)).body.data.campaign.workflow_definition.nodes[2], { id: 'second', type: 'push', body: 'Still there?' }, 'unchanged');
});

t.test("isolation: another workspace's campaign is 404; a non-member 403; an API key 403 on every route", async (t) => {
  const a = await newWorkspace(s, 'A');
  const b = await newWorkspace(s, 'B');
  const c = await created(t, a, READY);
  // B's owner, in B: A's campaign does not exist there.
  sessionError(t, await get(b, c.id), 404, 'NOT_FOUND');
  sessionError(t, await put(b, c.id, { name: 'mine' }), 404, 'NOT_FOUND');
  sessionError(t, await del(b, c.id), 404, 'NOT_FOUND');
  sessionError(t, await nodeMessage(b, c.id, 'welcome', { title: 'x' }), 404, 'NOT_FOUND');
  t.equal((await list(b)).body.total, 0);
  sessionError(t, await get(a, 'not-a-uuid'), 404, 'NOT_FOUND');
  sessionError(t, await get(a, randomUUID()), 404, 'NOT_FOUND');

  // B's owner naming A: not a member.
  const stranger = { id: a.id, owner: b.owner, token: b.token };
  for (const r of [await get(stranger, c.id), await list(stranger), await create(stranger, READY), await put(stranger, c.id, { name: 'x' }), await del(stranger, c.id), await nodeMessage(stranger, c.id, 'welcome', { title: 'x' })]) {
    t.equal(r.status, 403, r.text);
    t.same(r.body, FORBIDDEN);
  }
  // A member who is not an owner may author.
  const member = uniqueUser('member');
  t.equal((await s.req('POST', `/workspaces/${a.id}/members`, { token: a.token, body: { user_id: member, role: 'member' } })).status, 201);
  const asMember = { id: a.id, owner: member, token: await s.session(member) };
  t.equal((await put(asMember, c.id, { name: 'By a member' })).status, 200);

  // An API key, even with every permission.
  const key = (await newKey(s, a, { permissions: ['*'] })).key;
  const keyed = { id: a.id, owner: a.owner, token: key };
  for (const r of [await get(keyed, c.id), await list(keyed), await create(keyed, READY), await put(keyed, c.id, { name: 'x' }), await del(keyed, c.id), await nodeMessage(keyed, c.id, 'welcome', { title: 'x' })]) {
    t.equal(r.status, 403, r.text);
    t.same(r.body, FORBIDDEN);
  }
  t.equal((await get(a, c.id)).body.data.campaign.name, 'By a member', 'nothing else changed');
});

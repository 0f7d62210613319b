// Schedule campaigns run through the real HTTP server (docs/campaigns-runtime.md; README, Routes and Request bodies): a
// send_at campaign is `scheduled`, runs once at send_at and is `completed`, its stats counting
// the enrolments and push records; Liquid with person and traits; audience filters and the
// schedule ceiling (this server's HERALD_SCHEDULE_AUDIENCE_CEILING is 5) with the truncated
// run; a run that cannot start fails the campaign; a delay node is a durable timer across a
// restart; a dynamic_schedule enrols each person at their own date, once per date.
import t, { type Test } from 'tap';
import pg from 'pg';
import { NO_LIMITS, type Ws } from '../helpers/assert.js';
import { ownDatabase } from '../helpers/database.js';
import { eventually, newKey, newWorkspace, serversOnOneDir, startServer, storeUrl, type TestServer } from '../helpers/server.js';

const CEILING = 5;
const DB = await ownDatabase(t);
const s: TestServer = await startServer({ ...NO_LIMITS, ...DB, HERALD_SCHEDULE_AUDIENCE_CEILING: String(CEILING) });
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s, DB) });
await sql.connect();
t.teardown(() => sql.end());

const inSeconds = (n: number) => new Date(Date.now() + n * 1000).toISOString();
const hdr = (ws: Ws) => ({ token: ws.token, headers: { 'x-workspace-id': ws.id } });

interface Person {
  user: string;
  traits?: Record<string, unknown>;
  device?: boolean;
}

/** A workspace with people (identified with their traits, each with an android sandbox device unless told). */
async function workspace(srv: TestServer, people: Person[]): Promise<{ ws: Ws; key: string; ids: Map<string, string> }> {
  const ws = await newWorkspace(srv, 'Schedules');
  const key = (await newKey(srv, ws, { permissions: ['*'] })).key;
  const ids = new Map<string, string>();
  for (const p of people) {
    const r = await srv.req('POST', '/identify', { token: key, body: { userId: p.user, traits: p.traits ?? {} } });
    if (r.status !== 200) throw new Error(`identify: ${r.status} ${r.text}`);
    ids.set(p.user, r.body.person.id);
    if (p.device === false) continue;
    const d = await srv.req('POST', `/people/${p.user}/devices`, { token: key, body: { token: `tok-${p.user}-0123456789`, platform: 'android' } });
    if (d.status !== 201) throw new Error(`device: ${d.status} ${d.text}`);
  }
  return { ws, key, ids };
}

async function campaign(t: Test, srv: TestServer, ws: Ws, body: Record<string, unknown>): Promise<string> {
  const r = await srv.req('POST', '/campaigns', { ...hdr(ws), body: { name: 'Scheduled', trigger_type: 'schedule', ...body } });
  t.equal(r.status, 201, r.text);
  return r.body.data.campaign.id;
}

const activate = (srv: TestServer, ws: Ws, id: string) => srv.req('PUT', `/campaigns/${id}`, { ...hdr(ws), body: { status: 'active' } });
const get = (srv: TestServer, ws: Ws, id: string) => srv.req('GET', `/campaigns/${id}`, hdr(ws)).then((r) => r.body.data);
const messages = (srv: TestServer, ws: Ws, personId: string) => srv.req('GET', `/workspaces/${ws.id}/people/${personId}/messages`, { token: ws.token }).then((r) => r.body.messages);

/** Polls the campaign until `done` holds (or 20 s pass); the last read. */
async function until(srv: TestServer, ws: Ws, id: string, done: (c: { campaign: { status: string }; stats: Record<string, number | string | null> }) => boolean, ms = 20_000) {
  let last = await get(srv, ws, id);
  await eventually(async () => done((last = await get(srv, ws, id))), ms);
  return last;
}

t.test('a send_at campaign is scheduled, runs once at send_at, and completes', async (t) => {
  const { ws, ids } = await workspace(s, [
    { user: 'ann', traits: { first_name: 'Ann', plan: 'pro' } },
    { user: 'bob', traits: { first_name: 'Bob', plan: 'free' } },
    { user: 'cy', traits: { first_name: 'Cy' } },
    { user: 'dee', traits: { first_name: 'Dee' }, device: false },
  ]);
  const sendAt = inSeconds(3);
  const id = await campaign(t, s, ws, {
    trigger_config: { send_at: sendAt },
    workflow_definition: { nodes: [{ id: 'hello', type: 'push', title: 'Hi {{ person.first_name }}', body: 'Your plan: {{ traits.plan | default: "none" }}' }] },
  });
  const a = await activate(s, ws, id);
  t.equal(a.status, 200, a.text);
  t.equal(a.body.data.campaign.status, 'scheduled');
  const before = await get(s, ws, id);
  t.equal(before.campaign.status, 'scheduled', 'scheduled until send_at');
  t.same(before.stats.enrolled, 0, 'nobody enrolled before send_at');

  const done = await until(s, ws, id, (c) => c.campaign.status === 'completed' && c.stats.sent === 3 && c.stats.skipped === 1);
  t.equal(done.campaign.status, 'completed', 'completed once run');
  t.same(done.stats, { ...done.stats, enrolled: 4, triggered: 1, sent: 3, skipped: 1, policy_suppressed: 0, failed: 0 }, 'stats: 4 enrolled by one run; 3 sent, 1 without a device skipped');
  t.ok(Date.parse(done.stats.last_triggered_at) >= Date.parse(sendAt), 'enrolled at send_at, not before');

  const [ann] = await messages(s, ws, ids.get('ann')!);
  t.match(ann, { status: 'sent', campaign_id: id, provider: 'sandbox' });
  t.equal(ann.title, 'Hi Ann', 'Liquid over person');
  t.equal(ann.body, 'Your plan: pro', 'and traits');
  t.equal((await messages(s, ws, ids.get('cy')!))[0].body, 'Your plan: none');
  const [dee] = await messages(s, ws, ids.get('dee')!);
  t.match(dee, { status: 'skipped', skip_reason: 'no_active_device_tokens', campaign_id: id }, 'the skip is recorded');

  // Nothing more happens: one run, one message per person.
  await new Promise((r) => setTimeout(r, 1500));
  const runs = await sql.query('SELECT run_key, state, enrolled, truncated FROM campaign_runs WHERE campaign_id = $1', [id]);
  t.same(runs.rows, [{ run_key: `at:${sendAt}`, state: 'enrolled', enrolled: 4, truncated: false }], 'one run');
  t.equal((await messages(s, ws, ids.get('bob')!)).length, 1, 'one message each');
  t.same((await get(s, ws, id)).stats, done.stats, 'stats unchanged');
});

t.test('audience filters, and the ceiling truncates the run', async (t) => {
  const people: Person[] = [];
  for (let i = 0; i < 9; i++) people.push({ user: `p${i}`, traits: { vip: i !== 4, score: i } });
  const { ws, ids } = await workspace(s, people);
  const vip = (u: string) => u !== 'p4';

  const filtered = await campaign(t, s, ws, {
    trigger_config: { send_at: inSeconds(2) },
    audience_config: { match: 'all', filters: [{ field: 'traits.vip', operator: 'eq', value: true }, { field: 'traits.score', operator: 'lt', value: 5 }] },
    workflow_definition: { nodes: [{ id: 'n', type: 'push', title: 'Filtered' }] },
  });
  const capped = await campaign(t, s, ws, {
    trigger_config: { send_at: inSeconds(2) },
    audience_config: { filters: [{ field: 'traits.vip', operator: 'eq', value: true }] },
    workflow_definition: { nodes: [{ id: 'n', type: 'push', title: 'Capped' }] },
  });
  t.equal((await activate(s, ws, filtered)).status, 200);
  t.equal((await activate(s, ws, capped)).status, 200);

  const f = await until(s, ws, filtered, (c) => c.campaign.status === 'completed' && c.stats.sent === 4);
  t.same([f.stats.enrolled, f.stats.sent], [4, 4], 'vip and score < 5: p0..p3');
  const c = await until(s, ws, capped, (x) => x.campaign.status === 'completed' && x.stats.sent === CEILING);
  t.same([c.stats.enrolled, c.stats.sent], [CEILING, CEILING], `8 match, the ceiling is ${CEILING}`);
  const enrolled = await sql.query<{ person_id: string }>('SELECT person_id FROM campaign_enrolments WHERE campaign_id = $1', [capped]);
  const byId = new Map([...ids].map(([u, pid]) => [pid, u]));
  t.ok(enrolled.rows.every((r) => vip(byId.get(r.person_id)!)), 'only matching people');
  const run = await sql.query('SELECT enrolled, truncated FROM campaign_runs WHERE campaign_id = $1', [capped]);
  t.same(run.rows, [{ enrolled: CEILING, truncated: true }], 'the run records its truncation');
  const full = await sql.query('SELECT truncated FROM campaign_runs WHERE campaign_id = $1', [filtered]);
  t.same(full.rows, [{ truncated: false }]);
});

t.test('a run that cannot start fails the campaign', async (t) => {
  const { ws } = await workspace(s, [{ user: 'only' }]);
  const tpl = await s.req('POST', `/workspaces/${ws.id}/templates`, { token: ws.token, body: { name: 'T', channel: 'push', title: 'From a template' } });
  t.equal(tpl.status, 201, tpl.text);
  const id = await campaign(t, s, ws, { trigger_config: { send_at: inSeconds(2) }, template_id: tpl.body.data.template.id });
  t.equal((await activate(s, ws, id)).status, 200);
  // The template loses its content after activation: the run has nothing to send.
  const r = await s.req('PUT', `/workspaces/${ws.id}/templates/${tpl.body.data.template.id}`, { token: ws.token, body: { title: null } });
  t.equal(r.status, 200, r.text);
  const done = await until(s, ws, id, (c) => c.campaign.status !== 'scheduled');
  t.equal(done.campaign.status, 'failed');
  t.equal(done.stats.enrolled, 0, 'nobody enrolled');
  const run = await sql.query('SELECT state, error FROM campaign_runs WHERE campaign_id = $1', [id]);
  t.equal(run.rows[0].state, 'failed');
  t.match(run.rows[0].error, /neither title nor body/);
});

t.test('a dynamic_schedule enrols each person at their own date, once per date', async (t) => {
  const soon = inSeconds(2);
  const { ws, ids } = await workspace(s, [
    { user: 'due', traits: { renews_at: soon } },
    { user: 'later', traits: { renews_at: inSeconds(86_400) } },
    { user: 'none' },
    { user: 'junk', traits: { renews_at: 'not a date' } },
  ]);
  const r = await s.req('POST', '/campaigns', {
    ...hdr(ws),
    body: { name: 'Renewal', trigger_type: 'dynamic_schedule', trigger_config: { trait: 'renews_at', offset_minutes: 0 }, workflow_definition: { nodes: [{ id: 'n', type: 'push', title: 'Renewal' }] } },
  });
  t.equal(r.status, 201, r.text);
  const id = r.body.data.campaign.id;
  t.equal((await activate(s, ws, id)).body.data.campaign.status, 'active');
  // The first scan, at activation, finds nobody due yet and when `due` will be: scanned again then.
  const done = await until(s, ws, id, (c) => c.stats.sent === 1, 10_000);
  t.same([done.stats.enrolled, done.stats.sent], [1, 1], 'only the person whose date passed');
  const rows = await sql.query('SELECT person_id, run_id FROM campaign_enrolments WHERE campaign_id = $1', [id]);
  t.same(rows.rows, [{ person_id: ids.get('due'), run_id: `dyn:${soon}` }], 'enrolled under their date');
});

// The other way a person enters: a date set after the scan that planned the next one is found
// by the periodic scan (HERALD_DYNAMIC_SCAN_MS; a minute by default, 2 s here).
t.test('a date set after activation is found by the next periodic scan', async (t) => {
  const srv = await startServer({ ...NO_LIMITS, ...(await ownDatabase(t)), HERALD_DYNAMIC_SCAN_MS: '2000' });
  t.teardown(() => srv.stop());
  const { ws, key, ids } = await workspace(srv, [{ user: 'early', traits: { renews_at: inSeconds(1) } }, { user: 'late' }]);
  const r = await srv.req('POST', '/campaigns', {
    ...hdr(ws),
    body: { name: 'Renewal', trigger_type: 'dynamic_schedule', trigger_config: { trait: 'renews_at', offset_minutes: 0 }, workflow_definition: { nodes: [{ id: 'n', type: 'push', title: 'Renewal' }] } },
  });
  const id = r.body.data.campaign.id;
  t.equal((await activate(srv, ws, id)).body.data.campaign.status, 'active');
  // `early` entered at the scan planned for their date, which found no later date to plan for.
  await until(srv, ws, id, (c) => c.stats.sent === 1, 15_000);
  t.equal((await srv.req('POST', '/identify', { token: key, body: { userId: 'late', traits: { renews_at: inSeconds(1) } } })).status, 200);
  const done = await until(srv, ws, id, (c) => c.stats.sent === 2, 15_000);
  t.same([done.stats.enrolled, done.stats.sent], [2, 2], 'late entered by the next periodic scan');
  t.same((await messages(srv, ws, ids.get('late')!)).length, 1, 'one message');
});

t.test('a delay node is a durable timer across a restart', async (t) => {
  // Its own database too: the file's other server must not run this workspace's workflow.
  const own = await ownDatabase(t);
  const servers = await serversOnOneDir(t, { ...NO_LIMITS, ...own }, 'delay');
  const first = servers.first;
  const { ws, ids } = await workspace(first, [{ user: 'waiter' }]);
  const pid = ids.get('waiter')!;
  const id = await campaign(t, first, ws, {
    trigger_config: { send_at: inSeconds(2) },
    workflow_definition: { nodes: [{ id: 'first', type: 'push', title: 'First' }, { id: 'wait', type: 'delay', minutes: 1 }, { id: 'second', type: 'push', title: 'Second' }] },
  });
  t.equal((await activate(first, ws, id)).status, 200);
  await until(first, ws, id, (c) => c.stats.sent === 1);
  const db = new pg.Client({ connectionString: storeUrl(first, own) });
  await db.connect();
  const timer = await eventually(async () => (await db.query("SELECT next_node, due_at, state FROM campaign_enrolments WHERE campaign_id = $1 AND next_node = 'second'", [id])).rows[0]);
  await db.end();
  t.equal(timer?.state, 'waiting', 'waiting on the delay');
  const sentAt = Date.parse((await messages(first, ws, pid))[0].sent_at);
  t.ok(Math.abs(timer.due_at.getTime() - (sentAt + 60_000)) < 5_000, 'due a minute after the first push');

  await first.stop('SIGKILL');
  const again = await servers.again();
  const sql2 = new pg.Client({ connectionString: storeUrl(again, own) });
  await sql2.connect();
  t.teardown(() => sql2.end());
  await new Promise((r) => setTimeout(r, 2000));
  t.equal((await messages(again, ws, pid)).length, 1, 'the second push waits for its time after the restart');
  // Bring the timer's time forward rather than wait the minute: the stored timer is what runs.
  await sql2.query("UPDATE campaign_enrolments SET due_at = now() WHERE campaign_id = $1 AND next_node = 'second'", [id]);
  const done = await until(again, ws, id, (c) => c.stats.sent === 2);
  t.equal(done.stats.sent, 2, 'the second push went after the restart');
  t.same((await messages(again, ws, pid)).map((m: { title: string }) => m.title), ['Second', 'First']);
  // The enrolment moves on just after its record is written.
  const ended = await eventually(async () => (await sql2.query('SELECT state FROM campaign_enrolments WHERE campaign_id = $1', [id])).rows[0]?.state === 'done');
  t.ok(ended, 'the workflow ended');
});

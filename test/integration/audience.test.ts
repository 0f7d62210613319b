// Audiences and enrolment over a real PostgreSQL: the shared condition cases read in SQL
// (store/audience.ts) must match what the in-memory reading says (test/unit/conditions.test.ts);
// keyset pages and the ceiling; enrolPeople's storage rules (deterministic ids, once per run,
// max_per_user, debounce, entries raced by concurrent runs, other workspaces' people ignored).
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { openPostgres } from '../../src/store/pg.js';
import { audienceExceeds, audiencePages } from '../../src/store/audience.js';
import { insertCampaign, type CampaignRow } from '../../src/store/campaigns.js';
import { enrolPeople, enrolmentId } from '../../src/campaigns/index.js';
import type { AudienceConfig } from '../../src/domain/conditions.js';
import { eventually, newWorkspace, storeUrl } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { CASES, PEOPLE } from '../helpers/condition-cases.js';

const srv = await sharedServer();
const db = openPostgres(storeUrl(srv), 8);
t.teardown(() => db.close());

async function person(workspaceId: string, externalId: string, traits: Record<string, unknown> = {}, fields: Record<string, string | null> = {}): Promise<string> {
  const id = randomUUID();
  await db.query(
    `INSERT INTO people (id, workspace_id, external_id, traits, email, phone, status, timezone, locale) VALUES ($1, $2, $3, $4::text::jsonb, $5, $6, COALESCE($7, 'active'), $8, $9)`,
    [id, workspaceId, externalId, JSON.stringify(traits), fields.email ?? null, fields.phone ?? null, fields.status ?? null, fields.timezone ?? null, fields.locale ?? null],
  );
  return id;
}

async function all(workspaceId: string, audience: AudienceConfig | null, pageSize = 1000, limit = 1_000_000): Promise<string[][]> {
  const pages: string[][] = [];
  for await (const page of audiencePages(db, workspaceId, audience, { pageSize, limit })) pages.push(page);
  return pages;
}

t.test('the condition cases, in SQL', async (t) => {
  const ws = await newWorkspace(srv);
  const other = await newWorkspace(srv);
  const names = new Map<string, string>();
  for (const p of PEOPLE) {
    const id = await person(ws.id, p.name, p.traits, p.person);
    names.set(id, p.name);
    for (const [type, count] of Object.entries(p.counts)) {
      await db.query('INSERT INTO person_event_counts (person_id, type, count, first_at, last_at) VALUES ($1, $2, $3, now(), now())', [id, type, count]);
    }
    // the same person in another workspace is never in this one's audience
    await person(other.id, p.name, p.traits, p.person);
  }
  for (const k of CASES) {
    const got = (await all(ws.id, { filters: k.filters, match: k.match })).flat().map((id) => names.get(id)!).sort();
    t.same(got, k.expect, k.what);
  }
  t.same((await all(ws.id, null)).flat().length, PEOPLE.length, 'no audience_config: everyone');
});

t.test('keyset pages, the limit, audienceExceeds', async (t) => {
  const ws = await newWorkspace(srv);
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push(await person(ws.id, `p${i}`, { vip: i % 2 === 0 }));
  ids.sort();
  const pages = await all(ws.id, {}, 3);
  t.same(pages.map((p) => p.length), [3, 3, 1], 'pages of 3');
  t.same(pages.flat(), ids, 'every person once, by id');
  t.same((await all(ws.id, {}, 3, 5)).map((p) => p.length), [3, 2], 'stops at the limit');
  t.same((await all(ws.id, {}, 3, 6)).map((p) => p.length), [3, 3], 'a full last page at the limit ends there');
  const vip: AudienceConfig = { filters: [{ field: 'traits.vip', operator: 'eq', value: true }] };
  t.same((await all(ws.id, vip, 2)).flat().length, 4);
  t.equal(await audienceExceeds(db, ws.id, vip, 4), false, '4 match: not more than 4');
  t.equal(await audienceExceeds(db, ws.id, vip, 3), true, '4 match: more than 3');
  t.equal(await audienceExceeds(db, ws.id, null, 7), false);
  t.equal(await audienceExceeds(db, ws.id, null, 6), true);
});

async function campaign(workspaceId: string): Promise<CampaignRow> {
  return insertCampaign(db, {
    id: randomUUID(), workspace_id: workspaceId, name: 'c', status: 'active', trigger_type: 'webhook', trigger_config: {}, audience_config: {},
    workflow_definition: { nodes: [{ id: 'p', type: 'push', title: 'Hi' }] }, template_id: null, holdout_percent: 0, goal: null,
  });
}

const rows = (campaignId: string) =>
  db.query<{ id: string; person_id: string; run_id: string; entry: number; state: string; next_node: string | null; due_at: Date; context: Record<string, unknown> }>(
    'SELECT id, person_id, run_id, entry, state, next_node, due_at, context FROM campaign_enrolments WHERE campaign_id = $1 ORDER BY entry, run_id',
    [campaignId],
  ).then((r) => r.rows);

t.test('enrolPeople', async (t) => {
  const ws = await newWorkspace(srv);
  const other = await newWorkspace(srv);
  const c = await campaign(ws.id);
  const [a, b] = [await person(ws.id, 'a'), await person(ws.id, 'b')];
  const stranger = await person(other.id, 'x');
  const context = { trigger: { coupon: 'X1' }, variables: { v: 1 } };
  const startAt = new Date(Date.now() + 3_600_000);
  t.equal(await enrolPeople(db, c, 'run-1', [a, b, a, stranger], { context, startAt }), 2, 'two enrolled: duplicates and other workspaces ignored');
  t.equal(await enrolPeople(db, c, 'run-1', [a, b]), 0, 'a run enrols a person once');
  const r = await rows(c.id);
  t.same(r.map((x) => [x.person_id, x.entry, x.state, x.next_node]).sort(), [[a, 1, 'waiting', null], [b, 1, 'waiting', null]].sort());
  t.equal(r[0]!.id, enrolmentId(c.id, 'run-1', r[0]!.person_id), 'deterministic id');
  t.same(r[0]!.context, context, 'the context for templates');
  t.equal(r[0]!.due_at.getTime(), startAt.getTime(), 'starts at startAt');

  t.equal(await enrolPeople(db, c, 'run-2', [a], { rules: { maxPerUser: 2 } }), 1, 'a second entry');
  t.equal(await enrolPeople(db, c, 'run-3', [a, b], { rules: { maxPerUser: 2 } }), 1, 'a has had 2: only b');
  t.equal(await enrolPeople(db, c, 'run-4', [a, b], { rules: { debounceSeconds: 3600 } }), 0, 'within the debounce');
  t.equal(await enrolPeople(db, c, 'run-5', [a], { rules: { debounceSeconds: 0.001 } }), 1, 'after the debounce');
  t.same((await rows(c.id)).filter((x) => x.person_id === a).map((x) => x.entry), [1, 2, 3]);
});

t.test('concurrent enrolments of one person', async (t) => {
  const ws = await newWorkspace(srv);
  const c = await campaign(ws.id);
  const p = await person(ws.id, 'p');
  const once = await Promise.all(Array.from({ length: 20 }, (_, i) => enrolPeople(db, c, `event-${i}`, [p], { rules: { maxPerUser: 1 } })));
  t.equal(once.reduce((x, y) => x + y, 0), 1, '20 runs at once, max_per_user 1: one enrolment');
  const c2 = await campaign(ws.id);
  const many = await Promise.all(Array.from({ length: 6 }, (_, i) => db.tx((q) => enrolPeople(q, c2, `event-${i}`, [p]))));
  const entries = (await rows(c2.id)).map((x) => x.entry);
  t.equal(many.reduce((x, y) => x + y, 0), entries.length, 'what it reports is what it wrote');
  t.ok(entries.length >= 4, `no limit: runs racing for an entry mostly take the next one (${entries.length} of 6)`);
  t.same(entries, entries.map((_, i) => i + 1), 'entries 1..n, each once');
  const same = await Promise.all(Array.from({ length: 10 }, () => enrolPeople(db, c2, 'one-run', [p])));
  t.equal(same.reduce((x, y) => x + y, 0), 1, 'one run ten times at once: once');
});

t.test("an enrolment's context reaches its templates and records (the server's executor runs it)", async (t) => {
  const ws = await newWorkspace(srv);
  const p = await person(ws.id, 'ctx', { first_name: 'Ann' });
  await db.query(`INSERT INTO devices (id, workspace_id, person_id, device_token, platform) VALUES ($1, $2, $3, $4, 'android')`, [randomUUID(), ws.id, p, `tok-${randomUUID()}`]);
  const c = await insertCampaign(db, {
    id: randomUUID(), workspace_id: ws.id, name: 'ctx', status: 'active', trigger_type: 'event', trigger_config: { event_names: ['bought'] }, audience_config: {},
    workflow_definition: { nodes: [{ id: 'p', type: 'push', title: '{{ event.amount }} {{ trigger.coupon }} {{ greeting }}', body: '{{ traits.first_name }}' }] }, template_id: null, holdout_percent: 0, goal: null,
  });
  const eventId = randomUUID();
  const context = { event: { id: eventId, name: 'bought', parameters: { amount: 42 } }, trigger: { coupon: 'SPRING' }, variables: { greeting: 'hi' } };
  t.equal(await enrolPeople(db, c, eventId, [p], { context }), 1);
  const rec = await eventually(async () => (await db.query("SELECT title, body, event_id, status FROM messages WHERE campaign_id = $1 AND status <> 'sending'", [c.id])).rows[0], 10_000);
  t.same(rec, { title: '42 SPRING hi', body: 'Ann', event_id: eventId, status: 'sent' });
  t.ok(await eventually(async () => (await rows(c.id))[0]?.state === 'done'), 'the workflow ended (just after its record)');
});

t.test('enrolments of a paused campaign wait; of an archived one, stop', async (t) => {
  const ws = await newWorkspace(srv);
  const p = await person(ws.id, 'held');
  const c = await campaign(ws.id);
  await db.query("UPDATE campaigns SET status = 'paused' WHERE id = $1", [c.id]);
  t.equal(await enrolPeople(db, c, 'run-1', [p]), 1);
  t.equal(await enrolPeople(db, c, 'run-2', [p]), 1);
  await new Promise((r) => setTimeout(r, 2000));
  t.same((await rows(c.id)).map((r) => r.state), ['waiting', 'waiting'], 'paused: they wait');
  await db.query("UPDATE campaigns SET status = 'archived' WHERE id = $1", [c.id]);
  const stopped = await eventually(async () => (await rows(c.id)).every((r) => r.state === 'stopped'), 10_000);
  t.ok(stopped, 'archived: they stop');
  t.equal((await db.query('SELECT 1 FROM messages WHERE campaign_id = $1', [c.id])).rowCount, 0, 'nothing sent');
});

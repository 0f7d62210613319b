// messageId deduplication through the real HTTP server (README, messageId; docs/ingest.md): a
// repeat on /track, /track/batch, /identify and /people/batch within the window is answered as
// the first (status, ids) with `duplicate: true` and changes nothing (no second event, no trait
// change, no second campaign enrolment), repeats inside one batch and across batches, the first
// payload wins, workspaces keep their own messageIds, over 100 characters is a 400, past the
// window (a row aged in the store) a messageId is new again, and a
// kill -9 of Herald between the store's commit and the answer leaves a retry a duplicate with
// no second event or trigger. Every answer is checked against the OpenAPI document.
import t, { type Test } from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { badRequest, NO_LIMITS } from '../helpers/assert.js';
import { checkResponse } from '../helpers/contract.js';
import { eventually, newKey, newWorkspace, serversOnOneDir, storeUrl, uniqueUser, type Herald, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';

const s = await sharedServer();
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

interface W {
  ws: { id: string; owner: string; token: string };
  key: string;
}

async function workspace(server: Herald = s): Promise<W> {
  const ws = await newWorkspace(server, 'Message ids');
  return { ws, key: (await newKey(server, ws, { permissions: ['*'] })).key };
}

async function post(w: W, path: string, body: unknown, server: Herald = s): Promise<Res> {
  const r = await server.req('POST', path, { token: w.key, body });
  await checkResponse('POST', `/api/v1${path}`, r.status, r.text);
  return r;
}

/** The person's stored events, once `n` are readable (the JetStream sink stores them shortly after the answer), then a pause for any later one. */
async function eventsOf(personId: string, n: number, db: pg.Client = sql): Promise<{ id: string; type: string; parameters: Record<string, unknown> }[]> {
  const read = async () => (await db.query('SELECT id::text, type, parameters FROM events WHERE person_id = $1 ORDER BY created_at, id', [personId])).rows;
  await eventually(async () => (await read()).length >= n, 10_000);
  await new Promise((r) => setTimeout(r, 300));
  return read();
}

const mid = () => `msg-${randomUUID()}`;

t.test('/track: a repeat is answered as the first, with duplicate, and stores nothing; the aliases name one id', async (t) => {
  const w = await workspace();
  const user = uniqueUser('mid');
  const id = mid();
  const first = await post(w, '/track', { event: 'opened', userId: user, parameters: { n: 1 }, messageId: id });
  t.equal(first.status, 201, first.text);
  t.notOk('duplicate' in first.body.data, 'the first answer is not a duplicate');
  for (const alias of ['messageId', 'message_id', 'messageID']) {
    const again = await post(w, '/track', { event: 'opened', userId: user, parameters: { n: 1 }, [alias]: id });
    t.equal(again.status, 201, again.text);
    t.equal(again.body.data.duplicate, true, `${alias}: duplicate`);
    t.equal(again.body.data.event_id, first.body.data.event_id, `${alias}: the first event id`);
    t.equal(again.body.data.person_id, first.body.data.person_id, `${alias}: the first person id`);
  }
  t.equal((await eventsOf(first.body.data.person_id, 1)).length, 1, 'one event stored');

  const conflict = await post(w, '/track', { event: 'opened', userId: user, messageId: id, message_id: 'other' });
  badRequest(t, conflict, 'messageId');

  // Without messageId nothing changes: two tracks are two events.
  const a = await post(w, '/track', { event: 'plain', userId: user });
  const b = await post(w, '/track', { event: 'plain', userId: user });
  t.not(a.body.data.event_id, b.body.data.event_id);
  t.notOk('duplicate' in b.body.data);
  t.equal((await eventsOf(first.body.data.person_id, 3)).length, 3);
});

t.test('/track: the first payload wins', async (t) => {
  const w = await workspace();
  const user = uniqueUser('mid');
  const id = mid();
  const first = await post(w, '/track', { event: 'bought', userId: user, parameters: { item: 'first' }, messageId: id });
  const other = await post(w, '/track', { event: 'returned', userId: user, parameters: { item: 'second' }, messageId: id });
  t.equal(other.status, 201, other.text);
  t.equal(other.body.data.duplicate, true);
  t.equal(other.body.data.event_id, first.body.data.event_id);
  t.equal(other.body.data.event, 'bought', 'the answer names the first event');
  t.same(other.body.data.parameters, { item: 'first' });
  const stored = await eventsOf(first.body.data.person_id, 1);
  t.same(stored.map((e) => [e.type, e.parameters]), [['bought', { item: 'first' }]]);
});

t.test('/track/batch: repeats inside one batch and across batches', async (t) => {
  const w = await workspace();
  const user = uniqueUser('mid');
  const [x, y] = [mid(), mid()];
  const one = await post(w, '/track/batch', {
    events: [
      { event: 'a', userId: user, messageId: x },
      { event: 'b', userId: user, messageId: x },
      { event: 'c', userId: user },
      { event: 'd', userId: user, message_id: y },
    ],
  });
  t.equal(one.status, 201, one.text);
  const r1 = one.body.results;
  t.equal(r1[1].event_id, r1[0].event_id, 'a repeat inside the batch is its first');
  t.equal(r1[1].duplicate, true);
  t.equal(r1[1].event, 'a');
  t.notOk('duplicate' in r1[0]);
  t.notOk('duplicate' in r1[3]);
  const two = await post(w, '/track/batch', { events: [{ event: 'e', userId: user, messageID: y }, { event: 'a', userId: user, messageId: x }, { event: 'f', userId: user, messageId: mid() }] });
  t.equal(two.status, 201, two.text);
  const r2 = two.body.results;
  t.equal(r2[0].event_id, r1[3].event_id, 'a repeat of an earlier batch');
  t.equal(r2[0].duplicate, true);
  t.equal(r2[1].event_id, r1[0].event_id);
  t.equal(r2[1].duplicate, true);
  t.notOk('duplicate' in r2[2]);
  const stored = await eventsOf(r1[0].person_id, 4);
  t.same(stored.map((e) => e.type).sort(), ['a', 'c', 'd', 'f']);

  // A single track repeating a batch entry, and a batch repeating a single track.
  const single = await post(w, '/track', { event: 'g', userId: user, messageId: x });
  t.equal(single.body.data.duplicate, true);
  t.equal(single.body.data.event_id, r1[0].event_id);
});

t.test('a messageId over 100 characters is a 400 and stores nothing; in a batch only that entry fails', async (t) => {
  const w = await workspace();
  const user = uniqueUser('mid');
  const long = 'm'.repeat(101);
  badRequest(t, await post(w, '/track', { event: 'a', userId: user, messageId: long }), 'messageId');
  badRequest(t, await post(w, '/identify', { userId: user, message_id: long }), 'message_id');
  t.equal((await post(w, '/track', { event: 'a', userId: user, messageId: 'm'.repeat(100) })).status, 201, '100 characters are accepted');
  badRequest(t, await post(w, '/track', { event: 'a', userId: user, messageId: '' }), 'messageId');
  const batch = await post(w, '/track/batch', { events: [{ event: 'a', userId: user, messageId: long }, { event: 'b', userId: user }] });
  t.equal(batch.status, 207, batch.text);
  t.same(batch.body.errors.map((e: { index: number }) => e.index), [0]);
  const people = await post(w, '/people/batch', { identify: [{ userId: user, messageId: long }, { userId: user }] });
  t.equal(people.status, 200, people.text);
  t.same(people.body.results.map((r: { success: boolean }) => r.success), [false, true]);
});

t.test('/identify and /people/batch: a repeat changes no trait and answers the first person', async (t) => {
  const w = await workspace();
  const user = uniqueUser('mid');
  const id = mid();
  const first = await post(w, '/identify', { userId: user, traits: { plan: 'free' }, messageId: id });
  t.equal(first.status, 200, first.text);
  t.notOk('duplicate' in first.body);
  const again = await post(w, '/identify', { userId: user, traits: { plan: 'pro' }, messageID: id });
  t.equal(again.status, 200, again.text);
  t.equal(again.body.duplicate, true);
  t.equal(again.body.person.id, first.body.person.id);
  t.same(again.body.person.traits, { plan: 'free' }, 'the first payload wins');
  const other = await post(w, '/identify', { userId: uniqueUser('mid-other'), messageId: id });
  t.equal(other.body.person.id, first.body.person.id, 'another userId under the same messageId: the first person');

  const [x, y] = [mid(), mid()];
  const one = await post(w, '/people/batch', { identify: [{ userId: user, traits: { step: 1 }, messageId: x }, { userId: user, traits: { step: 2 }, messageId: x }, { userId: user, traits: { other: true }, message_id: y }] });
  t.equal(one.status, 200, one.text);
  const r1 = one.body.results;
  t.notOk('duplicate' in r1[0]);
  t.equal(r1[1].duplicate, true, 'a repeat inside the batch');
  t.equal(r1[1].data.id, r1[0].data.id);
  const two = await post(w, '/people/batch', { identify: [{ userId: user, traits: { step: 3 }, messageId: x }, { userId: user, traits: { other: false }, messageId: y }] });
  t.same(two.body.results.map((r: { duplicate?: boolean }) => r.duplicate), [true, true], 'repeats of an earlier batch');
  const person = await s.req('GET', `/people/${user}`, { token: w.key });
  t.same(person.body.person.traits, { plan: 'free', step: 1, other: true }, 'only the first of each messageId was applied');

  // A deleted person's identifies are forgotten with them: the next is written as new.
  t.equal((await s.req('DELETE', `/people/${user}`, { token: w.key })).status, 200);
  const anew = await post(w, '/identify', { userId: user, traits: { plan: 'pro' }, messageId: id });
  t.equal(anew.status, 200, anew.text);
  t.notOk('duplicate' in anew.body);
  t.not(anew.body.person.id, first.body.person.id);
  t.same(anew.body.person.traits, { plan: 'pro' });
});

t.test('workspaces keep their own messageIds', async (t) => {
  const [a, b] = [await workspace(), await workspace()];
  const user = uniqueUser('mid');
  const id = mid();
  const ta = await post(a, '/track', { event: 'x', userId: user, messageId: id });
  const tb = await post(b, '/track', { event: 'x', userId: user, messageId: id });
  t.notOk('duplicate' in tb.body.data, 'the same messageId in another workspace is new');
  t.not(tb.body.data.event_id, ta.body.data.event_id);
  const ia = await post(a, '/identify', { userId: user, messageId: id });
  const ib = await post(b, '/identify', { userId: user, messageId: id });
  t.notOk('duplicate' in ia.body, 'a track and an identify keep their own messageIds');
  t.notOk('duplicate' in ib.body);
  t.not(ia.body.person.id, ib.body.person.id);
});

// On JetStream a repeat within its 2-minute duplicate window is dropped by the stream itself,
// so the aged row (the store's memory only) is tried on the embedded Log.
t.test('past the window a messageId is new again', { skip: process.env.NATS_URL ? 'the store row is aged, not the stream' : false }, async (t) => {
  const w = await workspace();
  const user = uniqueUser('mid');
  const id = mid();
  const first = await post(w, '/track', { event: 'old', userId: user, messageId: id });
  const identified = await post(w, '/identify', { userId: user, traits: { v: 1 }, messageId: id });
  await sql.query(`UPDATE ingest_message_ids SET accepted_at = now() - interval '7 days 1 minute' WHERE workspace_id = $1 AND message_id = $2`, [w.ws.id, id]);
  const again = await post(w, '/track', { event: 'new', userId: user, messageId: id });
  t.equal(again.status, 201, again.text);
  t.notOk('duplicate' in again.body.data, 'a new message');
  t.not(again.body.data.event_id, first.body.data.event_id);
  t.same((await eventsOf(first.body.data.person_id, 2)).map((e) => e.type).sort(), ['new', 'old']);
  t.equal((await post(w, '/track', { event: 'new', userId: user, messageId: id })).body.data.duplicate, true, 'and remembered from then on');
  const reidentified = await post(w, '/identify', { userId: user, traits: { v: 2 }, messageId: id });
  t.notOk('duplicate' in reidentified.body);
  t.equal(reidentified.body.person.id, identified.body.person.id);
  t.same(reidentified.body.person.traits, { v: 2 });
});

/** An active event campaign listening to `purchase`, enrolling without a delay. */
async function campaign(server: Herald, w: W): Promise<string> {
  const hdr = { token: w.ws.token, headers: { 'x-workspace-id': w.ws.id } };
  const node = { id: 'hello', type: 'push', title: 'Thanks', body: 'Bought' };
  const c = await server.req('POST', '/campaigns', { ...hdr, body: { name: 'On purchase', trigger_type: 'event', trigger_config: { event_names: ['purchase'] }, workflow_definition: { nodes: [node] } } });
  if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`);
  const id = c.body.data.campaign.id as string;
  const a = await server.req('PUT', `/campaigns/${id}`, { ...hdr, body: { status: 'active' } });
  if (a.status !== 200) throw new Error(`activate: ${a.status} ${a.text}`);
  return id;
}

const enrolled = async (db: pg.Client, campaignId: string): Promise<number> => (await db.query('SELECT count(*)::int AS n FROM campaign_enrolments WHERE campaign_id = $1', [campaignId])).rows[0].n;

t.test('an event campaign is triggered once by a repeated messageId', async (t: Test) => {
  const w = await workspace();
  const campaignId = await campaign(s, w);
  const user = uniqueUser('mid');
  const id = mid();
  const first = await post(w, '/track', { event: 'purchase', userId: user, messageId: id });
  t.equal(first.status, 201, first.text);
  t.equal(await enrolled(sql, campaignId), 1, 'the first enrols');
  const again = await post(w, '/track', { event: 'purchase', userId: user, messageId: id });
  t.equal(again.body.data.duplicate, true);
  const batch = await post(w, '/track/batch', { events: [{ event: 'purchase', userId: user, messageId: id }, { event: 'purchase', userId: user, messageId: `${id}-b` }, { event: 'purchase', userId: user, messageId: `${id}-b` }] });
  t.same(batch.body.results.map((r: { duplicate?: boolean }) => r.duplicate ?? false), [true, false, true]);
  t.equal(await enrolled(sql, campaignId), 2, 'one enrolment per messageId');
});

t.test('kill -9 between the store commit and the answer: the retry is a duplicate, with no second event or trigger', async (t) => {
  const servers = await serversOnOneDir(t, NO_LIMITS, 'message-ids-kill');
  const first = servers.first;
  const w = await workspace(first);
  const campaignId = await campaign(first, w);
  const user = uniqueUser('mid-kill');
  const id = mid();
  const body = { event: 'purchase', userId: user, messageId: id };
  // The trigger runs after the event is durable and before the answer: holding the enrolment
  // table holds the answer there, while the event and its messageId are committed.
  const db = new pg.Client({ connectionString: storeUrl(first) });
  await db.connect();
  db.on('error', () => {});
  await db.query('BEGIN');
  await db.query('LOCK TABLE campaign_enrolments IN EXCLUSIVE MODE');
  const pending = first.req('POST', '/track', { token: w.key, body }).catch((err: unknown) => err);
  await eventually(async () => (await db.query(`SELECT count(*)::int AS n FROM ingest_message_ids WHERE workspace_id = $1 AND message_id = $2`, [w.ws.id, id])).rows[0].n === 1, 10_000);
  await first.stop('SIGKILL');
  const lost = await pending;
  t.ok(lost instanceof Error, 'the first request got no answer');
  await db.query('ROLLBACK').catch(() => {});
  await db.end().catch(() => {});

  const second = await servers.again();
  const retry = await post(w, '/track', body, second);
  t.equal(retry.status, 201, retry.text);
  t.equal(retry.body.data.duplicate, true, 'the retry is a duplicate');
  const check = new pg.Client({ connectionString: storeUrl(second) });
  await check.connect();
  t.teardown(() => check.end());
  const stored = await eventsOf(retry.body.data.person_id, 1, check);
  t.same(stored.map((e) => e.id), [retry.body.data.event_id], 'one event, the first');
  // The first request's enrolment was waiting on the lock when Herald died: its PostgreSQL
  // backend may still complete it once the lock is released. The retry adds none.
  await new Promise((r) => setTimeout(r, 500));
  t.ok(await enrolled(check, campaignId) <= 1, 'no second trigger');
});

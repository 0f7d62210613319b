// The webhook trigger through the real HTTP server (docs/ingest.md;
// README, Errors): every error code in the flat `{error}` body, the Idempotency-Key rules (claimed
// only after the checks, replay, 409 while in progress, 422 with other data, an abandoned
// claim taken over, 503 with the claim store down), the audience and its ceiling. The claim
// store is the one the server runs with: PostgreSQL on the embedded default, NATS KV with
// NATS_URL. Every response is checked against the OpenAPI document.
import t, { type Test } from 'tap';
import pg from 'pg';
import net from 'node:net';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { startServer, newKey, storeUrl, workspaceWithKeys, eventually, type Res, type TestServer } from '../helpers/server.js';
import { checkResponse } from '../helpers/contract.js';
import { NO_LIMITS, ISO_MS, type Ws } from '../helpers/assert.js';

/** Small, so that truncation needs few people; the other audiences here stay within it. */
const CEILING = 5;
const s: TestServer = await startServer({ ...NO_LIMITS, HERALD_TRIGGER_AUDIENCE_CEILING: String(CEILING) });
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

interface Setup {
  ws: Ws;
  /** A key holding campaigns:trigger. */
  trigger: string;
  /** A key reading and writing people, registering devices. */
  write: string;
}

async function setup(srv = s): Promise<Setup> {
  const k = await workspaceWithKeys(srv, { trigger: ['campaigns:trigger'], write: ['people:read', 'people:write', 'devices:register'] });
  return { ws: k.ws, trigger: k.trigger, write: k.write };
}

/** Creates people `<prefix>-<i>` with the traits given. */
async function addPeople(w: Setup, prefix: string, n: number, traits: Record<string, unknown> = {}, srv = s): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const r = await srv.req('POST', '/people/batch', { token: w.write, body: { identify: ids.map((userId) => ({ userId, traits })) } });
  if (r.status !== 200 || r.body.results.some((x: { success: boolean }) => !x.success)) throw new Error(`people batch failed: ${r.status} ${r.text.slice(0, 300)}`);
  return ids;
}

const PRO = { filters: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }], match: 'all' };
const PUSH_NODE = { id: 'hello', type: 'push', title: 'Hello {{ trigger.name }}', body: 'Your order {{ trigger.order.id }}' };

/** A campaign created through the dashboard routes, then moved to `status` (when not draft). */
async function campaign(w: Setup, opts: { trigger_type?: string; trigger_config?: object; audience?: object; status?: string } = {}, srv = s): Promise<string> {
  const hdr = { token: w.ws.token, headers: { 'x-workspace-id': w.ws.id } };
  const c = await srv.req('POST', '/campaigns', {
    ...hdr,
    body: { name: 'Hook', trigger_type: opts.trigger_type ?? 'webhook', trigger_config: opts.trigger_config ?? {}, audience_config: opts.audience ?? {}, workflow_definition: { nodes: [PUSH_NODE] } },
  });
  if (c.status !== 201) throw new Error(`campaign create failed: ${c.status} ${c.text}`);
  const id = c.body.data.campaign.id as string;
  const status = opts.status ?? 'active';
  if (status !== 'draft') {
    const u = await srv.req('PUT', `/campaigns/${id}`, { ...hdr, body: { status } });
    if (u.status !== 200) throw new Error(`campaign ${status} failed: ${u.status} ${u.text}`);
  }
  return id;
}

interface Fire {
  key?: string;
  body?: unknown;
  token?: string;
  trigger_data?: Record<string, unknown>;
}

function fire(w: Setup, id: string, o: Fire = {}, srv = s): Promise<Res> {
  return srv.req('POST', `/campaigns/${id}/trigger`, {
    token: o.token ?? w.trigger,
    body: o.body ?? { workspace_id: w.ws.id, ...(o.trigger_data ? { trigger_data: o.trigger_data } : {}) },
    headers: o.key === undefined ? {} : { 'idempotency-key': o.key },
  });
}

/** README, Errors: the trigger's errors are `{error}` and nothing else. */
function flat(t: Test, r: Res, status: number, message?: RegExp): void {
  t.equal(r.status, status, `status ${status}: ${r.text.slice(0, 300)}`);
  t.same(Object.keys(r.body ?? {}), ['error'], 'flat {error}');
  t.type(r.body?.error, 'string');
  if (message) t.match(r.body?.error, message);
}

/** A fresh trigger's 202. */
function processing(t: Test, r: Res, id: string, queued: number, key?: string): void {
  t.equal(r.status, 202, r.text);
  t.equal(r.body.success, true);
  t.equal(r.body.campaign_id, id);
  t.equal(r.body.status, 'processing');
  t.match(r.body.triggered_at, ISO_MS);
  t.equal(r.body.people_queued, queued, `${queued} queued`);
  t.notOk('duplicate' in r.body, 'no duplicate on a fresh trigger');
  if (key === undefined) t.notOk('idempotency_key' in r.body, 'no idempotency_key without a key');
  else t.equal(r.body.idempotency_key, key, 'the key is echoed');
  t.type(r.body.message, 'string');
}

/** The replay of `first` (a fresh trigger's body). */
function replayed(t: Test, r: Res, first: Record<string, unknown>): void {
  t.equal(r.status, 202, r.text);
  t.equal(r.body.status, 'completed');
  t.equal(r.body.duplicate, true);
  t.equal(r.body.triggered_at, first.triggered_at, 'the original triggered_at');
  t.equal(r.body.people_queued, first.people_queued, 'the original people_queued');
  t.equal(r.body.idempotency_key, first.idempotency_key);
  t.equal(r.body.audience_truncated, first.audience_truncated);
}

/** Enrolments of the campaign, and distinct runs among them (GET /campaigns/{id} stats). */
async function stats(w: Setup, id: string, srv = s): Promise<{ enrolled: number; triggered: number }> {
  const r = await srv.req('GET', `/campaigns/${id}`, { token: w.ws.token, headers: { 'x-workspace-id': w.ws.id } });
  if (r.status !== 200) throw new Error(`campaign get failed: ${r.status} ${r.text}`);
  return { enrolled: r.body.data.stats.enrolled, triggered: r.body.data.stats.triggered };
}

t.test('the stats follow deletions: a deleted person leaves enrolled, a deleted campaign leaves no counters', async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:read', 'people:write', 'people:delete', 'devices:register'] });
  const w = { ws: k.ws, trigger: k.trigger, write: k.write };
  const [first] = await addPeople(w, 'gone', 3, { plan: 'pro' });
  const id = await campaign(w, { audience: PRO });
  processing(t, await fire(w, id), id, 3);
  const r = await s.req('DELETE', `/people/${first}`, { token: w.write });
  t.equal(r.status, 200, r.text);
  t.same(await stats(w, id), { enrolled: 2, triggered: 1 }, 'the deleted person is no longer counted; the run still is');
  const hdr = { token: w.ws.token, headers: { 'x-workspace-id': w.ws.id } };
  t.equal((await s.req('PUT', `/campaigns/${id}`, { ...hdr, body: { status: 'paused' } })).status, 200);
  const d = await s.req('DELETE', `/campaigns/${id}`, hdr);
  t.equal(d.status, 200, d.text);
  const left = await sql.query('SELECT count(*)::int AS n FROM enrolment_counters WHERE campaign_id = $1', [id]);
  t.equal(left.rows[0].n, 0, 'the counters went with the campaign');
});

t.test('a trigger enrols the audience and answers 202 processing', async (t) => {
  const w = await setup();
  await addPeople(w, 'pro', 3, { plan: 'pro' });
  await addPeople(w, 'free', 2, { plan: 'free' });
  const id = await campaign(w, { audience: PRO });
  const r = await fire(w, id, { trigger_data: { name: 'Ada', order: { id: 'o-1' } } });
  processing(t, r, id, 3);
  t.notOk('audience_truncated' in r.body, 'audience_truncated omitted when false');
  t.match(r.body.message, /3 people queued/);
  t.ok(Math.abs(Date.parse(r.body.triggered_at) - Date.now()) < 60_000, 'triggered_at is now');
  t.same(await stats(w, id), { enrolled: 3, triggered: 1 }, 'the three pro people enrolled, durable before the 202');

  // Without a key every call is a new trigger.
  processing(t, await fire(w, id), id, 3);
  t.same(await stats(w, id), { enrolled: 6, triggered: 2 });

  // Nobody matching is still 202.
  const empty = await campaign(w, { audience: { filters: [{ field: 'traits.plan', operator: 'eq', value: 'enterprise' }], match: 'all' } });
  processing(t, await fire(w, empty), empty, 0);
  const all = await campaign(w);
  processing(t, await fire(w, all), all, 5, undefined);
});

t.test('the audience is sent the push, trigger_data in its templates; a replay sends nothing more', async (t) => {
  const w = await setup();
  const [ann, bob] = await addPeople(w, 'send', 2, { plan: 'pro' });
  await addPeople(w, 'other', 1, { plan: 'free' });
  const d = await s.req('POST', `/people/${ann}/devices`, { token: w.write, body: { token: `tok-${ann}-0123456789`, platform: 'android' } });
  t.equal(d.status, 201, d.text);
  const id = await campaign(w, { audience: PRO });
  const hdr = { token: w.ws.token, headers: { 'x-workspace-id': w.ws.id } };
  const sent = async (n: number) => (await s.req('GET', `/campaigns/${id}`, hdr)).body.data.stats.sent === n;
  const messages = async (userId: string) => {
    const person = await s.req('GET', `/people/${userId}`, { token: w.write });
    return (await s.req('GET', `/workspaces/${w.ws.id}/people/${person.body.person.id}/messages`, { token: w.ws.token })).body.messages;
  };

  const first = await fire(w, id, { key: 'send-1', trigger_data: { name: 'Ada', order: { id: 'o-9' } } });
  processing(t, first, id, 2, 'send-1');
  t.equal(await eventually(() => sent(1), 20_000), true, 'the executor sent the push');
  const [msg] = await messages(ann!);
  t.match(msg, { status: 'sent', provider: 'sandbox', campaign_id: id, title: 'Hello Ada', body: 'Your order o-9' }, 'trigger_data rendered');
  t.match(await messages(bob!), [{ status: 'skipped', skip_reason: 'no_active_device_tokens', campaign_id: id }], 'a person without a device: the skip recorded');
  t.same(await messages(`other-0`), [], 'outside the audience: nothing');

  replayed(t, await fire(w, id, { key: 'send-1', trigger_data: { order: { id: 'o-9' }, name: 'Ada' } }), first.body);
  processing(t, await fire(w, id, { trigger_data: { name: 'Bo', order: { id: 'o-10' } } }), id, 2);
  t.equal(await eventually(() => sent(2), 20_000), true);
  t.same((await messages(ann!)).map((m: { title: string }) => m.title), ['Hello Bo', 'Hello Ada'], 'one push per trigger, none for the replay');
  t.same(await stats(w, id), { enrolled: 4, triggered: 2 });
});

t.test('the audience ceiling: people_queued stops at it, audience_truncated and the warning', async (t) => {
  const w = await setup();
  await addPeople(w, 'many', CEILING + 2);
  const id = await campaign(w);
  const r = await fire(w, id, { key: 'trunc-1' });
  processing(t, r, id, CEILING, 'trunc-1');
  t.equal(r.body.audience_truncated, true);
  t.match(r.body.message, /Warning: .*ceiling.*HERALD_TRIGGER_AUDIENCE_CEILING/);
  t.same(await stats(w, id), { enrolled: CEILING, triggered: 1 }, 'only the ceiling enrolled');
  const again = await fire(w, id, { key: 'trunc-1' });
  replayed(t, again, r.body);
  t.match(again.body.message, /Warning: /, 'a replay of a truncated trigger warns too');

  const exact = await setup();
  await addPeople(exact, 'exact', CEILING);
  const e = await campaign(exact);
  const x = await fire(exact, e);
  processing(t, x, e, CEILING);
  t.notOk('audience_truncated' in x.body, 'exactly the ceiling is not truncated');
  t.notMatch(x.body.message, /Warning/);
});

t.test('errors, each in the flat {error} body', async (t) => {
  const w = await setup();
  await addPeople(w, 'p', 2);
  const id = await campaign(w);

  flat(t, await fire(w, id, { body: { workspace_id: randomUUID() } }), 403, /workspace_id/);
  flat(t, await fire(w, id, { body: { trigger_data: {} } }), 400, /workspace_id/);
  flat(t, await fire(w, id, { body: { workspace_id: w.ws.id, user_ids: ['p-0'] } }), 400, /user_ids.*audience/);
  flat(t, await fire(w, id, { body: { workspace_id: w.ws.id, trigger_data: 'x' } }), 400, /trigger_data/);
  const upper = await fire(w, id, { body: { workspace_id: w.ws.id.toUpperCase() } });
  t.equal(upper.status, 202, 'workspace_id compares case-insensitively');

  flat(t, await fire(w, randomUUID()), 404, /not found/i);
  flat(t, await fire(w, 'not-a-uuid'), 404);
  const other = await setup();
  const theirs = await campaign(other);
  flat(t, await fire(w, theirs), 404, /not found/i);
  flat(t, await fire(w, theirs, { body: { workspace_id: other.ws.id } }), 403, /workspace_id/);

  const event = await campaign(w, { trigger_type: 'event', trigger_config: { event_names: ['signed_up'] } });
  flat(t, await fire(w, event), 400, /webhook/);
  for (const status of ['draft', 'paused', 'archived', 'completed']) {
    flat(t, await fire(w, await campaign(w, { status })), 400, new RegExp(`is ${status}`));
  }

  const noPermission = await newKey(s, w.ws, { permissions: ['people:read'] });
  flat(t, await fire(w, id, { token: noPermission.key }), 403);
  t.same(await stats(w, id), { enrolled: 2, triggered: 1 }, 'only the accepted trigger enrolled');
});

/** A request written byte by byte (fetch refuses such header values), its answer held to the OpenAPI document. */
async function rawTrigger(port: number, path: string, token: string, key: Buffer, body: string): Promise<{ status: number; body: { error?: string } }> {
  const head = Buffer.from(`POST /api/v1${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\nIdempotency-Key: `);
  const text = await new Promise<string>((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => sock.write(Buffer.concat([head, key, Buffer.from(`\r\n\r\n${body}`)])));
    let out = '';
    sock.on('data', (d) => (out += d.toString('latin1')));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
  });
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
  let payload = text.slice(text.indexOf('\r\n\r\n') + 4);
  if (/transfer-encoding: chunked/i.test(text.slice(0, text.indexOf('\r\n\r\n')))) payload = payload.replace(/^[0-9a-f]+\r\n/i, '').replace(/\r\n0\r\n\r\n$/, '');
  await checkResponse('POST', `/api/v1${path}`, status, payload);
  return { status, body: JSON.parse(payload) };
}

t.test('Idempotency-Key: at most 255 bytes of printable ASCII, sent once', async (t) => {
  const w = await setup();
  await addPeople(w, 'k', 1);
  const id = await campaign(w);
  flat(t, await fire(w, id, { key: 'k'.repeat(256) }), 400, /256 bytes; at most 255/);
  processing(t, await fire(w, id, { key: 'k'.repeat(255) }), id, 1, 'k'.repeat(255));
  const punctuation = `a !"#$%&'()*+,-./09:;<=>?@AZ[\\]^_\`az{|}~`;
  processing(t, await fire(w, id, { key: punctuation }), id, 1, punctuation);

  const body = JSON.stringify({ workspace_id: w.ws.id });
  for (const [what, bytes] of [
    ['a tab', Buffer.from('ab\tcd')],
    ['DEL', Buffer.from([0x61, 0x7f, 0x62])],
    ['a Latin-1 byte', Buffer.from([0x61, 0xe9, 0x62])],
    ['UTF-8', Buffer.from('caf\u00e9s')],
  ] as const) {
    const r = await rawTrigger(s.port, `/campaigns/${id}/trigger`, w.trigger, bytes, body);
    t.equal(r.status, 400, `${what}: 400`);
    t.match(r.body.error, /printable ASCII/, what);
  }
  const empty = await rawTrigger(s.port, `/campaigns/${id}/trigger`, w.trigger, Buffer.from(''), body);
  t.equal(empty.status, 400, 'an empty key');
  t.match(empty.body.error, /empty/);
  const twice = await rawTrigger(s.port, `/campaigns/${id}/trigger`, w.trigger, Buffer.from('a\r\nIdempotency-Key: b'), body);
  t.equal(twice.status, 400, 'the header twice');
  t.match(twice.body.error, /more than once/);
  t.same(await stats(w, id), { enrolled: 2, triggered: 2 }, 'refused keys sent nothing');
});

t.test('a replay answers the first trigger and sends nothing again; other trigger_data is 422', async (t) => {
  const w = await setup();
  await addPeople(w, 'r', 2);
  const id = await campaign(w);
  const data = { name: 'Ada', order: { id: 'o-1', items: [1, 2] } };
  const first = await fire(w, id, { key: 'order-o-1', trigger_data: data });
  processing(t, first, id, 2, 'order-o-1');
  t.match(first.body.message, /queued/);

  await addPeople(w, 'later', 1);
  const again = await fire(w, id, { key: 'order-o-1', trigger_data: { order: { items: [1, 2], id: 'o-1' }, name: 'Ada' } });
  replayed(t, again, first.body);
  t.match(again.body.message, /Duplicate/);
  t.same(await stats(w, id), { enrolled: 2, triggered: 1 }, 'the replay enrolled nobody (the person added since neither)');

  flat(t, await fire(w, id, { key: 'order-o-1', trigger_data: { ...data, name: 'Bob' } }), 422, /different trigger_data/);
  flat(t, await fire(w, id, { key: 'order-o-1' }), 422, undefined);
  t.same(await stats(w, id), { enrolled: 2, triggered: 1 }, '422 sent nothing');

  // Scoped to the campaign: the key is new on another one.
  const other = await campaign(w);
  processing(t, await fire(w, other, { key: 'order-o-1', trigger_data: data }), other, 3, 'order-o-1');
  // Keys are compared exactly.
  processing(t, await fire(w, id, { key: 'ORDER-O-1', trigger_data: data }), id, 3, 'ORDER-O-1');
});

t.test('the key is claimed only after the checks: a refused trigger does not consume it', async (t) => {
  const w = await setup();
  await addPeople(w, 'c', 1);
  const id = await campaign(w, { status: 'paused' });
  flat(t, await fire(w, id, { key: 'early' }), 400, /is paused/);
  flat(t, await fire(w, id, { key: 'early', body: { workspace_id: randomUUID() } }), 403);
  flat(t, await fire(w, id, { key: 'early', body: { workspace_id: w.ws.id, audience: {} } }), 400);
  const put = await s.req('PUT', `/campaigns/${id}`, { token: w.ws.token, headers: { 'x-workspace-id': w.ws.id }, body: { status: 'active' } });
  t.equal(put.status, 200);
  processing(t, await fire(w, id, { key: 'early' }), id, 1, 'early');
});

/**
 * Holds the campaign row locked (as a concurrent edit would) until `release`: a trigger that
 * has claimed its key then waits in its enrolment, in progress, until the lock goes.
 */
async function holdCampaign(url: string, id: string): Promise<{ blocked(): Promise<number>; release(): Promise<void> }> {
  const c = new pg.Client({ connectionString: url });
  // Another session watches: one inside a transaction sees the activity of its start.
  const watch = new pg.Client({ connectionString: url });
  await Promise.all([c.connect(), watch.connect()]);
  await c.query('BEGIN');
  await c.query('SELECT id FROM campaigns WHERE id = $1 FOR UPDATE', [id]);
  const pid = (await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  return {
    // Sessions waiting on this one, directly or behind another waiter: the triggers stuck behind the lock.
    blocked: async () => {
      const r = await watch.query<{ n: number }>(
        `WITH RECURSIVE behind(pid) AS (SELECT $1::int UNION SELECT a.pid FROM pg_stat_activity a JOIN behind b ON b.pid = ANY(pg_blocking_pids(a.pid)))
         SELECT count(*)::int - 1 AS n FROM behind`,
        [pid],
      );
      return r.rows[0]!.n;
    },
    release: async () => {
      await c.query('ROLLBACK');
      await Promise.all([c.end(), watch.end()]);
    },
  };
}

t.test('the same key while the first trigger is in progress: 409, nothing sent again', async (t) => {
  const w = await setup();
  await addPeople(w, 'ip', 3);
  const id = await campaign(w);
  const lock = await holdCampaign(storeUrl(s), id);
  const first = fire(w, id, { key: 'slow', trigger_data: { n: 1 } });
  t.equal(await eventually(async () => (await lock.blocked()) === 1), true, 'the first trigger claimed the key and waits in its enrolment');
  flat(t, await fire(w, id, { key: 'slow', trigger_data: { n: 1 } }), 409, /in progress/);
  flat(t, await fire(w, id, { key: 'slow', trigger_data: { n: 2 } }), 422, undefined);
  t.equal(await lock.blocked(), 1, 'neither went on to enrol');
  await lock.release();
  const done = await first;
  processing(t, done, id, 3, 'slow');
  replayed(t, await fire(w, id, { key: 'slow', trigger_data: { n: 1 } }), done.body);
  t.same(await stats(w, id), { enrolled: 3, triggered: 1 }, 'enrolled once');
});

t.test('concurrent identical triggers with one key: one runs, the others see its claim', async (t) => {
  const w = await setup();
  await addPeople(w, 'cc', 4);
  const id = await campaign(w);
  const rs = await Promise.all(Array.from({ length: 12 }, () => fire(w, id, { key: 'burst', trigger_data: { a: 1 } })));
  const fresh = rs.filter((r) => r.status === 202 && r.body.status === 'processing');
  t.equal(fresh.length, 1, 'exactly one trigger ran');
  for (const r of rs) {
    if (r === fresh[0]) continue;
    if (r.status === 409) flat(t, r, 409);
    else replayed(t, r, fresh[0]!.body);
  }
  t.same(await stats(w, id), { enrolled: 4, triggered: 1 });
});

t.test('a claim abandoned in progress (its request timed out) is taken over by a retry, enrolling nobody twice', async (t) => {
  const timeoutMs = 1500;
  const srv = await startServer({ ...NO_LIMITS, HERALD_REQUEST_TIMEOUT_MS: String(timeoutMs) });
  t.teardown(() => srv.stop());
  const w = await setup(srv);
  await addPeople(w, 'ab', 3, {}, srv);
  const id = await campaign(w, {}, srv);
  const lock = await holdCampaign(storeUrl(srv), id);
  const sentAt = Date.now();
  const first = await fire(w, id, { key: 'stuck' }, srv);
  flat(t, first, 503, /timed out/);
  t.ok(Date.now() - sentAt >= timeoutMs, 'answered 503 by the request timeout; its enrolment still waits');
  // The claim was made a moment after the request started: let it pass the request timeout too.
  await new Promise((r) => setTimeout(r, 500));
  // The first trigger's claim, abandoned: a retry takes it over, keeping its id and time.
  const retry = fire(w, id, { key: 'stuck' }, srv);
  t.equal(await eventually(async () => (await lock.blocked()) === 2), true, 'the retry took the claim over and waits to enrol too');
  await lock.release();
  const r = await retry;
  processing(t, r, id, 3, 'stuck');
  t.ok(Date.parse(r.body.triggered_at) < sentAt + timeoutMs, `triggered_at is the first trigger's (${r.body.triggered_at})`);
  t.same(await stats(w, id, srv), { enrolled: 3, triggered: 1 }, 'both ran as one trigger: everyone enrolled once');
  replayed(t, await fire(w, id, { key: 'stuck' }, srv), r.body);
});

/**
 * The claim store made unavailable, then back: on the embedded default its table, with NATS_URL
 * the NATS server (one of the test's own).
 */
const natsMissing = process.env.NATS_URL && spawnSync('nats-server', ['--version']).error ? 'nats-server is not installed' : false;
const sharedDatabase = !process.env.NATS_URL && process.env.DATABASE_URL ? 'the claims table is in a shared PostgreSQL database: not taken away under other tests' : false;
t.test('the claim store unavailable: 503 with Retry-After, nothing sent, the key still free', { skip: natsMissing || sharedDatabase }, async (t) => {
  if (process.env.NATS_URL) return natsDown(t);
  const w = await setup();
  await addPeople(w, 'down', 2);
  const id = await campaign(w);
  await sql.query('ALTER TABLE trigger_claims RENAME TO trigger_claims_away');
  try {
    const r = await fire(w, id, { key: 'while-down' });
    flat(t, r, 503, /idempotency store is unavailable; nothing was sent/);
    t.equal(r.headers.get('retry-after'), '1');
    processing(t, await fire(w, id), id, 2, undefined);
  } finally {
    await sql.query('ALTER TABLE trigger_claims_away RENAME TO trigger_claims');
  }
  t.same(await stats(w, id), { enrolled: 2, triggered: 1 }, 'only the trigger without a key enrolled');
  processing(t, await fire(w, id, { key: 'while-down' }), id, 2, 'while-down');
});

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** With NATS_URL: a server on a NATS of its own, which the test stops and starts again. */
async function natsDown(t: Test): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-nats-'));
  const port = await freePort();
  let nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
  const up = () => eventually(() => new Promise<boolean>((r) => net.connect(port, '127.0.0.1').on('connect', function (this: net.Socket) { this.destroy(); r(true); }).on('error', () => r(false))));
  t.teardown(() => {
    nats.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  t.equal(await up(), true, 'nats-server up');
  const srv = await startServer({ ...NO_LIMITS, NATS_URL: `nats://127.0.0.1:${port}`, CLICKHOUSE_URL: undefined });
  t.teardown(() => srv.stop());
  const w = await setup(srv);
  await addPeople(w, 'nd', 2, {}, srv);
  const id = await campaign(w, {}, srv);

  nats.kill('SIGKILL');
  await new Promise((r) => nats.once('exit', r));
  const r = await fire(w, id, { key: 'while-down' }, srv);
  flat(t, r, 503, /idempotency store is unavailable; nothing was sent/);
  t.equal(r.headers.get('retry-after'), '1');
  processing(t, await fire(w, id, {}, srv), id, 2, undefined);
  t.same(await stats(w, id, srv), { enrolled: 2, triggered: 1 }, 'only the trigger without a key enrolled');

  nats = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
  t.equal(await up(), true, 'nats-server back');
  const back = await eventually(async () => {
    const x = await fire(w, id, { key: 'while-down' }, srv);
    return x.status === 202 ? x : null;
  }, 20_000);
  processing(t, back!, id, 2, 'while-down');
}

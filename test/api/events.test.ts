// Events through the real HTTP server: track, track/batch, the event reads and the dashboard's
// events route, errors and limits, the events/search shape, the anonymous merge, a deleted
// person's events, `since` (docs/ingest.md; README, Routes). Reads lag writes slightly (the Log sink), hence `eventually`.
import t, { type Test } from 'tap';
import { randomUUID } from 'node:crypto';
import { newKey, eventually, uniqueUser, workspaceWithKeys, serversOnOneDir, type Herald, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { NO_LIMITS, UUID, ISO_MS, FORBIDDEN, keyError, badRequest } from '../helpers/assert.js';

const ENV = NO_LIMITS;
const s = await sharedServer();

const TRACK_DATA_FIELDS = ['event', 'event_id', 'parameters', 'person_id', 'processed_at', 'status', 'timestamp'];
const EVENT_FIELDS = ['created_at', 'id', 'parameters', 'type'];
const SEARCH_EVENT_FIELDS = ['created_at', 'external_id', 'id', 'parameters', 'type'];
const DASHBOARD_EVENT_FIELDS = ['created_at', 'id', 'parameters', 'person_id', 'type'];
// How long a read may lag: generous, this is a bound on waiting, not a speed assertion.
const LAG_MS = 20_000;

const setup = (srv: Herald = s) => workspaceWithKeys(srv, { all: ['*'], write: ['events:write'], read: ['events:read'], del: ['people:delete'] });

const sorted = (a: string[]) => [...a].sort();
const enc = encodeURIComponent;
const ids = (events: { id: string }[]) => events.map((e) => e.id);

function track(token: string, body: unknown, srv: Herald = s): Promise<Res> {
  return srv.req('POST', '/track', { token, body });
}
function trackBatch(token: string, body: unknown, srv: Herald = s): Promise<Res> {
  return srv.req('POST', '/track/batch', { token, body });
}
function personEvents(token: string, userId: string, query = '', srv: Herald = s): Promise<Res> {
  return srv.req('GET', `/people/${enc(userId)}/events${query ? `?${query}` : ''}`, { token });
}
function search(token: string, query: string): Promise<Res> {
  return s.req('GET', `/events/search?${query}`, { token });
}
function dashboardEvents(ws: { id: string }, personId: string, token: string, query = ''): Promise<Res> {
  return s.req('GET', `/workspaces/${ws.id}/people/${personId}/events${query ? `?${query}` : ''}`, { token });
}

/** Tracks and insists on a 201; returns data. */
async function tracked(t: Test, token: string, body: Record<string, unknown>, srv: Herald = s) {
  const r = await track(token, body, srv);
  t.equal(r.status, 201, `track 201: ${r.text.slice(0, 300)}`);
  return r.body?.data as { event_id: string; person_id: string; event: string; timestamp: string; person_created?: boolean };
}

/** Polls the person's events until `want` ids are all there (or gives up); returns the last read. */
async function readUntil(token: string, userId: string, want: string[], query = 'limit=500', srv: Herald = s, ms = LAG_MS): Promise<Res> {
  let last!: Res;
  await eventually(async () => {
    last = await personEvents(token, userId, query, srv);
    if (last.status !== 200) return false;
    const got = new Set(ids(last.body.events));
    return want.every((id) => got.has(id));
  }, ms);
  return last;
}

/** Polls the search until `want` ids are all there (or gives up); returns the last read. */
async function searchUntil(token: string, query: string, want: string[]): Promise<Res> {
  let last!: Res;
  await eventually(async () => {
    last = await search(token, query);
    if (last.status !== 200) return false;
    const got = new Set(ids(last.body.events));
    return want.every((id) => got.has(id));
  }, LAG_MS);
  return last;
}

/** The session-route error body (README, Errors). */
function sessionError(t: Test, r: Res, status: number, code?: string): void {
  t.equal(r.status, status, `status ${status}: ${r.text.slice(0, 300)}`);
  t.equal(r.body?.success, false);
  if (code) t.equal(r.body?.error?.code, code, `code ${code}`);
  else t.type(r.body?.error?.code, 'string');
  t.type(r.body?.error?.message, 'string');
  t.ok(r.body?.error && 'details' in r.body.error, 'error.details present');
}

/** `n` batch entries for one person, timestamps one second apart from `start`. */
function entries(userId: string, event: string, n: number, start = Date.parse('2022-01-01T00:00:00.000Z')) {
  return Array.from({ length: n }, (_, i) => ({ external_id: userId, event, parameters: { i }, timestamp: new Date(start + i * 1000).toISOString() }));
}

/** Tracks `n` events for one person through batches of 100; returns the event ids in order. */
async function trackMany(t: Test, token: string, userId: string, event: string, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let off = 0; off < n; off += 100) {
    const batch = entries(userId, event, Math.min(100, n - off), Date.parse('2022-01-01T00:00:00.000Z') + off * 1000);
    const r = await trackBatch(token, { events: batch });
    t.equal(r.status, 201, `batch 201: ${r.text.slice(0, 300)}`);
    out.push(...(r.body?.results ?? []).map((x: { event_id: string }) => x.event_id));
  }
  return out;
}

const isNewestFirst = (events: { created_at: string; id: string }[]) =>
  events.every((e, i) => i === 0 || Date.parse(events[i - 1]!.created_at) >= Date.parse(e.created_at));

// ---------------------------------------------------------------------------------------
// POST /track

t.test('track: 201 with the documented body; person_created only for an unknown external_id', async (t) => {
  const k = await setup();
  const user = uniqueUser('trk');
  const before = Date.now();
  const r = await track(k.write, { event: 'signed_up', external_id: user, parameters: { plan: 'pro', n: 3, nested: { a: [1, 2] } } });
  const after = Date.now();
  t.equal(r.status, 201, r.text);
  t.same(sorted(Object.keys(r.body)), ['data', 'success']);
  t.equal(r.body.success, true);
  const d = r.body.data;
  t.same(sorted(Object.keys(d)), sorted([...TRACK_DATA_FIELDS, 'person_created']), 'data fields (person_created for a new person)');
  t.match(d.event_id, UUID, 'event_id is a UUID');
  t.match(d.person_id, UUID, 'person_id is a UUID');
  t.equal(d.event, 'signed_up');
  t.same(d.parameters, { plan: 'pro', n: 3, nested: { a: [1, 2] } }, 'parameters echoed');
  t.match(d.timestamp, ISO_MS, 'timestamp ISO with ms');
  t.match(d.processed_at, ISO_MS, 'processed_at ISO with ms');
  t.ok(Date.parse(d.timestamp) >= before - 1000 && Date.parse(d.timestamp) <= after + 1000, 'timestamp defaults to now');
  t.equal(d.status, 'processed');
  t.equal(d.person_created, true, 'person_created: true for an unknown external_id');

  // The person exists now, with that UUID.
  const p = await s.req('GET', `/people/${enc(user)}`, { token: k.all });
  t.equal(p.status, 200, p.text);
  t.equal(p.body?.person?.id, d.person_id, 'the created person carries the returned person_id');
  t.equal(p.body?.person?.userId, user);

  // A second event for the same person: same person_id, no person_created key.
  const r2 = await track(k.write, { event: 'logged_in', external_id: user });
  t.equal(r2.status, 201, r2.text);
  t.same(sorted(Object.keys(r2.body.data)), TRACK_DATA_FIELDS, 'person_created absent for a known person');
  t.equal(r2.body.data.person_id, d.person_id);
  t.not(r2.body.data.event_id, d.event_id, 'a fresh event id');
  t.same(r2.body.data.parameters, {}, 'parameters default to {}');

  // A person created by identify is known too.
  const other = uniqueUser('trk-ident');
  const idr = await s.req('POST', '/identify', { token: k.all, body: { userId: other } });
  t.equal(idr.status, 200, idr.text);
  const r3 = await track(k.write, { event: 'logged_in', userId: other });
  t.equal(r3.status, 201, r3.text);
  t.notOk('person_created' in r3.body.data, 'no person_created for a person made by identify');
  t.equal(r3.body.data.person_id, idr.body.person.id);
});

t.test('track: identifier aliases external_id / userId / user_id name one person', async (t) => {
  const k = await setup();
  const user = uniqueUser('alias');
  const a = await tracked(t, k.write, { event: 'a_done', external_id: user });
  const b = await tracked(t, k.write, { event: 'b_done', userId: user });
  const c = await tracked(t, k.write, { event: 'c_done', user_id: user });
  const all3 = await tracked(t, k.write, { event: 'd_done', user_id: user, userId: user, external_id: user });
  t.equal(a.person_created, true);
  for (const x of [b, c, all3]) {
    t.equal(x.person_id, a.person_id, 'same person whichever alias');
    t.notOk('person_created' in x);
  }
  const r = await readUntil(k.read, user, [a.event_id, b.event_id, c.event_id, all3.event_id]);
  t.same(sorted(ids(r.body.events)), sorted([a.event_id, b.event_id, c.event_id, all3.event_id]), 'all four events on the one person');
});

t.test('track: disagreeing aliases are 400 IDENTIFIER_CONFLICT and nothing is written', async (t) => {
  const k = await setup();
  const u1 = uniqueUser('conf-a');
  const u2 = uniqueUser('conf-b');
  for (const body of [
    { event: 'x_done', userId: u1, user_id: u2 },
    { event: 'x_done', userId: u1, external_id: u2 },
    { event: 'x_done', user_id: u1, external_id: u2 },
    { event: 'x_done', userId: u1, user_id: u1, external_id: u2 },
  ]) {
    const r = await track(k.write, body);
    keyError(t, r, 400, 'IDENTIFIER_CONFLICT');
  }
  for (const u of [u1, u2]) {
    const p = await s.req('GET', `/people/${enc(u)}`, { token: k.all });
    t.equal(p.status, 404, `no person ${u} created: ${p.text.slice(0, 200)}`);
  }
});

t.test('track: missing identifier, missing or bad event, bad parameters and timestamp are 400 Bad Request', async (t) => {
  const k = await setup();
  const user = uniqueUser('bad');
  const noId = await track(k.write, { event: 'x_done', parameters: { a: 1 } });
  t.equal(noId.status, 400, `missing identifier: ${noId.text}`);
  badRequest(t, noId);

  const noEvent = await track(k.write, { external_id: user, parameters: { a: 1 } });
  badRequest(t, noEvent, 'event');
  t.same(sorted(Object.keys(noEvent.body)), ['code', 'details', 'error', 'message'], 'exactly {error, message, code, details}');

  badRequest(t, await track(k.write, { external_id: user, event: '' }), 'event');
  badRequest(t, await track(k.write, { external_id: user, event: 42 }), 'event');
  badRequest(t, await track(k.write, { external_id: user, event: 'x_done', parameters: 'nope' }), 'parameters');
  badRequest(t, await track(k.write, { external_id: user, event: 'x_done', parameters: [1, 2] }), 'parameters');
  badRequest(t, await track(k.write, { external_id: user, event: 'x_done', properties: 7 }), 'properties');
  badRequest(t, await track(k.write, { external_id: user, event: 'x_done', timestamp: 'yesterday' }), 'timestamp');
  badRequest(t, await track(k.write, { external_id: '', event: 'x_done' }), 'external_id');
  badRequest(t, await track(k.write, { external_id: 'x'.repeat(256), event: 'x_done' }), 'external_id');

  const bad = await s.req('POST', '/track', { token: k.write, raw: '{"event": "x_done", ', headers: { 'content-type': 'application/json' } });
  t.equal(bad.status, 400, `malformed JSON is 400: ${bad.text.slice(0, 200)}`);

  const p = await s.req('GET', `/people/${enc(user)}`, { token: k.all });
  t.equal(p.status, 404, 'no person created by rejected tracks');
});

t.test('track: properties is an alias of parameters', async (t) => {
  const k = await setup();
  const user = uniqueUser('props');
  const d = await tracked(t, k.write, { event: 'item_viewed', external_id: user, properties: { sku: 'A-1', price: 9.5 } });
  t.same(d && (d as unknown as { parameters: unknown }).parameters, { sku: 'A-1', price: 9.5 }, 'properties echoed as parameters');
  const r = await readUntil(k.read, user, [d.event_id]);
  const ev = r.body.events.find((e: { id: string }) => e.id === d.event_id);
  t.same(ev?.parameters, { sku: 'A-1', price: 9.5 }, 'stored under parameters');
  t.equal(ev?.type, 'item_viewed');
});

t.test('track: a given timestamp is echoed (ISO UTC with ms) and becomes created_at', async (t) => {
  const k = await setup();
  const user = uniqueUser('ts');
  const a = await tracked(t, k.write, { event: 'ts_a', external_id: user, timestamp: '2021-03-04T05:06:07.123Z' });
  t.equal(a.timestamp, '2021-03-04T05:06:07.123Z', 'echoed');
  const b = await tracked(t, k.write, { event: 'ts_b', external_id: user, timestamp: '2021-03-04T07:06:08+02:00' });
  t.equal(b.timestamp, '2021-03-04T05:06:08.000Z', 'an offset timestamp is echoed in UTC with ms');
  const r = await readUntil(k.read, user, [a.event_id, b.event_id]);
  const byId = new Map(r.body.events.map((e: { id: string; created_at: string }) => [e.id, e.created_at]));
  t.equal(byId.get(a.event_id), '2021-03-04T05:06:07.123Z', 'created_at is the sent timestamp');
  t.equal(byId.get(b.event_id), '2021-03-04T05:06:08.000Z');
});

t.test('track: timestamps at the ends of the accepted range read back exactly; earlier years are 400 (never read as 19xx)', async (t) => {
  const k = await setup();
  const user = uniqueUser('early');
  // Before 1970 is outside what ClickHouse DateTime holds (README, Request bodies).
  for (const timestamp of ['0001-01-01T00:00:00.000Z', '0099-06-01T12:00:00.500Z', '1969-12-31T23:59:59.500Z']) {
    badRequest(t, await track(k.write, { event: 'early', external_id: user, timestamp }), 'timestamp');
  }
  const stamps = ['1970-01-01T00:00:00.000Z', '1970-01-01T00:00:00.500Z', '1999-06-01T12:00:00.500Z', '2106-02-07T06:28:15.999Z'];
  const sent = [];
  for (const timestamp of stamps) sent.push(await tracked(t, k.write, { event: 'early', external_id: user, timestamp }));
  const r = await readUntil(k.read, user, sent.map((e) => e.event_id));
  const byId = new Map(r.body.events.map((e: { id: string; created_at: string }) => [e.id, e.created_at]));
  sent.forEach((e, i) => t.equal(byId.get(e.event_id), stamps[i], `created_at ${stamps[i]}`));
});

t.test('track: a leap second (valid RFC 3339, no such instant in JS) is 400; in a batch one failed entry', async (t) => {
  const k = await setup();
  const user = uniqueUser('leap');
  const one = await track(k.write, { event: 'leap', external_id: user, timestamp: '2016-12-31T23:59:60Z' });
  badRequest(t, one, 'timestamp');
  const r = await trackBatch(k.write, { events: [{ event: 'ok', external_id: user }, { event: 'leap', external_id: user, timestamp: '2016-12-31T23:59:60Z' }] });
  t.equal(r.status, 207, r.text);
  t.same(r.body.errors.map((e: { index: number }) => e.index), [1], 'the leap-second entry failed');
  t.equal(r.body.processed, 1);
});

t.test('track: permissions (events:write), public keys, auth', async (t) => {
  const k = await setup();
  const user = uniqueUser('perm');
  const [peopleRead, eventsRead, peopleWrite] = await Promise.all([
    newKey(s, k.ws, { permissions: ['people:read'] }),
    newKey(s, k.ws, { permissions: ['events:read'] }),
    newKey(s, k.ws, { permissions: ['people:write', 'people:read'] }),
  ]);
  for (const key of [peopleRead.key, eventsRead.key, peopleWrite.key]) {
    const r = await track(key, { event: 'x_done', external_id: user });
    t.equal(r.status, 403, r.text);
    t.same(r.body, FORBIDDEN);
    const b = await trackBatch(key, { events: [{ event: 'x_done', external_id: user }] });
    t.equal(b.status, 403, b.text);
    t.same(b.body, FORBIDDEN);
  }
  const p = await s.req('GET', `/people/${enc(user)}`, { token: k.all });
  t.equal(p.status, 404, 'refused tracks wrote nothing');

  const none = await s.req('POST', '/track', { body: { event: 'x_done', external_id: user } });
  t.equal(none.status, 401, none.text);
  t.equal(none.body?.error, 'Unauthorized');
  t.equal(none.body?.message, 'Invalid or expired API key');

  // A public key with its default permission set can track, single and batch.
  const pub = await newKey(s, k.ws, { key_type: 'public' });
  t.match(pub.key, /^pk_live_/);
  const r = await track(pub.key, { event: 'app_opened', external_id: user });
  t.equal(r.status, 201, r.text);
  t.equal(r.body?.data?.person_created, true);
  const b = await trackBatch(pub.key, { events: [{ event: 'app_closed', external_id: user }] });
  t.equal(b.status, 201, b.text);

  // The events:write key cannot read.
  const rd = await personEvents(k.write, user);
  t.equal(rd.status, 403, rd.text);
  t.same(rd.body, FORBIDDEN);
  const sr = await search(k.write, 'event=app_opened');
  t.equal(sr.status, 403, sr.text);
  t.same(sr.body, FORBIDDEN);
  const pr = await personEvents(peopleRead.key, user);
  t.equal(pr.status, 403, 'people:read does not open event reads');
});

t.test('track: CORS headers on responses; preflight answered', async (t) => {
  const k = await setup();
  const user = uniqueUser('cors');
  const ok = await s.req('POST', '/track', { token: k.write, body: { event: 'x_done', external_id: user }, headers: { origin: 'https://app.example.com' } });
  t.equal(ok.status, 201, ok.text);
  t.equal(ok.headers.get('access-control-allow-origin'), '*', 'CORS header on 201');
  const bad = await s.req('POST', '/track', { token: k.write, body: { external_id: user }, headers: { origin: 'https://app.example.com' } });
  t.equal(bad.status, 400);
  t.equal(bad.headers.get('access-control-allow-origin'), '*', 'CORS header on 400');
  const batch = await s.req('POST', '/track/batch', { token: k.write, body: { events: [{ event: 'x_done', external_id: user }] }, headers: { origin: 'https://app.example.com' } });
  t.equal(batch.status, 201, batch.text);
  t.equal(batch.headers.get('access-control-allow-origin'), '*', 'CORS header on the batch');

  const pre = await s.req('OPTIONS', '/track', {
    headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });
  t.ok(pre.status === 200 || pre.status === 204, `preflight 2xx: ${pre.status}`);
  t.equal(pre.headers.get('access-control-allow-origin'), '*');
  t.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
  t.match((pre.headers.get('access-control-allow-headers') ?? '').toLowerCase(), /authorization/);
});

// ---------------------------------------------------------------------------------------
// POST /track/batch

t.test('track/batch: all valid → 201 with a result per entry, all readable', async (t) => {
  const k = await setup();
  const u1 = uniqueUser('b1');
  const u2 = uniqueUser('b2');
  const body = {
    events: [
      { event: 'page_viewed', external_id: u1, parameters: { p: 1 } },
      { event: 'page_viewed', userId: u2, properties: { p: 2 } },
      { event: 'button_clicked', user_id: u1, timestamp: '2023-05-06T07:08:09.010Z' },
    ],
  };
  const r = await trackBatch(k.write, body);
  t.equal(r.status, 201, r.text);
  t.same(sorted(Object.keys(r.body)), ['processed', 'results', 'success', 'total']);
  t.equal(r.body.success, true);
  t.equal(r.body.processed, 3);
  t.equal(r.body.total, 3);
  t.equal(r.body.results.length, 3);
  r.body.results.forEach((x: Record<string, unknown>, i: number) => {
    t.equal(x.index, i, 'index is the position');
    t.match(x.event_id, UUID);
    t.match(x.person_id, UUID);
    t.equal(x.event, body.events[i]!.event);
    t.equal(x.status, 'processed');
    const extra = Object.keys(x).filter((f) => !['index', 'event_id', 'person_id', 'event', 'status'].includes(f));
    t.ok(extra.every((f) => f === 'person_created'), `only documented fields: ${JSON.stringify(x)}`);
  });
  t.equal(r.body.results[0].person_id, r.body.results[2].person_id, 'aliases name one person inside the batch');
  t.not(r.body.results[0].person_id, r.body.results[1].person_id);
  t.equal(new Set(ids(r.body.results.map((x: { event_id: string }) => ({ id: x.event_id })))).size, 3, 'distinct event ids');

  const e1 = await readUntil(k.read, u1, [r.body.results[0].event_id, r.body.results[2].event_id]);
  t.same(sorted(ids(e1.body.events)), sorted([r.body.results[0].event_id, r.body.results[2].event_id]));
  const btn = e1.body.events.find((e: { id: string }) => e.id === r.body.results[2].event_id);
  t.equal(btn?.created_at, '2023-05-06T07:08:09.010Z', 'timestamp used in the batch too');
  const e2 = await readUntil(k.read, u2, [r.body.results[1].event_id]);
  t.same(e2.body.events.map((e: { parameters: unknown }) => e.parameters), [{ p: 2 }], 'properties alias in the batch');
});

t.test('track/batch: some invalid → 207 with successes in results and failures in errors by index', async (t) => {
  const k = await setup();
  const u1 = uniqueUser('m1');
  const u2 = uniqueUser('m2');
  const u3 = uniqueUser('m3');
  const body = {
    events: [
      { event: 'ok_zero', external_id: u1 },
      { external_id: u1 }, // no event
      { event: 'ok_two', userId: u1 },
      { event: 'conflict', userId: u2, user_id: u3 }, // IDENTIFIER_CONFLICT
      { event: 'no_identifier' },
      { event: 'bad_ts', external_id: u2, timestamp: 'not a time' },
      { event: 'bad_params', external_id: u3, parameters: 'x' },
      { event: 'ok_seven', external_id: u1, parameters: { last: true } },
    ],
  };
  const r = await trackBatch(k.write, body);
  t.equal(r.status, 207, r.text);
  t.same(sorted(Object.keys(r.body)), ['errors', 'processed', 'results', 'success', 'total']);
  t.equal(r.body.success, false);
  t.equal(r.body.processed, 3);
  t.equal(r.body.total, 8);
  t.same(r.body.results.map((x: { index: number }) => x.index), [0, 2, 7], 'results: successes only, by index');
  t.same(r.body.results.map((x: { event: string }) => x.event), ['ok_zero', 'ok_two', 'ok_seven']);
  for (const x of r.body.results) {
    t.match(x.event_id, UUID);
    t.equal(x.status, 'processed');
  }
  t.same(r.body.errors.map((x: { index: number }) => x.index), [1, 3, 4, 5, 6], 'errors by index');
  for (const e of r.body.errors) {
    t.same(sorted(Object.keys(e)), ['error', 'index'], 'error entry is {index, error}');
    t.type(e.error, 'string');
    t.ok(e.error.length > 0, 'non-empty error message');
  }

  const want = r.body.results.map((x: { event_id: string }) => x.event_id);
  const rd = await readUntil(k.read, u1, want);
  t.same(sorted(ids(rd.body.events)), sorted(want), 'exactly the successes were stored');
  for (const u of [u2, u3]) {
    const p = await s.req('GET', `/people/${enc(u)}`, { token: k.all });
    t.equal(p.status, 404, `failed entries created nobody (${u})`);
  }

  // Every entry failing is still a 207 with nothing processed.
  const none = await trackBatch(k.write, { events: [{ external_id: u1 }, { event: 'x_done' }] });
  t.equal(none.status, 207, none.text);
  t.equal(none.body?.success, false);
  t.equal(none.body?.processed, 0);
  t.equal(none.body?.total, 2);
  t.same(none.body?.results, []);
  t.same(none.body?.errors?.map((x: { index: number }) => x.index), [0, 1]);
});

t.test('track/batch: 101 events → 400 BATCH_TOO_LARGE, nothing written; 100 → 201', async (t) => {
  const k = await setup();
  const user = uniqueUser('big');
  const event = uniqueUser('big_evt');
  const tooMany = await trackBatch(k.write, { events: entries(user, event, 101) });
  keyError(t, tooMany, 400, 'BATCH_TOO_LARGE');
  const p = await s.req('GET', `/people/${enc(user)}`, { token: k.all });
  t.equal(p.status, 404, 'an oversized batch wrote nothing');

  const hundred = await trackBatch(k.write, { events: entries(user, event, 100) });
  t.equal(hundred.status, 201, hundred.text.slice(0, 300));
  t.equal(hundred.body?.processed, 100);
  t.equal(hundred.body?.total, 100);
  t.same(hundred.body?.results?.map((x: { index: number }) => x.index), Array.from({ length: 100 }, (_, i) => i));
  const want = hundred.body.results.map((x: { event_id: string }) => x.event_id);
  const rd = await readUntil(k.read, user, want);
  t.equal(rd.body.events.length, 100, 'all 100 stored');

  // After the sink has caught up, still no trace of the refused 101.
  const sr = await search(k.read, `event=${enc(event)}&limit=500`);
  t.equal(sr.status, 200);
  t.equal(sr.body.events.length, 100, 'only the accepted batch is searchable');
});

t.test('track/batch: events missing or not an array → 400 Bad Request', async (t) => {
  const k = await setup();
  badRequest(t, await trackBatch(k.write, {}), 'events');
  badRequest(t, await trackBatch(k.write, { events: 'x' }), 'events');
  badRequest(t, await trackBatch(k.write, { events: { event: 'x', external_id: 'y' } }), 'events');
  badRequest(t, await trackBatch(k.write, { events: null }), 'events');
  badRequest(t, await trackBatch(k.write, { event: 'x_done', external_id: 'y' }), 'events');
});

// ---------------------------------------------------------------------------------------
// GET /people/{external_id}/events

t.test('person events: newest first by timestamp, documented shape', async (t) => {
  const k = await setup();
  const user = uniqueUser('pe');
  // Sent out of order.
  const mid = await tracked(t, k.write, { event: 'mid', external_id: user, parameters: { n: 2 }, timestamp: '2020-06-01T00:00:00.000Z' });
  const old = await tracked(t, k.write, { event: 'old', external_id: user, parameters: { n: 1 }, timestamp: '2020-01-01T00:00:00.000Z' });
  const neu = await tracked(t, k.write, { event: 'new', external_id: user, parameters: { n: 3 }, timestamp: '2020-12-01T00:00:00.000Z' });
  const r = await readUntil(k.read, user, [mid.event_id, old.event_id, neu.event_id], '');
  t.equal(r.status, 200, r.text);
  t.same(sorted(Object.keys(r.body)), ['events', 'person_id', 'success', 'total']);
  t.equal(r.body.success, true);
  t.equal(r.body.person_id, user, 'person_id echoes the external id');
  t.equal(r.body.total, 3, 'total is the page size');
  t.same(ids(r.body.events), [neu.event_id, mid.event_id, old.event_id], 'newest first');
  t.same(r.body.events[0], { id: neu.event_id, type: 'new', parameters: { n: 3 }, created_at: '2020-12-01T00:00:00.000Z' });
  for (const e of r.body.events) t.same(sorted(Object.keys(e)), EVENT_FIELDS, 'event fields');

  const unknown = await personEvents(k.read, uniqueUser('nobody'));
  keyError(t, unknown, 404, 'PERSON_NOT_FOUND');
});

t.test('person events: limit default 50, explicit, above the max reduced to 500, invalid → 400', async (t) => {
  const k = await setup();
  const user = uniqueUser('lim');
  const all = await trackMany(t, k.write, user, 'lim_evt', 600);
  t.equal(all.length, 600);
  const newest = [...all].reverse(); // timestamps ascend with the index
  // Wait until all 600 are in: the 500-page ends at the 101st-oldest.
  const full = await readUntil(k.read, user, newest.slice(0, 500), 'limit=500');
  t.same(ids(full.body.events), newest.slice(0, 500), 'limit=500: the newest 500, in order');

  const def = await personEvents(k.read, user);
  t.equal(def.status, 200, def.text.slice(0, 200));
  t.equal(def.body.events.length, 50, 'default limit 50');
  t.equal(def.body.total, 50);
  t.same(ids(def.body.events), newest.slice(0, 50));

  const ten = await personEvents(k.read, user, 'limit=10');
  t.same(ids(ten.body.events), newest.slice(0, 10));
  t.equal(ten.body.total, 10);

  const big = await personEvents(k.read, user, 'limit=1000');
  t.equal(big.status, 200, big.text.slice(0, 200));
  t.equal(big.body.events.length, 500, 'limit 1000 silently reduced to 500');
  t.equal(big.body.total, 500);
  t.ok(isNewestFirst(big.body.events));

  badRequest(t, await personEvents(k.read, user, 'limit=-1'), 'limit');
  badRequest(t, await personEvents(k.read, user, 'limit=abc'), 'limit');
  badRequest(t, await personEvents(k.read, user, 'limit=2.5'), 'limit');
});

// ---------------------------------------------------------------------------------------
// GET /events/search

t.test('events/search: shape, newest first, since on the sent timestamp, limit, workspace scope', async (t) => {
  const k = await setup();
  const other = await setup();
  const event = uniqueUser('searched');
  const u1 = uniqueUser('s1');
  const u2 = uniqueUser('s2');
  const e1 = await tracked(t, k.write, { event, external_id: u1, parameters: { k: 1 }, timestamp: '2019-01-01T00:00:00.000Z' });
  const e2 = await tracked(t, k.write, { event, external_id: u2, parameters: { k: 2 }, timestamp: '2019-02-01T00:00:00.000Z' });
  const e3 = await tracked(t, k.write, { event, external_id: u1, parameters: { k: 3 }, timestamp: '2019-03-01T00:00:00.000Z' });
  const decoy = await tracked(t, k.write, { event: `${event}_other`, external_id: u1, timestamp: '2019-04-01T00:00:00.000Z' });
  // The same event name in another workspace, same external id.
  const foreign = await tracked(t, other.write, { event, external_id: u1, timestamp: '2019-05-01T00:00:00.000Z' });

  const r = await searchUntil(k.read, `event=${enc(event)}`, [e1.event_id, e2.event_id, e3.event_id]);
  t.equal(r.status, 200, r.text);
  t.same(sorted(Object.keys(r.body)), ['events', 'limit', 'success', 'total']);
  t.equal(r.body.success, true);
  t.same(ids(r.body.events), [e3.event_id, e2.event_id, e1.event_id], 'exactly this workspace’s events of that name, newest first');
  t.equal(r.body.total, 3, 'total is the page size');
  t.equal(r.body.limit, 50, 'default limit 50');
  t.same(r.body.events[0], { id: e3.event_id, type: event, parameters: { k: 3 }, created_at: '2019-03-01T00:00:00.000Z', external_id: u1 });
  t.equal(r.body.events[1].external_id, u2);
  for (const e of r.body.events) t.same(sorted(Object.keys(e)), SEARCH_EVENT_FIELDS);
  t.notOk(ids(r.body.events).includes(decoy.event_id), 'other event names excluded');

  // The other workspace sees only its own.
  const o = await searchUntil(other.read, `event=${enc(event)}`, [foreign.event_id]);
  t.same(ids(o.body.events), [foreign.event_id], 'the other workspace sees only its event');

  // since compares created_at (the sent timestamp), inclusive.
  const since = await search(k.read, `event=${enc(event)}&since=${enc('2019-02-01T00:00:00.000Z')}`);
  t.equal(since.status, 200, since.text);
  t.same(ids(since.body.events), [e3.event_id, e2.event_id], 'since: at or after');
  t.equal(since.body.total, 2);
  const sinceOffset = await search(k.read, `event=${enc(event)}&since=${enc('2019-02-01T01:00:00+01:00')}`);
  t.same(ids(sinceOffset.body.events), [e3.event_id, e2.event_id], 'since with an offset');
  const late = await search(k.read, `event=${enc(event)}&since=${enc('2019-03-01T00:00:00.001Z')}`);
  t.same(late.body.events, [], 'since after every event: none (though all were ingested just now)');
  t.equal(late.body.total, 0);

  const one = await search(k.read, `event=${enc(event)}&limit=1`);
  t.same(ids(one.body.events), [e3.event_id]);
  t.equal(one.body.limit, 1);
  t.equal(one.body.total, 1);
  const big = await search(k.read, `event=${enc(event)}&limit=1000`);
  t.equal(big.status, 200, big.text);
  t.equal(big.body.limit, 500, 'limit above the max is reduced to 500');
  t.equal(big.body.events.length, 3);

  badRequest(t, await search(k.read, ''), 'event');
  badRequest(t, await search(k.read, `since=${enc('2019-01-01T00:00:00Z')}`), 'event');
  badRequest(t, await search(k.read, `event=${enc(event)}&since=yesterday`), 'since');
  badRequest(t, await search(k.read, `event=${enc(event)}&limit=-1`), 'limit');

  const nothing = await search(k.read, `event=${enc(uniqueUser('never_tracked'))}`);
  t.equal(nothing.status, 200);
  t.same(nothing.body, { success: true, events: [], total: 0, limit: 50 });
});

t.test('events/search: the limit reduction is real with over 500 matches', async (t) => {
  const k = await setup();
  const event = uniqueUser('many');
  const user = uniqueUser('many-u');
  const all = await trackMany(t, k.write, user, event, 600);
  const newest = [...all].reverse();
  const r = await searchUntil(k.read, `event=${enc(event)}&limit=500`, newest.slice(0, 500));
  t.same(ids(r.body.events), newest.slice(0, 500));
  const big = await search(k.read, `event=${enc(event)}&limit=1000`);
  t.equal(big.body.events.length, 500);
  t.equal(big.body.total, 500);
  t.equal(big.body.limit, 500);
  const def = await search(k.read, `event=${enc(event)}`);
  t.same(ids(def.body.events), newest.slice(0, 50), 'default 50, newest first');
});

// ---------------------------------------------------------------------------------------
// Every acknowledged event becomes readable

t.test('every acknowledged event becomes readable exactly once (200 parallel tracks)', async (t) => {
  const k = await setup();
  const people = Array.from({ length: 5 }, () => uniqueUser('par'));
  const event = uniqueUser('par_evt');
  const rs = await Promise.all(
    Array.from({ length: 200 }, (_, i) => track(k.write, { event, external_id: people[i % people.length], parameters: { i } })),
  );
  const statuses = rs.map((r) => r.status);
  t.same(statuses, Array(200).fill(201), 'all 201');
  const byPerson = new Map<string, string[]>(people.map((p) => [p, []]));
  const personIdOf = new Map<string, Set<string>>(people.map((p) => [p, new Set()]));
  rs.forEach((r, i) => {
    byPerson.get(people[i % people.length]!)!.push(r.body?.data?.event_id);
    personIdOf.get(people[i % people.length]!)!.add(r.body?.data?.person_id);
  });
  for (const p of people) {
    t.equal(personIdOf.get(p)!.size, 1, `one person_id for ${p}`);
    const created = rs.filter((r, i) => people[i % people.length] === p && r.body?.data?.person_created === true).length;
    t.equal(created, 1, `person_created: true on exactly one of the first concurrent tracks for ${p}`);
  }
  const allIds = rs.map((r) => r.body?.data?.event_id);
  t.equal(new Set(allIds).size, 200, '200 distinct event ids');

  const seen: string[] = [];
  for (const p of people) {
    const r = await readUntil(k.read, p, byPerson.get(p)!);
    t.equal(r.status, 200);
    t.same(sorted(ids(r.body.events)), sorted(byPerson.get(p)!), `${p}: exactly its 40 events`);
    seen.push(...ids(r.body.events));
  }
  t.equal(seen.length, 200, 'the reads account for 200 events');
  t.same(sorted(seen), sorted(allIds), 'every acknowledged event_id, exactly once');
  const sr = await search(k.read, `event=${enc(event)}&limit=500`);
  t.same(sorted(ids(sr.body.events)), sorted(allIds), 'search agrees');
});

// ---------------------------------------------------------------------------------------
// Delete

t.test('delete: a deleted person’s events are gone from every read route', async (t) => {
  const k = await setup();
  const user = uniqueUser('del');
  const keep = uniqueUser('del-keep');
  const event = uniqueUser('del_evt');
  const a = await tracked(t, k.write, { event, external_id: user, timestamp: '2024-01-01T00:00:00.000Z' });
  const b = await tracked(t, k.write, { event, external_id: user, timestamp: '2024-01-02T00:00:00.000Z' });
  const kept = await tracked(t, k.write, { event, external_id: keep, timestamp: '2024-01-03T00:00:00.000Z' });
  await readUntil(k.read, user, [a.event_id, b.event_id]);
  await searchUntil(k.read, `event=${enc(event)}`, [a.event_id, b.event_id, kept.event_id]);

  const forbidden = await s.req('DELETE', `/people/${enc(user)}`, { token: k.read });
  t.equal(forbidden.status, 403, 'events:read cannot delete');
  const del = await s.req('DELETE', `/people/${enc(user)}`, { token: k.del });
  t.equal(del.status, 200, del.text);

  const after = await personEvents(k.read, user);
  keyError(t, after, 404, 'PERSON_NOT_FOUND');
  const sr = await search(k.read, `event=${enc(event)}`);
  t.same(ids(sr.body.events), [kept.event_id], 'search no longer returns them; others remain');
  const dash = await dashboardEvents(k.ws, a.person_id, k.ws.token);
  sessionError(t, dash, 404, 'PERSON_NOT_FOUND');

  // Tracking the external id again makes a new person without the old events.
  const again = await tracked(t, k.write, { event, external_id: user, timestamp: '2024-01-04T00:00:00.000Z' });
  t.equal(again.person_created, true, 'a new person after delete');
  t.not(again.person_id, a.person_id, 'with a new id');
  const r = await readUntil(k.read, user, [again.event_id]);
  t.same(ids(r.body.events), [again.event_id], 'the old events did not come back');
});

t.test('delete: events still on the log when their person is deleted never become readable', async (t) => {
  const k = await setup();
  const user = uniqueUser('del-fast');
  const marker = uniqueUser('del-marker');
  const event = uniqueUser('del_fast_evt');
  const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => track(k.write, { event, external_id: user, parameters: { i } })));
  t.same(rs.map((r) => r.status), Array(20).fill(201));
  const del = await s.req('DELETE', `/people/${enc(user)}`, { token: k.del });
  t.equal(del.status, 200, del.text);
  // Anything tracked after the delete is sunk after it; wait for the marker.
  const m = await tracked(t, k.write, { event, external_id: marker });
  const sr = await searchUntil(k.read, `event=${enc(event)}&limit=500`, [m.event_id]);
  t.same(ids(sr.body.events), [m.event_id], 'only the marker; none of the deleted person’s events');
  keyError(t, await personEvents(k.read, user), 404, 'PERSON_NOT_FOUND');
});

t.test('delete racing a track: a later track lands on a live person and is readable', async (t) => {
  // People made by identify (so no track has looked them up yet); for each, a track and a
  // DELETE in flight together, the DELETE a moment behind. Whatever the interleaving, once
  // both are answered a further track must be stored on a person that exists, and be readable.
  const k = await setup();
  const problems: string[] = [];
  for (let round = 0; round < 3; round++) {
    const users = Array.from({ length: 30 }, () => uniqueUser('race'));
    const made = await Promise.all(users.map((u) => s.req('POST', '/identify', { token: k.all, body: { userId: u } })));
    t.same(made.map((r) => r.status), Array(users.length).fill(200), 'people identified');
    const raced = await Promise.all(
      users.map(async (u, i) => {
        const tr = track(k.write, { event: 'raced', external_id: u });
        await new Promise((r) => setTimeout(r, i % (3 + 2 * round))); // staggers, to cover the window
        const del = s.req('DELETE', `/people/${enc(u)}`, { token: k.del });
        return Promise.all([tr, del]);
      }),
    );
    t.same(raced.map(([tr, del]) => [tr.status, del.status]), Array(users.length).fill([201, 200]), 'racing track 201, delete 200');

    const later = await Promise.all(users.map((u) => track(k.write, { event: 'after_delete', external_id: u })));
    t.same(later.map((r) => r.status), Array(users.length).fill(201), 'later tracks 201');
    for (const [i, u] of users.entries()) {
      const d = later[i]!.body?.data;
      const p = await s.req('GET', `/people/${enc(u)}`, { token: k.all });
      if (p.status !== 200 || p.body?.person?.id !== d?.person_id) {
        problems.push(`POST /track {event:'after_delete', external_id:'${u}'} → ${later[i]!.status} ${later[i]!.text}; then GET /people/${u} → ${p.status} ${p.text}`);
        continue;
      }
      const r = await readUntil(k.read, u, [d.event_id]);
      if (!(r.status === 200 && ids(r.body?.events ?? []).includes(d.event_id))) problems.push(`${u}: acknowledged event ${d.event_id} not readable: ${r.status} ${r.text.slice(0, 200)}`);
    }
  }
  t.same(problems, [], `every later track is on a live person and readable (${problems.length} not)`);
});

// ---------------------------------------------------------------------------------------
// Anonymous merge

async function mergeCase(t: Test, waitBeforeIdentify: boolean): Promise<void> {
  const k = await setup();
  const x = uniqueUser('m');
  const anon = `anon-${x}`.slice(0, 36);
  const user = `u-${x}`;
  const own = await tracked(t, k.write, { event: 'own_evt', external_id: user, timestamp: '2024-02-01T00:00:00.000Z' });
  const a1 = await tracked(t, k.write, { event: 'anon_evt', external_id: anon, parameters: { n: 1 }, timestamp: '2024-01-01T00:00:00.000Z' });
  const a2 = await tracked(t, k.write, { event: 'anon_evt', external_id: anon, parameters: { n: 2 }, timestamp: '2024-01-02T00:00:00.000Z' });
  if (waitBeforeIdentify) {
    const r = await readUntil(k.read, anon, [a1.event_id, a2.event_id]);
    t.same(sorted(ids(r.body.events)), sorted([a1.event_id, a2.event_id]), 'anonymous events readable before the merge');
  }
  const idr = await s.req('POST', '/identify', { token: k.all, body: { userId: user, anonymousId: anon } });
  t.equal(idr.status, 200, idr.text);

  const want = [own.event_id, a1.event_id, a2.event_id];
  const r = await readUntil(k.read, user, want);
  t.same(ids(r.body.events), [own.event_id, a2.event_id, a1.event_id], 'the identified person has both histories, newest first');
  t.equal(r.body.person_id, user);
  const gone = await eventually(async () => (await s.req('GET', `/people/${enc(anon)}`, { token: k.all })).status === 404, LAG_MS);
  t.ok(gone, 'the anonymous person is deleted');
  const anonEvents = await personEvents(k.read, anon);
  keyError(t, anonEvents, 404, 'PERSON_NOT_FOUND');
  const sr = await searchUntil(k.read, 'event=anon_evt', [a1.event_id, a2.event_id]);
  for (const e of sr.body.events.filter((e: { id: string }) => e.id === a1.event_id || e.id === a2.event_id)) {
    t.equal(e.external_id, user, 'search attributes the merged events to the identified person');
  }
  const dash = await dashboardEvents(k.ws, own.person_id, k.ws.token);
  t.equal(dash.status, 200, dash.text);
  t.same(sorted(ids(dash.body.events)), sorted(want));
  t.ok(dash.body.events.every((e: { person_id: string }) => e.person_id === own.person_id), 'dashboard: all on the identified person');
}

t.test('anonymous merge: events tracked (and readable) for the anonymous id move to the identified person', (t) => mergeCase(t, true));
t.test('anonymous merge: events still on the log at identify time follow the merge', (t) => mergeCase(t, false));

// ---------------------------------------------------------------------------------------
// Dashboard route

t.test('dashboard events: session route by person UUID', async (t) => {
  const k = await setup();
  const user = uniqueUser('dash');
  const e1 = await tracked(t, k.write, { event: 'd_one', external_id: user, parameters: { a: 1 }, timestamp: '2021-01-01T00:00:00.000Z' });
  const e2 = await tracked(t, k.write, { event: 'd_two', external_id: user, parameters: { a: 2 }, timestamp: '2021-01-02T00:00:00.000Z' });
  await readUntil(k.read, user, [e1.event_id, e2.event_id]);

  const r = await dashboardEvents(k.ws, e1.person_id, k.ws.token);
  t.equal(r.status, 200, r.text);
  t.same(sorted(Object.keys(r.body)), ['events', 'person_id', 'success', 'total']);
  t.equal(r.body.success, true);
  t.equal(r.body.person_id, e1.person_id, 'person_id is the UUID');
  t.equal(r.body.total, 2);
  t.same(r.body.events, [
    { id: e2.event_id, type: 'd_two', parameters: { a: 2 }, created_at: '2021-01-02T00:00:00.000Z', person_id: e1.person_id },
    { id: e1.event_id, type: 'd_one', parameters: { a: 1 }, created_at: '2021-01-01T00:00:00.000Z', person_id: e1.person_id },
  ], 'events with person_id, newest first');
  for (const e of r.body.events) t.same(sorted(Object.keys(e)), DASHBOARD_EVENT_FIELDS);

  const lim = await dashboardEvents(k.ws, e1.person_id, k.ws.token, 'limit=1');
  t.same(ids(lim.body.events), [e2.event_id]);
  t.equal(lim.body.total, 1);

  // Unknown UUID, non-UUID: 404 in the session shape.
  sessionError(t, await dashboardEvents(k.ws, randomUUID(), k.ws.token), 404, 'PERSON_NOT_FOUND');
  sessionError(t, await dashboardEvents(k.ws, 'not-a-uuid', k.ws.token), 404, 'PERSON_NOT_FOUND');
  sessionError(t, await dashboardEvents(k.ws, e1.person_id, k.ws.token, 'limit=-1'), 400);

  // A signed-in non-member: 403, existence not revealed.
  const stranger = await s.session(uniqueUser('stranger'));
  const nm = await dashboardEvents(k.ws, e1.person_id, stranger);
  t.equal(nm.status, 403, nm.text);
  t.same(nm.body, FORBIDDEN);
  const nmUnknown = await dashboardEvents({ id: randomUUID() }, e1.person_id, stranger);
  t.equal(nmUnknown.status, 403, 'unknown workspace: 403 as well');
  // An API key on the session route: 403. No credential: 401.
  const viaKey = await dashboardEvents(k.ws, e1.person_id, k.all);
  t.equal(viaKey.status, 403, viaKey.text);
  t.same(viaKey.body, FORBIDDEN);
  const anonymous = await s.req('GET', `/workspaces/${k.ws.id}/people/${e1.person_id}/events`);
  t.equal(anonymous.status, 401);

  // Another workspace's person through one's own workspace: 404.
  const other = await setup();
  sessionError(t, await dashboardEvents(other.ws, e1.person_id, other.ws.token), 404, 'PERSON_NOT_FOUND');
});

t.test('dashboard events: limit above 500 reduced', async (t) => {
  const k = await setup();
  const user = uniqueUser('dash-lim');
  const all = await trackMany(t, k.write, user, 'dl_evt', 600);
  const newest = [...all].reverse();
  await readUntil(k.read, user, newest.slice(0, 500));
  const pid = (await s.req('GET', `/people/${enc(user)}`, { token: k.all })).body?.person?.id;
  t.match(pid, UUID);
  const big = await dashboardEvents(k.ws, pid, k.ws.token, 'limit=1000');
  t.equal(big.status, 200, big.text.slice(0, 200));
  t.equal(big.body.events.length, 500, 'reduced to 500');
  t.equal(big.body.total, 500);
  t.same(ids(big.body.events), newest.slice(0, 500), 'newest 500 first');
  const def = await dashboardEvents(k.ws, pid, k.ws.token);
  t.equal(def.body.events.length, 50, 'default 50');
});

// ---------------------------------------------------------------------------------------
// Workspace isolation

t.test('isolation: a key of another workspace sees none of this workspace’s events', async (t) => {
  const a = await setup();
  const b = await setup();
  const user = uniqueUser('iso');
  const event = uniqueUser('iso_evt');
  const ea = await tracked(t, a.write, { event, external_id: user });
  await readUntil(a.read, user, [ea.event_id]);
  await searchUntil(a.read, `event=${enc(event)}`, [ea.event_id]);

  keyError(t, await personEvents(b.read, user), 404, 'PERSON_NOT_FOUND');
  keyError(t, await personEvents(b.all, user), 404, 'PERSON_NOT_FOUND');
  const sr = await search(b.read, `event=${enc(event)}`);
  t.equal(sr.status, 200);
  t.same(sr.body.events, [], 'B’s search sees none of A’s events');

  // The same external id in B is a different person with its own history.
  const eb = await tracked(t, b.write, { event, external_id: user });
  t.equal(eb.person_created, true, 'B has no such person yet');
  t.not(eb.person_id, ea.person_id);
  const rb = await readUntil(b.read, user, [eb.event_id]);
  t.same(ids(rb.body.events), [eb.event_id], 'B reads only its own event');
  const ra = await personEvents(a.read, user);
  t.same(ids(ra.body.events), [ea.event_id], 'A reads only its own event');
  const sb = await searchUntil(b.read, `event=${enc(event)}`, [eb.event_id]);
  t.same(ids(sb.body.events), [eb.event_id]);

  // B's owner on A's workspace: 403; on B's workspace with A's person UUID: 404.
  const cross = await dashboardEvents(a.ws, ea.person_id, b.ws.token);
  t.equal(cross.status, 403);
  sessionError(t, await dashboardEvents(b.ws, ea.person_id, b.ws.token), 404, 'PERSON_NOT_FOUND');
});

// ---------------------------------------------------------------------------------------
// Durability across a hard kill

t.test('durability: every acknowledged event survives SIGKILL and is readable after restart', async (t) => {
  const servers = await serversOnOneDir(t, ENV, 'events-durable');
  const first = servers.first;
  const k = await setup(first);
  const people = Array.from({ length: 4 }, () => uniqueUser('dur'));
  const event = uniqueUser('dur_evt');
  const singles = Array.from({ length: 80 }, (_, i) => track(k.write, { event, external_id: people[i % people.length], parameters: { i } }, first));
  const batches = people.map((p) => trackBatch(k.write, { events: Array.from({ length: 25 }, (_, i) => ({ event, external_id: p, parameters: { b: i } })) }, first));
  const [rs, bs] = await Promise.all([Promise.all(singles), Promise.all(batches)]);
  // Kill at once, before anything else can happen.
  const code = first.stop('SIGKILL');
  await code;
  t.same(rs.map((r) => r.status), Array(80).fill(201), 'all single tracks acknowledged');
  t.same(bs.map((r) => r.status), Array(people.length).fill(201), 'all batches acknowledged');

  const want = new Map<string, string[]>(people.map((p) => [p, []]));
  rs.forEach((r, i) => want.get(people[i % people.length]!)!.push(r.body.data.event_id));
  bs.forEach((r, i) => want.get(people[i]!)!.push(...r.body.results.map((x: { event_id: string }) => x.event_id)));

  const second = await servers.again();
  let total = 0;
  for (const p of people) {
    const r = await readUntil(k.read, p, want.get(p)!, 'limit=500', second, 60_000);
    t.equal(r.status, 200, r.text.slice(0, 200));
    t.same(sorted(ids(r.body.events)), sorted(want.get(p)!), `${p}: every acknowledged event, exactly once, after the restart`);
    total += r.body.events.length;
  }
  t.equal(total, 80 + 25 * people.length);
});

// The ClickHouse analytics sink through the real HTTP server, with the environment the suite
// runs in (CLICKHOUSE_URL, which needs NATS_URL; DATABASE_URL when set): tracked events reach
// `analytics_events` exactly once with the tracked fields, hostile strings are stored verbatim
// (rows travel as data, never as SQL), a person delete leaves the analytics copies, and a
// restart on the same data dir and stream writes nothing twice; the sink's write itself skips
// what the table holds (a redelivered batch). The table is shared by every
// test server on the ClickHouse database, so each check filters on its own workspace id.
import t, { type Test } from 'tap';
import { startServer, eventually, uniqueUser, workspaceWithKeys, serversOnOneDir, type Res, type TestServer } from '../helpers/server.js';
import { NO_LIMITS, UUID, keyError } from '../helpers/assert.js';
import { randomUUID } from 'node:crypto';
import { clickHouseAnalytics } from '../../src/analytics/clickhouse.js';
import type { EventRecord } from '../../src/domain/events.js';

const CLICKHOUSE_URL = process.env.CLICKHOUSE_URL;
// How long ClickHouse or a read may lag: a bound on waiting, not a speed assertion.
const LAG_MS = 60_000;
// After the expected rows are there, how long to keep watching for a duplicate.
const SETTLE_MS = 2_000;

const sorted = (a: string[]) => [...a].sort();
const enc = encodeURIComponent;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Printable ASCII for assertion messages: a raw U+2028 or control character would break the TAP stream. */
const esc = (v: unknown, max = 200) => (JSON.stringify(v) ?? String(v)).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).slice(0, max);

const setup = (srv: TestServer) => workspaceWithKeys(srv, { all: ['*'], write: ['events:write'], read: ['events:read'], del: ['people:delete'] }, 'ClickHouse test');

function track(srv: TestServer, token: string, body: unknown): Promise<Res> {
  return srv.req('POST', '/track', { token, body });
}
function trackBatch(srv: TestServer, token: string, body: unknown): Promise<Res> {
  return srv.req('POST', '/track/batch', { token, body });
}
function personEvents(srv: TestServer, token: string, userId: string): Promise<Res> {
  return srv.req('GET', `/people/${enc(userId)}/events?limit=500`, { token });
}

/** Tracks and insists on a 201; returns data. */
async function tracked(t: Test, srv: TestServer, token: string, body: Record<string, unknown>) {
  const r = await track(srv, token, body);
  t.equal(r.status, 201, `track 201: ${r.text.slice(0, 300)}`);
  return r.body?.data as { event_id: string; person_id: string; event: string; timestamp: string; person_created?: boolean };
}

/** Tracks a batch and insists on a 201; returns the per-entry results. */
async function trackedBatch(t: Test, srv: TestServer, token: string, events: Record<string, unknown>[]) {
  const r = await trackBatch(srv, token, { events });
  t.equal(r.status, 201, `batch 201: ${esc(r.text, 300)}`);
  return (r.body?.results ?? []) as { index: number; event_id: string; person_id: string; event: string }[];
}

/** Polls the person's events until `want` ids are all there (or gives up); returns the last read. */
async function readUntil(srv: TestServer, token: string, userId: string, want: string[]): Promise<Res> {
  let last!: Res;
  await eventually(async () => {
    last = await personEvents(srv, token, userId);
    if (last.status !== 200) return false;
    const got = new Set((last.body.events as { id: string }[]).map((e) => e.id));
    return want.every((id) => got.has(id));
  }, LAG_MS);
  return last;
}

// ---------------------------------------------------------------------------------------
// ClickHouse over its HTTP interface (the URL's path names the database).

/** Runs `sql` (without FORMAT) on the ClickHouse of `url`; returns the JSON rows. */
async function chQuery<T = Record<string, unknown>>(url: string, sql: string): Promise<T[]> {
  const u = new URL(url);
  const q = new URLSearchParams({ database: u.pathname.slice(1) || 'default' });
  if (u.username) q.set('user', decodeURIComponent(u.username));
  if (u.password) q.set('password', decodeURIComponent(u.password));
  const r = await fetch(`${u.protocol}//${u.host}/?${q}`, { method: 'POST', body: `${sql} FORMAT JSON` });
  const text = await r.text();
  if (!r.ok) throw new Error(`ClickHouse ${r.status} for ${sql.slice(0, 200)}: ${text.slice(0, 500)}`);
  return JSON.parse(text).data as T[];
}

interface ChRow {
  id: string;
  workspace_id: string;
  person_id: string;
  external_id: string;
  type: string;
  parameters: string;
  created_ms: number;
  created_s: number;
}

function wsFilter(workspaceId: string): string {
  if (!UUID.test(workspaceId)) throw new Error(`not a UUID: ${workspaceId}`);
  return `workspace_id = toUUID('${workspaceId}')`;
}

/** Every analytics row of one workspace (64-bit integers arrive as strings). */
async function chRows(url: string, workspaceId: string): Promise<ChRow[]> {
  const rows = await chQuery<Record<string, string | number>>(
    url,
    // Aliases differ from the column names: 18.16 would otherwise resolve the WHERE to the String alias.
    `SELECT toString(id) AS id_s, toString(workspace_id) AS workspace_s, toString(person_id) AS person_s, external_id, type, parameters,
       created_ms, toUnixTimestamp(created_at) AS created_s
     FROM analytics_events WHERE ${wsFilter(workspaceId)} ORDER BY created_ms, id`,
  );
  return rows.map((r) => ({
    id: String(r.id_s),
    workspace_id: String(r.workspace_s),
    person_id: String(r.person_s),
    external_id: String(r.external_id),
    type: String(r.type),
    parameters: String(r.parameters),
    created_ms: Number(r.created_ms),
    created_s: Number(r.created_s),
  }));
}

async function chCounts(url: string, workspaceId: string): Promise<{ n: number; unique: number }> {
  const [row] = await chQuery<{ n: string; unique: string }>(url, `SELECT count() AS n, uniqExact(id) AS unique FROM analytics_events WHERE ${wsFilter(workspaceId)}`);
  return { n: Number(row!.n), unique: Number(row!.unique) };
}

/** Waits until the workspace has at least `n` rows (or gives up), then watches a little longer for extras. */
async function chSettled(url: string, workspaceId: string, n: number): Promise<ChRow[]> {
  await eventually(async () => (await chCounts(url, workspaceId).catch(() => ({ n: -1 }))).n >= n, LAG_MS);
  await sleep(SETTLE_MS);
  return chRows(url, workspaceId);
}

interface Expected {
  person_id: string;
  external_id: string;
  type: string;
  parameters: unknown;
  created_ms: number;
}

/** Exactly the expected events, once each, with the tracked fields. */
function checkRows(t: Test, rows: ChRow[], workspaceId: string, want: Map<string, Expected>): void {
  t.equal(rows.length, want.size, `${want.size} rows for the workspace, no more, no fewer`);
  t.equal(new Set(rows.map((r) => r.id)).size, rows.length, 'no id twice');
  t.same(sorted(rows.map((r) => r.id)), sorted([...want.keys()]), 'exactly the acknowledged event ids');
  for (const row of rows) {
    const w = want.get(row.id);
    if (!w) continue;
    const parameters = (() => {
      try {
        return JSON.parse(row.parameters) as unknown;
      } catch {
        return `unparsable: ${row.parameters}`;
      }
    })();
    t.same(
      { workspace_id: row.workspace_id, person_id: row.person_id, external_id: row.external_id, type: row.type, parameters, created_ms: row.created_ms },
      { workspace_id: workspaceId, person_id: w.person_id, external_id: w.external_id, type: w.type, parameters: w.parameters, created_ms: w.created_ms },
      `row ${row.id} (${esc(w.type, 60)})`,
    );
    t.equal(row.created_s, Math.min(Math.max(Math.floor(w.created_ms / 1000), 0), 4294967295), `created_at is created_ms in whole seconds (${row.id})`);
  }
}

if (!CLICKHOUSE_URL || !process.env.NATS_URL) {
  t.plan(0, 'needs CLICKHOUSE_URL and NATS_URL (the ClickHouse sink consumes the JetStream Log)');
} else {
  const CH = CLICKHOUSE_URL;
  const s: TestServer = await startServer(NO_LIMITS);
  t.teardown(() => s.stop());

  t.test('health reports the ClickHouse analytics store', async (t) => {
    const h = await s.req('GET', '/healthz');
    t.equal(h.status, 200, h.text);
    t.equal(h.body?.components?.analytics, 'ok');
    t.equal(h.body?.components?.analytics_kind, 'clickhouse');
    t.equal(h.body?.components?.log_kind, 'jetstream');
  });

  t.test('track and track/batch: each event lands in ClickHouse exactly once with the tracked fields', async (t) => {
    const k = await setup(s);
    const [u1, u2, u3] = [uniqueUser('ch-one'), uniqueUser('ch-two'), uniqueUser('ch-three')];
    const want = new Map<string, Expected>();

    const p1 = { plan: 'pro', n: 3, ratio: 0.25, ok: true, none: null, nested: { a: [1, 2, { b: 'c' }], empty: {} } };
    const ts1 = '2023-03-04T05:06:07.089Z';
    const e1 = await tracked(t, s, k.write, { event: 'ch_signed_up', external_id: u1, parameters: p1, timestamp: ts1 });
    want.set(e1.event_id, { person_id: e1.person_id, external_id: u1, type: 'ch_signed_up', parameters: p1, created_ms: Date.parse(ts1) });

    // No timestamp: created_ms is the server's time, echoed as data.timestamp. No parameters: {}.
    const e2 = await tracked(t, s, k.write, { event: 'ch_no_timestamp', userId: u2 });
    t.match(e2.timestamp, /Z$/);
    want.set(e2.event_id, { person_id: e2.person_id, external_id: u2, type: 'ch_no_timestamp', parameters: {}, created_ms: Date.parse(e2.timestamp) });

    // `properties` is the alias of parameters; a timestamp with an offset is the same instant.
    const ts3 = '2021-12-31T23:59:59.999+02:00';
    const e3 = await tracked(t, s, k.write, { event: 'ch_properties', user_id: u3, properties: { via: 'properties' }, timestamp: ts3 });
    want.set(e3.event_id, { person_id: e3.person_id, external_id: u3, type: 'ch_properties', parameters: { via: 'properties' }, created_ms: Date.parse(ts3) });

    // A batch across people and months (partitions), one entry per identifier alias.
    const batch = [
      { event: 'ch_batch', external_id: u1, parameters: { i: 0 }, timestamp: '2022-01-15T10:00:00.001Z' },
      { event: 'ch_batch', userId: u2, parameters: { i: 1 }, timestamp: '2022-02-15T10:00:00.002Z' },
      { event: 'ch_batch', user_id: u3, parameters: { i: 2 }, timestamp: '2022-03-15T10:00:00.003Z' },
      { event: 'ch_batch_other', external_id: u1, parameters: { i: 3, s: 'x' }, timestamp: '2024-02-29T23:59:59.999Z' },
      { event: 'ch_batch_other', external_id: u1, parameters: { i: 4 }, timestamp: '2024-03-01T00:00:00.000Z' },
    ];
    const results = await trackedBatch(t, s, k.write, batch);
    t.equal(results.length, batch.length);
    const personOf = new Map([[u1, e1.person_id], [u2, e2.person_id], [u3, e3.person_id]]);
    results.forEach((r, i) => {
      const b = batch[i]! as Record<string, unknown>;
      const ext = (b.external_id ?? b.userId ?? b.user_id) as string;
      t.equal(r.person_id, personOf.get(ext), `batch entry ${i} names the same person as the single track`);
      want.set(r.event_id, { person_id: personOf.get(ext)!, external_id: ext, type: b.event as string, parameters: b.parameters, created_ms: Date.parse(b.timestamp as string) });
    });
    t.equal(want.size, 8, '8 distinct event ids');

    const rows = await chSettled(CH, k.ws.id, want.size);
    checkRows(t, rows, k.ws.id, want);
    const c = await chCounts(CH, k.ws.id);
    t.same(c, { n: 8, unique: 8 }, 'count() = uniqExact(id) = 8');
  });

  t.test('timestamps at the ends of DateTime’s range: created_ms exact, created_at its second; outside it 400', async (t) => {
    const k = await setup(s);
    const user = uniqueUser('ch-range');
    // Herald accepts only instants DateTime holds (README, Request bodies).
    for (const ts of ['0001-01-01T00:00:00.000Z', '1969-12-31T23:59:59.500Z', '2106-02-07T06:28:16.000Z', '9999-12-31T23:59:59.999Z']) {
      const r = await track(s, k.write, { event: 'ch_range', external_id: user, timestamp: ts });
      t.equal(r.status, 400, `${ts} refused: ${r.text.slice(0, 200)}`);
    }
    const stamps = ['1970-01-01T00:00:00.000Z', '1970-01-01T00:00:00.999Z', '2106-02-07T06:28:15.000Z', '2106-02-07T06:28:15.999Z'];
    const want = new Map<string, Expected>();
    for (const ts of stamps) {
      const e = await tracked(t, s, k.write, { event: 'ch_range', external_id: user, parameters: { ts }, timestamp: ts });
      t.equal(e.timestamp, ts, `echoed ${ts}`);
      want.set(e.event_id, { person_id: e.person_id, external_id: user, type: 'ch_range', parameters: { ts }, created_ms: Date.parse(ts) });
    }
    // The same instants in one batch: one insert spanning both ends.
    const results = await trackedBatch(t, s, k.write, stamps.map((ts) => ({ event: 'ch_range_batch', external_id: user, parameters: { ts }, timestamp: ts })));
    results.forEach((r, i) => want.set(r.event_id, { person_id: r.person_id, external_id: user, type: 'ch_range_batch', parameters: { ts: stamps[i] }, created_ms: Date.parse(stamps[i]!) }));
    const rows = await chSettled(CH, k.ws.id, want.size);
    checkRows(t, rows, k.ws.id, want);
  });

  t.test('hostile event names, ids and parameters are stored verbatim; the table survives', async (t) => {
    const k = await setup(s);
    const hostile = [
      "'); DROP TABLE analytics_events; --",
      "x' OR '1'='1",
      '"double" \'single\' `back`',
      'back\\slash \\\' \\" \\\\ \\N \\0 end\\',
      'line1\nline2\r\nline3\ttab\u0001\u001f\u007f',
      'unicode é ü ß 中文 العربية 🎉👩‍👩‍👧 \u202erlt\u202c \u200bzero-width \u2028sep',
      '{"looks":"like json"}',
      '%s %d ${x} {{t}} ? :name $1 @p',
      ' leading and trailing spaces ',
      "'; SYSTEM SHUTDOWN; --",
    ];
    const users = [uniqueUser("ch-o'brien \"q\" \\ 🎉 ); DROP TABLE analytics_events; --"), uniqueUser('ch-plain')];
    const want = new Map<string, Expected>();
    const paramsFor = (v: string, i: number) => ({ value: v, [v.replace(/[^\x20-\x7e]/g, '_')]: i, list: [v, '', null], nested: { deeper: { v } } });

    const singles = await Promise.all(
      hostile.map((h, i) => track(s, k.write, { event: h, external_id: users[i % 2], parameters: paramsFor(h, i), timestamp: new Date(Date.UTC(2023, 0, 1, 0, 0, i, 7)).toISOString() })),
    );
    singles.forEach((r, i) => {
      t.equal(r.status, 201, `track ${esc(hostile[i])}: ${esc(r.text)}`);
      t.equal(r.body?.data?.event, hostile[i], 'echoed verbatim');
      want.set(r.body.data.event_id, { person_id: r.body.data.person_id, external_id: users[i % 2]!, type: hostile[i]!, parameters: paramsFor(hostile[i]!, i), created_ms: Date.UTC(2023, 0, 1, 0, 0, i, 7) });
    });
    const batch = hostile.map((h, i) => ({ event: `batch ${h}`, external_id: users[(i + 1) % 2], parameters: paramsFor(h, 100 + i), timestamp: new Date(Date.UTC(2023, 1, 1, 0, 0, i, 9)).toISOString() }));
    const results = await trackedBatch(t, s, k.write, batch);
    results.forEach((r, i) => {
      want.set(r.event_id, { person_id: r.person_id, external_id: users[(i + 1) % 2]!, type: batch[i]!.event, parameters: batch[i]!.parameters, created_ms: Date.UTC(2023, 1, 1, 0, 0, i, 9) });
    });
    t.equal(want.size, 2 * hostile.length);

    const rows = await chSettled(CH, k.ws.id, want.size);
    checkRows(t, rows, k.ws.id, want);

    const [exists] = await chQuery(CH, 'EXISTS TABLE analytics_events');
    t.equal(Number(Object.values(exists ?? {})[0]), 1, 'analytics_events still exists');
    const [total] = await chQuery<{ n: string }>(CH, 'SELECT count() AS n FROM analytics_events');
    t.ok(Number(total!.n) >= want.size, 'the table still answers and holds at least these rows');

    // The store copy agrees (reads go through PostgreSQL, not ClickHouse).
    for (const u of users) {
      const mine = [...want].filter(([, w]) => w.external_id === u);
      const r = await readUntil(s, k.read, u, mine.map(([id]) => id));
      t.equal(r.status, 200, esc(r.text));
      const got = new Map((r.body.events as { id: string; type: string; parameters: unknown }[]).map((e) => [e.id, { type: e.type, parameters: e.parameters }]));
      t.same(
        Object.fromEntries(mine.map(([id]) => [id, got.get(id)])),
        Object.fromEntries(mine.map(([id, w]) => [id, { type: w.type, parameters: w.parameters }])),
        `the event read of ${esc(u, 60)} agrees`,
      );
    }
  });

  t.test('person delete: events leave the reads; their ClickHouse copies stay', async (t) => {
    const k = await setup(s);
    const gone = uniqueUser('ch-gone');
    const kept = uniqueUser('ch-kept');
    const event = uniqueUser('ch_del_evt');
    const want = new Map<string, Expected>();
    const g: Awaited<ReturnType<typeof tracked>>[] = [];
    for (let i = 0; i < 3; i++) g.push(await tracked(t, s, k.write, { event, external_id: gone, parameters: { i }, timestamp: new Date(Date.UTC(2023, 5, 1, 0, 0, i)).toISOString() }));
    const b = await trackedBatch(t, s, k.write, [{ event, external_id: gone, parameters: { i: 3 } }, { event, external_id: kept, parameters: { i: 4 } }]);
    const kt = await tracked(t, s, k.write, { event, external_id: kept, parameters: { i: 5 } });
    g.forEach((e, i) => want.set(e.event_id, { person_id: e.person_id, external_id: gone, type: event, parameters: { i }, created_ms: Date.parse(e.timestamp) }));
    const goneIds = [...g.map((e) => e.event_id), b[0]!.event_id];
    const keptIds = [b[1]!.event_id, kt.event_id];

    await readUntil(s, k.read, gone, goneIds);
    await readUntil(s, k.read, kept, keptIds);
    await eventually(async () => (await chCounts(CH, k.ws.id)).n >= 6, LAG_MS);

    const del = await s.req('DELETE', `/people/${enc(gone)}`, { token: k.del });
    t.equal(del.status, 200, del.text);
    keyError(t, await personEvents(s, k.read, gone), 404, 'PERSON_NOT_FOUND');
    const sr = await s.req('GET', `/events/search?event=${enc(event)}&limit=500`, { token: k.read });
    t.equal(sr.status, 200, sr.text.slice(0, 200));
    t.same(sorted((sr.body.events as { id: string }[]).map((e) => e.id)), sorted(keptIds), 'search: only the kept person’s events');

    // A track after the delete makes a new person whose history starts empty.
    const again = await tracked(t, s, k.write, { event, external_id: gone, parameters: { i: 6 } });
    t.equal(again.person_created, true, 'a new person');
    t.not(again.person_id, g[0]!.person_id);
    const r = await readUntil(s, k.read, gone, [again.event_id]);
    t.same(r.body.events.map((e: { id: string }) => e.id), [again.event_id], 'the new person reads only its own event');

    const rows = await chSettled(CH, k.ws.id, 7);
    t.equal(rows.length, 7, 'ClickHouse keeps all 7 events: 4 of the deleted person, 2 kept, 1 after');
    t.equal(new Set(rows.map((x) => x.id)).size, 7, 'no id twice');
    t.same(sorted(rows.map((x) => x.id)), sorted([...goneIds, ...keptIds, again.event_id]));
    const old = rows.filter((x) => goneIds.includes(x.id));
    t.ok(old.length === 4 && old.every((x) => x.person_id === g[0]!.person_id && x.external_id === gone), 'the deleted person’s rows keep their person_id and external_id');
    for (const [id, w] of want) {
      const row = rows.find((x) => x.id === id);
      t.same(row && { type: row.type, parameters: JSON.parse(row.parameters), created_ms: row.created_ms }, { type: w.type, parameters: w.parameters, created_ms: w.created_ms });
    }
  });

  t.test('a batch written again writes only what the table does not hold, across existence queries', async (t) => {
    const store = await clickHouseAnalytics(CH);
    t.teardown(() => store.close());
    const ws = randomUUID();
    const person = randomUUID();
    const record = (i: number): EventRecord => ({ id: randomUUID(), workspace_id: ws, person_id: person, external_id: 'ch-rewrite', type: 'ch_rewrite', parameters: { i }, created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 3600)).toISOString() });
    // More than one existence query's 2,000 ids.
    const first = Array.from({ length: 2500 }, (_, i) => record(i));
    t.equal(await store.write(first), 2500, 'all new: all written');
    t.equal(await store.write(first), 0, 'the same batch again: nothing written');
    const more = Array.from({ length: 100 }, (_, i) => record(i));
    t.equal(await store.write([...first.slice(1000), ...more, more[0]!]), 100, 'held ones skipped, new ones written once');
    t.same(await chCounts(CH, ws), { n: 2600, unique: 2600 }, 'count() = uniqExact(id)');
  });

  t.test('restart on the same data dir and stream writes no row twice', async (t) => {
    const servers = await serversOnOneDir(t, NO_LIMITS, 'ch-restart');
    const first = servers.first;
    const k = await setup(first);
    const users = Array.from({ length: 4 }, () => uniqueUser('ch-rs'));
    const acked: string[] = [];
    const burst = async (srv: TestServer, label: string) => {
      const rs = await Promise.all(users.map((u, i) => track(srv, k.write, { event: label, external_id: u, parameters: { i } })));
      const bs = await Promise.all(users.map((u) => trackBatch(srv, k.write, { events: Array.from({ length: 10 }, (_, i) => ({ event: label, external_id: u, parameters: { b: i } })) })));
      t.same(rs.map((r) => r.status), Array(users.length).fill(201), `${label}: single tracks 201`);
      t.same(bs.map((r) => r.status), Array(users.length).fill(201), `${label}: batches 201`);
      acked.push(...rs.map((r) => r.body?.data?.event_id as string), ...bs.flatMap((r) => (r.body?.results ?? []).map((x: { event_id: string }) => x.event_id)));
    };

    // Phase 1 reaches ClickHouse before the restart; phase 2 is tracked right before SIGTERM,
    // so part of it may be redelivered to the restarted sink.
    await burst(first, 'ch_rs_before');
    await chSettled(CH, k.ws.id, acked.length);
    await burst(first, 'ch_rs_at_stop');
    t.equal(await first.stop('SIGTERM'), 0, 'clean exit on SIGTERM');

    const second = await servers.again();
    await burst(second, 'ch_rs_after');
    t.equal(acked.length, 3 * 4 * 11);
    t.equal(new Set(acked).size, acked.length, 'distinct acknowledged ids');

    const rows = await chSettled(CH, k.ws.id, acked.length);
    t.equal(rows.length, acked.length, `exactly ${acked.length} rows`);
    t.same(sorted(rows.map((r) => r.id)), sorted(acked), 'every acknowledged event once');
    t.same(await chCounts(CH, k.ws.id), { n: acked.length, unique: acked.length }, 'count() = uniqExact(id)');

    // A second restart with nothing new in between changes nothing either.
    t.equal(await second.stop('SIGTERM'), 0);
    await servers.again();
    await sleep(SETTLE_MS);
    t.same(await chCounts(CH, k.ws.id), { n: acked.length, unique: acked.length }, 'still no duplicates after another restart');
  });
}

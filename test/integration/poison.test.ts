// Poison on the Log, and appends the Log refuses, through a real server in every mode:
//  - Records planted straight on the server's Log, past every check of the API (messages on
//    `<prefix>.events` with NATS_URL; on the store's Log, which has no queue, rows of the
//    `log_entries` queue of earlier versions, applied by migration 12 at upgrade): a timestamp
//    of year 0, U+0000 and an unpaired surrogate in a value, a record that is not an object, an
//    entry or message that is not a list (or not JSON). The refused records are set aside in
//    `dead_letters` (counted by /healthz) and taken off the Log; every other event, planted
//    beside them or tracked by another workspace before and after, becomes readable (and
//    reaches ClickHouse, with CLICKHOUSE_URL).
//  - The group commit: an append that cannot be serialized, or that PostgreSQL refuses, or
//    that is larger than a NATS message, fails alone (400 / 413); the appends written in the
//    same group are acknowledged and readable.
import t, { type Test } from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { startServer, storeUrl, eventually, uniqueUser, workspaceWithKeys } from '../helpers/server.js';
import { NO_LIMITS, badRequest, keyError } from '../helpers/assert.js';
import { storeLog } from '../../src/eventlog/event-log.js';
import { openPostgres } from '../../src/store/pg.js';
import { migrate } from '../../src/store/migrations.js';
import { DomainError } from '../../src/domain/errors.js';
import type { EventRecord } from '../../src/domain/events.js';
import { setLogLevel } from '../../src/logger.js';

setLogLevel('error'); // the refused appends below are logged as warnings
t.setTimeout(300_000);
const READ_LAG_MS = 60_000;
const enc = encodeURIComponent;

const srv = await startServer(NO_LIMITS);
t.teardown(() => srv.stop());
const onJetStream = (await srv.req('GET', '/healthz')).body?.components?.log_kind === 'jetstream';
const clickhouse = onJetStream ? process.env.CLICKHOUSE_URL : undefined;
const sql = new pg.Client({ connectionString: storeUrl(srv) });
await sql.connect();
t.teardown(() => sql.end());

const setup = () => workspaceWithKeys(srv, { write: ['events:write'], read: ['events:read'] }, 'Poison test');
type Keys = Awaited<ReturnType<typeof setup>>;

/** Tracks one event for each user at once; returns user → acknowledged ids. */
async function trackEach(t: Test, k: Keys, users: string[], event: string, acked: Map<string, string[]>): Promise<void> {
  const rs = await Promise.all(users.map((u) => srv.req('POST', '/track', { token: k.write, body: { event, external_id: u } })));
  t.same(rs.map((r) => r.status), users.map(() => 201), `${event}: every track 201 ${rs.filter((r) => r.status !== 201).map((r) => r.text.slice(0, 200)).join(' | ')}`);
  rs.forEach((r, i) => r.status === 201 && acked.set(users[i]!, [...(acked.get(users[i]!) ?? []), r.body.data.event_id]));
}

/** Waits until every id of `want` (user → ids) is readable; returns what is missing. */
async function unreadable(k: Keys, want: Map<string, string[]>): Promise<string[]> {
  const missing: string[] = [];
  const until = Date.now() + READ_LAG_MS;
  for (const [user, ids] of want) {
    for (;;) {
      const r = await srv.req('GET', `/people/${enc(user)}/events?limit=500`, { token: k.read });
      const got = new Set(r.status === 200 ? (r.body.events as { id: string }[]).map((e) => e.id) : []);
      const lacking = ids.filter((id) => !got.has(id));
      if (lacking.length === 0) break;
      if (Date.now() > until) {
        missing.push(...lacking.map((id) => `${user}/${id}`));
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return missing;
}

async function readIds(k: Keys, user: string): Promise<string[]> {
  const r = await srv.req('GET', `/people/${enc(user)}/events?limit=500`, { token: k.read });
  return r.status === 200 ? (r.body.events as { id: string }[]).map((e) => e.id) : [];
}

const record = (ws: string, person: string, user: string, over: Record<string, unknown> = {}) => ({
  id: randomUUID(),
  workspace_id: ws,
  person_id: person,
  external_id: user,
  type: 'planted',
  parameters: { planted: true },
  created_at: new Date().toISOString(),
  ...over,
});

async function clickHouseIds(url: string, workspaceId: string): Promise<Set<string>> {
  const u = new URL(url);
  const q = new URLSearchParams({ database: u.pathname.slice(1) || 'default' });
  if (u.username) q.set('user', decodeURIComponent(u.username));
  if (u.password) q.set('password', decodeURIComponent(u.password));
  if (!/^[0-9a-f-]{36}$/.test(workspaceId)) throw new Error('not a UUID');
  const r = await fetch(`${u.protocol}//${u.host}/?${q}`, { method: 'POST', body: `SELECT toString(id) AS id FROM analytics_events WHERE workspace_id = toUUID('${workspaceId}') FORMAT JSON` });
  if (!r.ok) return new Set();
  return new Set(((await r.json()) as { data: { id: string }[] }).data.map((x) => x.id));
}

interface Letter {
  sink: string;
  ref: string;
  workspace_id: string | null;
  error: string;
}

// ---------------------------------------------------------------------------------------

t.test('poison planted on the Log is set aside in dead_letters; every other event flows', async (t) => {
  const a = await setup();
  const b = await setup();
  const victim = uniqueUser('victim');
  const first = await srv.req('POST', '/track', { token: a.write, body: { event: 'real', external_id: victim } });
  t.equal(first.status, 201, first.text.slice(0, 200));
  const person = first.body.data.person_id as string;
  const bystanders = Array.from({ length: 4 }, (_, i) => uniqueUser(`bystander-${i}`));
  const bAcked = new Map<string, string[]>();
  await trackEach(t, b, bystanders, 'before_poison', bAcked);
  const deadBefore = (await srv.req('GET', '/healthz')).body.components.dead_letters as number;

  // Good records planted beside the poison: they must flow like any other.
  const good = [record(a.ws.id, person, victim), record(a.ws.id, person, victim), record(a.ws.id, person, victim)];
  const year0 = record(a.ws.id, person, victim, { created_at: '0000-01-01T00:00:00Z' });
  const badId = record(a.ws.id, person, victim, { id: 'not-a-uuid' });
  const nul = record(a.ws.id, person, victim, { parameters: { k: 'a\u0000b' } });
  const surrogate = record(a.ws.id, person, victim, { type: 'p\ud800' });
  /** `<sink> <ref>` → [sink, workspace, error pattern] */
  const expected = new Map<string, [string, string | null, RegExp]>();

  let offTheLog: () => Promise<boolean>;
  if (!onJetStream) {
    // The store's Log: a queue as an earlier version left it (stopped before its sink caught
    // up), then migration 12 run again, as an upgrade runs it.
    await sql.query('CREATE TABLE log_entries (seq bigserial PRIMARY KEY, topic text NOT NULL, payload jsonb NOT NULL, appended_at timestamptz NOT NULL DEFAULT now())');
    const entries: unknown[] = [[year0], [good[0], 42, badId, good[1]], { not: 'an array' }, [good[2]]];
    const seqs: number[] = [];
    for (const e of entries) seqs.push(Number((await sql.query(`INSERT INTO log_entries (topic, payload) VALUES ('events', $1::jsonb) RETURNING seq`, [JSON.stringify(e)])).rows[0].seq));
    await sql.query('DELETE FROM schema_migrations WHERE id = 12');
    const db = openPostgres(storeUrl(srv), 1);
    t.equal(await migrate(db), 1, 'migration 12 ran');
    await db.close();
    expected.set(`store-log log_entries:${seqs[0]}:0`, ['store-log', a.ws.id, /out of range.*SQLSTATE 22008/]);
    expected.set(`store-log log_entries:${seqs[1]}:1`, ['store-log', null, /array of objects.*SQLSTATE 22023/]);
    expected.set(`store-log log_entries:${seqs[1]}:2`, ['store-log', a.ws.id, /uuid.*SQLSTATE 22P02/]);
    expected.set(`store-log log_entries:${seqs[2]}`, ['store-log', null, /not an array/]);
    offTheLog = async () => (await sql.query(`SELECT to_regclass('log_entries') AS t`)).rows[0].t === null;
  } else {
    // JetStream: messages on the server's own subject, as an actor would publish them.
    const nc = await connect({ servers: process.env.NATS_URL });
    t.teardown(() => nc.close());
    const js = jetstream(nc);
    const stream = `${srv.natsPrefix}-events`;
    const messages = [JSON.stringify([year0]), JSON.stringify([good[0], 42, nul, surrogate, good[1]]), 'not json {', JSON.stringify({ not: 'an array' }), JSON.stringify([good[2]])];
    const seqs: number[] = [];
    for (const m of messages) seqs.push((await js.publish(`${srv.natsPrefix}.events`, m)).seq);
    const at = (m: number, i?: number) => `${stream}:${seqs[m]}${i === undefined ? '' : `:${i}`}`;
    expected.set(`jetstream-store ${at(0, 0)}`, ['jetstream-store', a.ws.id, /out of range.*SQLSTATE 22008/]);
    expected.set(`jetstream-store ${at(1, 1)}`, ['jetstream-store', null, /array of objects.*SQLSTATE 22023/]);
    expected.set(`jetstream-store ${at(1, 2)}`, ['jetstream-store', a.ws.id, /Unicode.*SQLSTATE 22P05/]);
    expected.set(`jetstream-store ${at(1, 3)}`, ['jetstream-store', a.ws.id, /SQLSTATE 22P02/]);
    expected.set(`jetstream-store ${at(2)}`, ['jetstream-store', null, /JSON/]);
    expected.set(`jetstream-store ${at(3)}`, ['jetstream-store', null, /not an array/]);
    if (clickhouse) {
      // ClickHouse keeps year 0 (clamped) and U+0000; it refuses the rest.
      expected.set(`clickhouse ${at(1, 1)}`, ['clickhouse', null, /not an object/]);
      expected.set(`clickhouse ${at(1, 3)}`, ['clickhouse', a.ws.id, /^Code: 25\b/]);
      expected.set(`clickhouse ${at(2)}`, ['clickhouse', null, /JSON/]);
      expected.set(`clickhouse ${at(3)}`, ['clickhouse', null, /not an array/]);
    }
    const jsm = await jetstreamManager(nc);
    const consumers = [`${srv.natsPrefix}-store-sink`, ...(clickhouse ? [`${srv.natsPrefix}-analytics-sink`] : [])];
    offTheLog = async () => {
      for (const c of consumers) {
        const info = await jsm.consumers.info(stream, c);
        if (info.num_pending + info.num_ack_pending > 0) return false;
      }
      return true;
    };
  }

  const bystandersAfter = Array.from({ length: 4 }, (_, i) => uniqueUser(`bystander-after-${i}`));
  await trackEach(t, b, [...bystanders, ...bystandersAfter], 'after_poison', bAcked);

  t.same(await unreadable(b, bAcked), [], "another workspace's events, tracked before and after the poison, all readable");
  t.same(await unreadable(a, new Map([[victim, [first.body.data.event_id, ...good.map((g) => g.id)]]])), [], 'the good records planted beside the poison are readable');
  const victimIds = await readIds(a, victim);
  t.same([year0, nul, surrogate].filter((p) => victimIds.includes(p.id)).map((p) => p.id), [], 'no refused record is readable');

  const letters = await eventually(async () => {
    const rows = (await sql.query<Letter>(`SELECT sink, ref, workspace_id::text, error FROM dead_letters WHERE sink || ' ' || ref = ANY($1)`, [[...expected.keys()]])).rows;
    return rows.length >= expected.size ? rows : undefined;
  }, READ_LAG_MS);
  t.ok(letters, `every refused record is in dead_letters (${expected.size})`);
  const byKey = new Map((letters ?? []).map((l) => [`${l.sink} ${l.ref}`, l]));
  for (const [key, [sink, ws, error]] of expected) {
    const l = byKey.get(key);
    t.ok(l, `dead letter ${key}`);
    if (!l) continue;
    t.equal(l.sink, sink, `${key}: sink`);
    t.equal(l.workspace_id, ws, `${key}: workspace`);
    t.match(l.error, error, `${key}: ${l.error.slice(0, 160)}`);
  }
  t.equal(byKey.size, expected.size, 'each recorded once');
  t.ok(await eventually(offTheLog, 20_000), 'the poison is off the Log (nothing pending for any sink)');

  const h = await srv.req('GET', '/healthz');
  t.equal(h.status, 200, 'Herald stays healthy');
  t.equal(h.body.status, 'ok');
  t.ok(h.body.components.dead_letters >= deadBefore + expected.size, `/healthz counts them: dead_letters ${deadBefore} → ${h.body.components.dead_letters}`);

  if (clickhouse) {
    const want = [...[...bAcked.values()].flat().map((id) => [b.ws.id, id]), ...good.map((g) => [a.ws.id, g.id])];
    const missing = await eventually(async () => {
      const have = new Map([[a.ws.id, await clickHouseIds(clickhouse, a.ws.id)], [b.ws.id, await clickHouseIds(clickhouse, b.ws.id)]]);
      const m = want.filter(([ws, id]) => !have.get(ws!)!.has(id!));
      return m.length === 0 ? m : undefined;
    }, READ_LAG_MS);
    t.same(missing, [], 'ClickHouse has every other event');
  }

  // The sinks keep going: a later event is readable.
  const later = uniqueUser('later');
  const again = new Map<string, string[]>();
  await trackEach(t, b, [later], 'later', again);
  t.same(await unreadable(b, again), [], 'a later event is readable');
});

t.test('group commit: a track that cannot be serialized fails alone; the tracks committed with it are acknowledged', async (t) => {
  const a = await setup();
  const b = await setup();
  // 20,000 levels: within the 1 MB body, deeper than JSON.stringify can go.
  const deep = `${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`;
  const users = Array.from({ length: 20 }, (_, i) => uniqueUser(`beside-deep-${i}`));
  const [bad, ...others] = await Promise.all([
    srv.req('POST', '/track', { token: a.write, raw: `{"event":"deep","external_id":"${uniqueUser('deep')}","parameters":${deep}}`, headers: { 'content-type': 'application/json' } }),
    ...users.map((u) => srv.req('POST', '/track', { token: b.write, body: { event: 'beside_deep', external_id: u } })),
  ]);
  badRequest(t, bad);
  t.same(others.map((r) => r.status), users.map(() => 201), 'every track of the other workspace at the same moment: 201');
  const acked = new Map(users.map((u, i) => [u, [others[i]!.body?.data?.event_id as string]]));
  t.same(await unreadable(b, acked), [], 'and readable');
});

t.test('group commit (store Log): a record PostgreSQL refuses fails its append alone; the others of the group are written', async (t) => {
  const a = await setup();
  const user = uniqueUser('direct');
  const first = await srv.req('POST', '/track', { token: a.write, body: { event: 'real', external_id: user } });
  const person = first.body.data.person_id as string;
  // The actor's own Log over the server's database, driven directly: nothing checks these records.
  const db = openPostgres(storeUrl(srv), 2);
  const log = storeLog(db);
  t.teardown(async () => {
    await log.close();
    await db.close();
  });
  const rec = (over: Record<string, unknown> = {}) => record(a.ws.id, person, user, over) as EventRecord;
  const goods = Array.from({ length: 30 }, () => [rec(), rec()]);
  const refused = [rec(), rec({ parameters: { k: 'x\u0000y' } })];
  // All in one tick: one group, one INSERT, which PostgreSQL refuses (U+0000 in jsonb).
  const outcomes = await Promise.allSettled([...goods.slice(0, 15), refused, ...goods.slice(15)].map((g) => log.appendEvents(g)));
  const status = outcomes.map((o) => (o.status === 'fulfilled' ? 'ok' : o.reason instanceof DomainError ? o.reason.code : String(o.reason)));
  t.same(status, [...Array(15).fill('ok'), 'VALIDATION_ERROR', ...Array(15).fill('ok')], 'only the append holding U+0000 fails (400 VALIDATION_ERROR); its 30 neighbours are durable');
  // Written where they are read: readable at once.
  const ids = await readIds(a, user);
  t.same(goods.flat().filter((r) => !ids.includes(r.id)), [], 'the 60 acknowledged records are readable');
  t.same(refused.filter((r) => ids.includes(r.id)), [], 'nothing of the refused append was written (its other record neither)');
});

t.test('group commit (JetStream): a batch larger than a NATS message answers 413 alone; the tracks beside it are acknowledged', { skip: !onJetStream && 'needs NATS_URL' }, async (t) => {
  const a = await setup();
  const b = await setup();
  // ~1,040,000 bytes of body (under the 1 MiB limit); its 100 records, with their ids and times, outgrow NATS's 1 MiB max_payload.
  const fill = 'x'.repeat(10_300);
  const bigUser = uniqueUser('big');
  const big = { events: Array.from({ length: 100 }, (_, i) => ({ event: 'big', external_id: bigUser, parameters: { i, fill } })) };
  t.ok(JSON.stringify(big).length < 1_048_576, `body ${JSON.stringify(big).length} bytes`);
  const users = Array.from({ length: 20 }, (_, i) => uniqueUser(`beside-big-${i}`));
  const [bad, ...others] = await Promise.all([
    srv.req('POST', '/track/batch', { token: a.write, body: big }),
    ...users.map((u) => srv.req('POST', '/track', { token: b.write, body: { event: 'beside_big', external_id: u } })),
  ]);
  keyError(t, bad, 413, 'PAYLOAD_TOO_LARGE');
  t.same(others.map((r) => r.status), users.map(() => 201), 'every track of the other workspace at the same moment: 201');
  t.same(await unreadable(b, new Map(users.map((u, i) => [u, [others[i]!.body?.data?.event_id as string]]))), [], 'and readable');
});

// JetStream redelivery timing (needs NATS_URL), made deterministic by holding the store sink
// mid-batch: the test locks the one `person_event_counts` row the batch must update, so the
// sink has fetched the batch and is applying it, unacknowledged, until the lock goes.
//  - A slow batch is not redelivered under its own feet: while the sink waits (longer than
//    the 5 s ack_wait) its in-progress acks keep the messages its own; a second fetcher on the
//    same durable consumer (as another replica would be) gets nothing.
//  - kill -9 mid-batch: the restarted Herald gets the batch again within seconds (the 5 s
//    ack_wait after its first delivery; with the old 30 s one it took up to 30 s). Needs
//    DATABASE_URL too: the killed Herald's backend, still waiting on the lock, is ended by the
//    test so that the events can only arrive by redelivery.
//  - An existing sink consumer made with the old 30 s ack_wait is brought to 5 s at start.
import t, { type Test } from 'tap';
import pg from 'pg';
import { connect } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { startServer, storeUrl, eventually, uniqueUser, workspaceWithKeys, serversOnOneDir, type TestServer } from '../helpers/server.js';
import { NO_LIMITS } from '../helpers/assert.js';

t.setTimeout(300_000);
const enc = encodeURIComponent;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Keys = Awaited<ReturnType<typeof keys>>;
const keys = (srv: TestServer) => workspaceWithKeys(srv, { write: ['events:write'], read: ['events:read'] }, 'Redelivery test');

async function readIds(srv: TestServer, k: Keys, user: string): Promise<string[]> {
  const r = await srv.req('GET', `/people/${enc(user)}/events?limit=500`, { token: k.read });
  return r.status === 200 ? (r.body.events as { id: string }[]).map((e) => e.id) : [];
}

async function track(t: Test, srv: TestServer, k: Keys, user: string, n: number): Promise<string[]> {
  const rs = await Promise.all(Array.from({ length: n }, (_, i) => srv.req('POST', '/track', { token: k.write, body: { event: 'slow', external_id: user, parameters: { i } } })));
  t.same(rs.map((r) => r.status), rs.map(() => 201), `${n} tracks acknowledged`);
  return rs.map((r) => r.body.data.event_id as string);
}

/**
 * Tracks a first event (so the person's count row exists), then locks that row in an open
 * transaction of `sql` and tracks `n` more: the sink's statement for them waits on the lock.
 * Resolves once a backend is seen waiting on it.
 */
async function holdSinkMidBatch(t: Test, srv: TestServer, sql: pg.Client, k: Keys, user: string, n: number): Promise<string[]> {
  const [firstId] = await track(t, srv, k, user, 1);
  t.ok(await eventually(async () => (await readIds(srv, k, user)).includes(firstId!), 30_000), 'the first event is readable');
  await sql.query('BEGIN');
  const locked = await sql.query(`SELECT 1 FROM person_event_counts c JOIN people p ON p.id = c.person_id WHERE p.external_id = $1 AND c.type = 'slow' FOR UPDATE OF c`, [user]);
  t.equal(locked.rowCount, 1, "the person's count row is locked");
  const ids = await track(t, srv, k, user, n);
  t.ok(await eventually(async () => (await blocked(sql)).length > 0, 30_000), 'the sink is applying the batch, waiting on the lock');
  return ids;
}

/** Backends waiting on a lock `sql` holds. */
async function blocked(sql: pg.Client): Promise<number[]> {
  // pg_stat_activity is read once per transaction unless the snapshot is cleared: a backend
  // connected since (the sink's pool opening a connection) would not be listed.
  await sql.query('SELECT pg_stat_clear_snapshot()');
  const r = await sql.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))');
  return r.rows.map((x) => x.pid);
}

t.test('a batch applied for longer than ack_wait is not redelivered under its own feet', { skip: !process.env.NATS_URL && 'needs NATS_URL' }, async (t) => {
  const srv = await startServer(NO_LIMITS);
  t.teardown(() => srv.stop());
  const sql = new pg.Client({ connectionString: storeUrl(srv) });
  await sql.connect();
  t.teardown(() => sql.end());
  const k = await keys(srv);
  const user = uniqueUser('slow');
  const ids = await holdSinkMidBatch(t, srv, sql, k, user, 5);

  // Another fetcher on the same durable consumer, for 8 s (the batch was delivered before it
  // started, so by its end the 5 s ack_wait has passed): it must get nothing.
  const nc = await connect({ servers: process.env.NATS_URL });
  t.teardown(() => nc.close());
  const consumer = await jetstream(nc).consumers.get(`${srv.natsPrefix}-events`, `${srv.natsPrefix}-store-sink`);
  const stolen: number[] = [];
  for await (const m of await consumer.fetch({ max_messages: 100, expires: 8000 })) {
    stolen.push(m.seq);
    m.nak();
  }
  t.same(stolen, [], 'nothing redelivered to another fetcher while the sink was still applying the batch');

  await sql.query('ROLLBACK');
  const readable = await eventually(async () => {
    const got = await readIds(srv, k, user);
    return ids.every((id) => got.includes(id)) ? got : undefined;
  }, 30_000);
  t.ok(readable, 'the batch is applied once the lock goes');
  t.equal(new Set(readable ?? []).size, (readable ?? []).length, 'no event twice');
});

t.test('kill -9 mid-batch: the restarted Herald gets the batch again within seconds', { skip: !(process.env.NATS_URL && process.env.DATABASE_URL) && 'needs NATS_URL and DATABASE_URL' }, async (t) => {
  const servers = await serversOnOneDir(t, NO_LIMITS, 'redeliver');
  const first = servers.first;
  const sql = new pg.Client({ connectionString: storeUrl(first) });
  await sql.connect();
  t.teardown(() => sql.end());
  const k = await keys(first);
  const user = uniqueUser('killed-mid-batch');
  const ids = await holdSinkMidBatch(t, first, sql, k, user, 5);

  await first.stop('SIGKILL');
  const killedAt = Date.now();
  // The killed Herald's backend would apply the batch once the lock goes: end it first.
  for (const pid of await blocked(sql)) await sql.query('SELECT pg_terminate_backend($1)', [pid]);
  await sql.query('ROLLBACK');
  await sleep(200);
  const applied = await sql.query('SELECT count(*)::int AS n FROM events WHERE id = ANY($1::uuid[])', [ids]);
  t.equal(applied.rows[0].n, 0, 'the batch was not applied before the kill: it can only arrive by redelivery');
  const second = await servers.again();
  const restartedAt = Date.now();
  const readable = await eventually(async () => {
    const got = await readIds(second, k, user);
    return ids.every((id) => got.includes(id)) ? got : undefined;
  }, 60_000);
  const sinceKill = Date.now() - killedAt;
  t.ok(readable, 'every acknowledged event of the batch is readable after the restart');
  t.equal(new Set(readable ?? []).size, (readable ?? []).length, 'no event twice');
  t.comment(`redelivery lag after kill -9 mid-batch: readable ${sinceKill} ms after the kill, ${Date.now() - restartedAt} ms after the restarted Herald listened (restart took ${restartedAt - killedAt} ms)`);
  t.ok(sinceKill < 15_000, `readable within 15 s of the kill (${sinceKill} ms; the ack_wait is 5 s)`);
});

t.test('an existing sink consumer made with a 30 s ack_wait is brought to 5 s at start', { skip: !process.env.NATS_URL && 'needs NATS_URL' }, async (t) => {
  const prefix = `t-ackwait-${process.pid}-${Date.now().toString(36)}`;
  const nc = await connect({ servers: process.env.NATS_URL });
  const jsm = await jetstreamManager(nc);
  t.teardown(async () => {
    await jsm.streams.delete(`${prefix}-events`).catch(() => {});
    await nc.close();
  });
  await jsm.streams.add({ name: `${prefix}-events`, subjects: [`${prefix}.events`], storage: StorageType.File, retention: RetentionPolicy.Interest });
  await jsm.consumers.add(`${prefix}-events`, { durable_name: `${prefix}-store-sink`, ack_policy: AckPolicy.Explicit, ack_wait: 30_000_000_000, max_ack_pending: 20_000 });
  const srv = await startServer({ ...NO_LIMITS, HERALD_NATS_PREFIX: prefix });
  t.teardown(() => srv.stop());
  const info = await jsm.consumers.info(`${prefix}-events`, `${prefix}-store-sink`);
  t.equal(info.config.ack_wait, 5_000_000_000, 'ack_wait 5 s');
  t.equal(info.config.durable_name, `${prefix}-store-sink`, 'the same durable consumer');
  const k = await keys(srv);
  const user = uniqueUser('updated-consumer');
  const [id] = await track(t, srv, k, user, 1);
  t.ok(await eventually(async () => (await readIds(srv, k, user)).includes(id!), 30_000), 'and the sink reads through it');
});

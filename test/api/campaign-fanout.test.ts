// Schedule fan-out against the fake FCM (HERALD_PUSH_PROVIDER=live, the workspace's stored
// credentials, the fake trusted through NODE_EXTRA_CA_CERTS): what the provider receives is
// the measure. A send_at run fires once with two Herald processes on one database (both poll
// the campaign and claim enrolments); a fan-out killed with -9 mid-way resumes after the restart
// with no token reached twice and everyone enrolled accounted for: sent, or `failed` as
// interrupted when their send was in flight at the kill (docs/campaigns-runtime.md). The same
// for an email fan-out to a real SMTP server (smtp-server), which records every RCPT and
// Message-ID it gets: no message delivered twice (issue 25).
import t, { type Test } from 'tap';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NO_LIMITS, type Ws } from '../helpers/assert.js';
import { ownDatabase } from '../helpers/database.js';
import { embeddedDatabaseUrl, eventually, newKey, newWorkspace, serversOnOneDir, startServer, storeUrl, type TestServer } from '../helpers/server.js';
import { startFakeFcm } from '../fakes/fake-fcm.js';
import { SMTPServer } from 'smtp-server';

// Four kill or pair runs of a few thousand sends and a two-workspace fan-out: minutes on a loaded machine.
t.setTimeout(480_000);
const DB = await ownDatabase(t);
const fcm = await startFakeFcm();
t.teardown(() => fcm.close());
const dir = mkdtempSync(join(tmpdir(), 'herald-fanout-ca-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'ca.pem'), fcm.ca);
// One sealing key for both processes of the pair: each reads the credentials the other stored.
const ENV = { ...NO_LIMITS, ...DB, HERALD_SECRETS_KEY: randomBytes(32).toString('hex'), HERALD_PUSH_PROVIDER: 'live', HERALD_FCM_ENDPOINT: fcm.url, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') };

// The SMTP server of the email fan-out: plain text, accepting everything, each message's DATA
// answered `smtpDelayMs` after it arrived; records every RCPT and every Message-ID received
// (DATA complete, whether or not the answer reached the sender).
const smtpGot = { rcpt: [] as string[], messageIds: [] as string[] };
let smtpDelayMs = 0;
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  onRcptTo(address, _s, cb) {
    smtpGot.rcpt.push(address.address);
    cb();
  },
  onData(stream, _s, cb) {
    let data = '';
    stream.on('data', (d: Buffer) => (data += d.toString()));
    stream.on('end', () => {
      const id = /^Message-ID:\s*<([^>]+)>/im.exec(data.replace(/\r\n[ \t]+/g, ' '))?.[1];
      smtpGot.messageIds.push(id ?? '(none)');
      setTimeout(cb, smtpDelayMs);
    });
  },
});
smtp.on('error', () => {});
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => smtp.close(() => r())));
const smtpPort = (smtp.server.address() as { port: number }).port;

const hdr = (ws: Ws) => ({ token: ws.token, headers: { 'x-workspace-id': ws.id } });

/**
 * A workspace with `n` people and a channel to reach them: push (FCM credentials, each person
 * one android token `${prefix}<i>`) or email (the SMTP server above, each person the address
 * `${prefix}<i>@example.com`).
 */
async function audience(srv: TestServer, n: number, prefix: string, channel: 'push' | 'email' = 'push'): Promise<Ws> {
  const ws = await newWorkspace(srv, 'Fan-out');
  const settings = channel === 'push'
    ? { fcm: { service_account: fcm.account } }
    : { smtp: { host: '127.0.0.1', port: smtpPort, security: 'none', max_connections: 20 }, from: { email: 'news@herald.example' } };
  const ch = await srv.req('PUT', `/workspaces/${ws.id}/channels/${channel}`, { token: ws.token, body: settings });
  if (ch.status !== 200) throw new Error(`channels: ${ch.status} ${ch.text}`);
  const key = (await newKey(srv, ws, { permissions: ['*'] })).key;
  for (let i = 0; i < n; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ userId: `u${i + k}`, ...(channel === 'email' ? { email: `${prefix}${i + k}@example.com` } : {}) }));
    const r = await srv.req('POST', '/people/batch', { token: key, body: { identify: batch } });
    if (r.status !== 200) throw new Error(`people: ${r.status} ${r.text}`);
  }
  if (channel === 'email') return ws;
  let next = 0;
  const register = async () => {
    for (let i = next++; i < n; i = next++) {
      const r = await srv.req('POST', `/people/u${i}/devices`, { token: key, body: { token: `${prefix}${i}`, platform: 'android' } });
      if (r.status !== 201) throw new Error(`device: ${r.status} ${r.text}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, register));
  return ws;
}

const PUSH_NODE = { id: 'n', type: 'push', title: 'Hello', body: 'everyone' };

async function scheduled(t: Test, srv: TestServer, ws: Ws, inMs: number, at = new Date(Date.now() + inMs), node: object = PUSH_NODE): Promise<string> {
  const r = await srv.req('POST', '/campaigns', {
    ...hdr(ws),
    body: { name: 'Fan-out', trigger_type: 'schedule', trigger_config: { send_at: at.toISOString() }, workflow_definition: { nodes: [node] } },
  });
  t.equal(r.status, 201, r.text);
  const a = await srv.req('PUT', `/campaigns/${r.body.data.campaign.id}`, { ...hdr(ws), body: { status: 'active' } });
  t.equal(a.body.data?.campaign?.status, 'scheduled', a.text);
  return r.body.data.campaign.id;
}

const stats = async (srv: TestServer, ws: Ws, id: string) => (await srv.req('GET', `/campaigns/${id}`, hdr(ws))).body.data;

/** How many requests the fake received per token of this prefix. */
function receivedBy(prefix: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of fcm.received) {
    const tok = r.body.message.token;
    if (tok.startsWith(prefix)) m.set(tok, (m.get(tok) ?? 0) + 1);
  }
  return m;
}

/** The access tokens the fake FCM saw on the sends to tokens of this prefix: one per actor that sent (each actor fetches its own). */
function sendersOf(prefix: string): Set<string> {
  return new Set(fcm.received.filter((r) => r.body.message.token.startsWith(prefix)).map((r) => r.authorization ?? ''));
}

// Issue 24: a campaign's sends spread over every actor, not only the workspace's owner, while
// the workspace sets no cap; with a cap, only the owner sends (it keeps the counters).
t.test("a fan-out is sent by every actor while its workspace sets no cap, and by the owner alone under a cap", async (t) => {
  const srv = await startServer({ ...ENV, HERALD_ACTORS: '2' });
  t.teardown(() => srv.stop());
  const N = 1500;
  for (const capped of [false, true]) {
    // Slow tokens (answered after 300 ms): the owner falls behind, and other actors take
    // steps that waited over a second (store/enrolments.ts SHARED_AFTER_MS).
    const prefix = capped ? 'slow-spread-capped-' : 'slow-spread-free-';
    const ws = await audience(srv, N, prefix);
    if (capped) {
      const p = await srv.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { send_policy: { max_pushes_per_day: 100 } } } });
      t.equal(p.status, 200, p.text);
    }
    const id = await scheduled(t, srv, ws, 1000);
    await eventually(async () => (await stats(srv, ws, id)).stats.sent === N, 60_000);
    const got = receivedBy(prefix);
    t.equal(got.size, N, `every person reached (${capped ? 'with' : 'without'} a cap)`);
    t.same([...got.values()].filter((c) => c > 1), [], 'nobody twice');
    t.equal(sendersOf(prefix).size, capped ? 1 : 2, capped ? 'under a cap, only the owning actor sent' : 'without a cap, both actors sent');
  }
});

t.test('a scheduled run fires once with two Herald processes on one database', async (t) => {
  const a = await startServer(ENV);
  const b = await startServer({ ...ENV, DATABASE_URL: DB.DATABASE_URL ?? embeddedDatabaseUrl(a.dataDir) }).catch(async (err: Error) => {
    await a.stop();
    throw err;
  });
  // The replica on DATABASE_URL stops first: the other owns the embedded PostgreSQL.
  t.teardown(async () => {
    await b.stop();
    await a.stop();
  });
  const N = 400;
  const ws = await audience(a, N, 'pair-token-');
  const id = await scheduled(t, a, ws, 2500);
  const done = await eventually(async () => {
    const d = await stats(b, ws, id);
    return d.campaign.status === 'completed' && d.stats.sent === N ? d : null;
  }, 30_000);
  t.ok(done, 'completed with everyone sent, as the other process reads it');
  await new Promise((r) => setTimeout(r, 1500));
  const got = receivedBy('pair-token-');
  t.equal(got.size, N, 'every token reached');
  t.same([...got.values()].filter((c) => c > 1), [], 'none twice');
  const final = await stats(a, ws, id);
  t.same([final.stats.enrolled, final.stats.triggered, final.stats.sent, final.stats.failed], [N, 1, N, 0], 'one run enrolled everyone once');
  const sql = new pg.Client({ connectionString: storeUrl(a, DB) });
  await sql.connect();
  t.equal((await sql.query('SELECT 1 FROM campaign_runs WHERE campaign_id = $1', [id])).rowCount, 1, 'one run row');
  await sql.end();
});

t.test('a fan-out killed with -9 mid-way resumes after the restart without duplicates', async (t) => {
  const own = await ownDatabase(t);
  const servers = await serversOnOneDir(t, { ...ENV, ...own }, 'fanout-kill');
  const first = servers.first;
  const N = 3000;
  const ws = await audience(first, N, 'slow-kill-');
  fcm.slowMs = 1000;
  t.teardown(() => void (fcm.slowMs = 300));
  const id = await scheduled(t, first, ws, 2000);
  // Past the first chunks (recorded sent), while others are with the provider.
  await eventually(async () => receivedBy('slow-kill-').size >= 1250, 30_000);
  await first.stop('SIGKILL');
  const atKill = receivedBy('slow-kill-').size;
  t.ok(atKill < N, `killed mid-way (${atKill} of ${N} reached)`);

  const again = await servers.again();
  const sql = new pg.Client({ connectionString: storeUrl(again, own) });
  await sql.connect();
  t.teardown(() => sql.end());
  // Done when everyone has a final record: the claims in flight at the kill are taken over
  // once stale (30 s) and their records settled.
  const settled = await eventually(async () => {
    const r = await sql.query<{ n: number; open: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'sending')::int AS open FROM messages WHERE campaign_id = $1`,
      [id],
    );
    return r.rows[0]!.n === N && r.rows[0]!.open === 0;
  }, 90_000);
  t.ok(settled, 'every enrolled person has a settled record');

  const got = receivedBy('slow-kill-');
  t.ok(got.size > atKill, `the fan-out went on after the restart (${atKill} → ${got.size})`);
  t.same([...got.values()].filter((c) => c > 1), [], 'no token reached twice');
  const d = await stats(again, ws, id);
  t.equal(d.campaign.status, 'completed');
  t.equal(d.stats.enrolled, N, 'everyone enrolled once');
  t.equal(d.stats.sent + d.stats.failed, N, `each one record: ${d.stats.sent} sent, ${d.stats.failed} failed as interrupted`);
  const perPerson = await sql.query('SELECT person_id FROM messages WHERE campaign_id = $1 GROUP BY person_id HAVING count(*) > 1', [id]);
  t.equal(perPerson.rowCount, 0, 'one record per person');
  const failed = await sql.query<{ error: string; token: string }>(
    `SELECT m.error, d.device_token AS token FROM messages m JOIN devices d ON d.person_id = m.person_id WHERE m.campaign_id = $1 AND m.status = 'failed'`,
    [id],
  );
  t.ok(failed.rows.every((r) => /Interrupted while sending/.test(r.error)), 'every failure is the interruption');
  const sent = await sql.query<{ token: string }>(
    `SELECT d.device_token AS token FROM messages m JOIN devices d ON d.person_id = m.person_id WHERE m.campaign_id = $1 AND m.status = 'sent'`,
    [id],
  );
  t.ok(sent.rows.every((r) => got.has(r.token)), 'every person recorded sent reached the provider');
  const unreached = failed.rows.filter((r) => !got.has(r.token)).length;
  t.ok(failed.rowCount! <= 1000, `the failures are at most the owning actor's claims in flight at the kill (4 × 250) (${failed.rowCount}; ${unreached} never reached the provider)`);
});

// Issue 25's target: 0 duplicate deliveries after a kill -9 mid email fan-out. The SMTP server
// answers each message late, so at the kill some are with it (DATA received, the answer not yet
// back to Herald) and more are claimed and waiting in the pool. After the restart those claims
// are taken over and recorded `failed` as interrupted, not sent again; the rest are sent.
t.test('an email fan-out killed with -9 mid-way delivers no message twice, and records who was with the SMTP server at the kill', async (t) => {
  const own = await ownDatabase(t);
  const servers = await serversOnOneDir(t, { ...ENV, ...own }, 'email-kill');
  const N = 2000;
  const prefix = 'mail-kill-';
  const ws = await audience(servers.first, N, prefix, 'email');
  smtpDelayMs = 300;
  t.teardown(() => void (smtpDelayMs = 0));
  const ours = () => smtpGot.messageIds.length;
  const before = ours();
  const id = await scheduled(t, servers.first, ws, 2000, undefined, { id: 'm', type: 'email', subject: 'Hello', text: 'everyone' });
  await eventually(async () => ours() - before >= 500, 60_000);
  await servers.first.stop('SIGKILL');
  const atKill = ours() - before;
  t.ok(atKill < N, `killed mid-way (${atKill} of ${N} messages at the SMTP server)`);
  smtpDelayMs = 10;

  const again = await servers.again();
  const sql = new pg.Client({ connectionString: storeUrl(again, own) });
  await sql.connect();
  t.teardown(() => sql.end());
  const settled = await eventually(async () => {
    const r = await sql.query<{ n: number; open: number }>(`SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'sending')::int AS open FROM messages WHERE campaign_id = $1`, [id]);
    return r.rows[0]!.n === N && r.rows[0]!.open === 0;
  }, 90_000);
  t.ok(settled, 'every enrolled person has a settled record');
  await new Promise((r) => setTimeout(r, 500));

  const rcpt = new Map<string, number>();
  for (const a of smtpGot.rcpt) if (a.startsWith(prefix)) rcpt.set(a, (rcpt.get(a) ?? 0) + 1);
  const records = (await sql.query<{ id: string; status: string; error: string | null; channel: string; person_id: string }>(
    'SELECT id, status, error, channel, person_id FROM messages WHERE campaign_id = $1',
    [id],
  )).rows;
  const ids = new Set(records.map((r) => r.id));
  const delivered = new Map<string, number>();
  for (const m of smtpGot.messageIds.slice(before)) {
    const local = m.slice(0, m.indexOf('@'));
    if (ids.has(local)) delivered.set(local, (delivered.get(local) ?? 0) + 1);
  }
  t.ok(delivered.size > atKill, `the fan-out went on after the restart (${atKill} → ${delivered.size} messages)`);
  t.same([...delivered].filter(([, c]) => c > 1), [], 'no Message-ID delivered twice');
  t.same([...rcpt].filter(([, c]) => c > 1), [], 'no address given to the server twice (RCPT)');
  t.equal(new Set(records.map((r) => r.person_id)).size, N, 'one record per person');
  t.equal(records.length, N, 'and no more');
  const sent = records.filter((r) => r.status === 'sent');
  const failed = records.filter((r) => r.status === 'failed');
  t.equal(sent.length + failed.length, N, `sent (${sent.length}) or failed (${failed.length}), nothing else`);
  t.ok(sent.every((r) => delivered.has(r.id)), 'every record `sent` is a message the SMTP server got');
  t.ok(failed.every((r) => /Interrupted while sending/.test(r.error ?? '')), 'every failure is the interruption');
  // Those with the SMTP server at the kill: it got the message, Herald never saw its answer.
  const withServer = failed.filter((r) => delivered.has(r.id));
  t.ok(withServer.length > 0, `some were with the SMTP server at the kill (${withServer.length}), and their records say they were interrupted and may have arrived`);
  t.ok(failed.length <= 256, `the interrupted are at most the workspace's claims in flight (${failed.length}; ${failed.length - withServer.length} never reached the server)`);
  const channels = [...new Set(failed.map((r) => r.channel))];
  t.comment(`interrupted records' channel: ${channels.join(', ')} (email expected; recorded push before branch wip-25a)`);
  const d = await stats(again, ws, id);
  t.equal(d.campaign.status, 'completed');
  t.equal(d.stats.enrolled, N, 'everyone enrolled once');
});

// The blast radius of a kill (issue 24): only the claims in flight are lost, and they are at
// most the workspace's share of provider sends (src/channels/push/engine.ts WORKSPACE_SHARE), since
// a workspace's claims are bounded by it; the restarted process takes over the dead one's
// claims at its first look (the instance lock is gone, store/leases.ts), not after the 30 s
// stale timeout, so the fan-out settles well within that after the restart.
t.test('a kill -9 at a quarter of a fan-out fails at most the provider share, and the rest settles before any stale timeout', async (t) => {
  const own = await ownDatabase(t);
  const servers = await serversOnOneDir(t, { ...ENV, ...own }, 'fanout-blast');
  const N = 3000;
  const SHARE = 256;
  const ws = await audience(servers.first, N, 'blast-radius-');
  fcm.slowMs = 1000;
  t.teardown(() => void (fcm.slowMs = 300));
  const id = await scheduled(t, servers.first, ws, 2000);
  await eventually(async () => receivedBy('blast-radius-').size >= N / 4, 30_000);
  await servers.first.stop('SIGKILL');
  const atKill = receivedBy('blast-radius-').size;

  const again = await servers.again();
  const restarted = Date.now();
  const sql = new pg.Client({ connectionString: storeUrl(again, own) });
  await sql.connect();
  t.teardown(() => sql.end());
  const settled = await eventually(async () => {
    const r = await sql.query<{ n: number; open: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE status = 'sending')::int AS open FROM messages WHERE campaign_id = $1`,
      [id],
    );
    return r.rows[0]!.n === N && r.rows[0]!.open === 0;
  }, 20_000);
  t.ok(settled, `everyone has a settled record ${Date.now() - restarted} ms after the restart (less than the 30 s stale timeout)`);
  const got = receivedBy('blast-radius-');
  t.same([...got.values()].filter((c) => c > 1), [], `no token reached twice (${atKill} reached at the kill, ${got.size} in the end)`);
  const d = await stats(again, ws, id);
  t.ok(d.stats.failed <= SHARE, `failed (${d.stats.failed}) at most the workspace's provider share (${SHARE})`);
  t.equal(d.stats.sent + d.stats.failed, N, 'everyone else sent');
});

// Two workspaces fanning out at once on one actor (issue 24): their runs enrol a page each in
// turn and the executor serves them in turn, so both progress together. Measured on what the
// fake provider received, in order: the median position of each workspace's sends among all.
// The bound is 1.5× at 100,000 each; at 4,000 each (two enrolment pages) one audience
// enrolled after the other already stays near it (3,344 and 5,000 on the old code), and pages in
// turn keep the two within a few per cent, so the bound here is 1.25×.
t.test('two workspaces fanning out at once progress side by side', async (t) => {
  const own = await ownDatabase(t);
  const srv = await startServer({ ...ENV, ...own, HERALD_ACTORS: '1' });
  t.teardown(() => srv.stop());
  const N = 4000;
  const a = await audience(srv, N, 'fair-a-token-');
  const b = await audience(srv, N, 'fair-b-token-');
  const at = new Date(Date.now() + 3000);
  const ids = [await scheduled(t, srv, a, 0, at), await scheduled(t, srv, b, 0, at)];
  const done = await eventually(async () => (await stats(srv, a, ids[0]!)).stats.sent === N && (await stats(srv, b, ids[1]!)).stats.sent === N, 120_000);
  t.ok(done, 'both fan-outs sent everyone');
  const order = fcm.received.map((r) => r.body.message.token).filter((tok) => tok.startsWith('fair-'));
  const median = (prefix: string) => {
    const at = order.flatMap((tok, i) => (tok.startsWith(prefix) ? [i] : []));
    return at[Math.floor(at.length / 2)]!;
  };
  const [ma, mb] = [median('fair-a-'), median('fair-b-')];
  t.ok(Math.max(ma, mb) <= 1.25 * Math.min(ma, mb), `neither's median send is more than 1.25× the other's (positions ${ma} and ${mb} of ${order.length})`);
});

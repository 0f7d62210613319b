// Workspaces are served fairly (docs/isolation.md, "Fairness between workspaces"; docs/channels.md, scheduled sends): with both
// workspaces on one actor (HERALD_ACTORS=1), one whose provider holds every answer (the fake
// FCM's `slow-` tokens, held past Herald's stream timeout, so each send takes its three
// attempts) and which has a large campaign and a backlog of scheduled sends in flight, does
// not hold another workspace's campaign push or scheduled send: those go out while every send
// of the slow workspace is still unanswered, and the slow workspace has no more sends with its
// provider than its share of the actor's send concurrency.
import t from 'tap';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NO_LIMITS, type Ws } from '../helpers/assert.js';
import { eventually, newKey, newWorkspace, startServer, storeUrl, type TestServer } from '../helpers/server.js';
import { startFakeFcm } from '../fakes/fake-fcm.js';
import { ownDatabase } from '../helpers/database.js';

t.setTimeout(240_000);
const fcm = await startFakeFcm();
t.teardown(() => fcm.close());
const dir = mkdtempSync(join(tmpdir(), 'herald-fairness-ca-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'ca.pem'), fcm.ca);
// A database of its own on DATABASE_URL: another file's server would run these campaigns too.
const DB = await ownDatabase(t);
const s: TestServer = await startServer({
  ...DB,
  ...NO_LIMITS,
  HERALD_ACTORS: '1',
  HERALD_SECRETS_KEY: randomBytes(32).toString('hex'),
  HERALD_PUSH_PROVIDER: 'live',
  HERALD_FCM_ENDPOINT: fcm.url,
  HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
  NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'),
});
t.teardown(async () => {
  fcm.slowMs = 0; // the slow workspace's sends still under way end, so the server stops soon
  await s.stop();
});
const sql = new pg.Client({ connectionString: storeUrl(s, DB) });
await sql.connect();
t.teardown(() => sql.end());

/** The engine's share of one workspace (src/channels/push/engine.ts WORKSPACE_SHARE). */
const SHARE = 256;

interface Tenant {
  ws: Ws;
  key: string;
}

const hdr = (w: Tenant) => ({ token: w.ws.token, headers: { 'x-workspace-id': w.ws.id } });

/** A workspace with FCM credentials and `n` people `u<i>`, each with one android token `${prefix}<i>`. */
async function tenant(n: number, prefix: string): Promise<Tenant> {
  const ws = await newWorkspace(s, 'Fairness');
  const ch = await s.req('PUT', `/workspaces/${ws.id}/channels/push`, { token: ws.token, body: { fcm: { service_account: fcm.account } } });
  if (ch.status !== 200) throw new Error(`channels: ${ch.status} ${ch.text}`);
  const key = (await newKey(s, ws, { permissions: ['*'] })).key;
  for (let i = 0; i < n; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ userId: `u${i + k}` }));
    const r = await s.req('POST', '/people/batch', { token: key, body: { identify: batch } });
    if (r.status !== 200) throw new Error(`people: ${r.status} ${r.text}`);
  }
  let next = 0;
  const register = async () => {
    for (let i = next++; i < n; i = next++) {
      const r = await s.req('POST', `/people/u${i}/devices`, { token: key, body: { token: `${prefix}${i}`, platform: 'android' } });
      if (r.status !== 201) throw new Error(`device: ${r.status} ${r.text}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, register));
  return { ws, key };
}

/** An active webhook campaign with one push node, for everyone. */
async function campaign(w: Tenant): Promise<string> {
  const c = await s.req('POST', '/campaigns', {
    ...hdr(w),
    body: { name: 'Push', trigger_type: 'webhook', trigger_config: {}, audience_config: {}, workflow_definition: { nodes: [{ id: 'n', type: 'push', title: 'Hello', body: 'everyone' }] } },
  });
  if (c.status !== 201) throw new Error(`campaign: ${c.status} ${c.text}`);
  const id = c.body.data.campaign.id as string;
  const a = await s.req('PUT', `/campaigns/${id}`, { ...hdr(w), body: { status: 'active' } });
  if (a.status !== 200) throw new Error(`activate: ${a.status} ${a.text}`);
  return id;
}

async function fire(w: Tenant, id: string): Promise<void> {
  const r = await s.req('POST', `/campaigns/${id}/trigger`, { token: w.key, body: { workspace_id: w.ws.id } });
  if (r.status !== 202) throw new Error(`trigger: ${r.status} ${r.text}`);
}

async function schedule(w: Tenant, externalId: string, at: Date): Promise<string> {
  const r = await s.req('POST', `/workspaces/${w.ws.id}/push/send`, { token: w.key, body: { external_id: externalId, title: 'Later', scheduled_at: at.toISOString() } });
  if (r.status !== 202) throw new Error(`scheduled send: ${r.status} ${r.text}`);
  return r.body.message_id as string;
}

const stats = async (w: Tenant, id: string) => (await s.req('GET', `/campaigns/${id}`, hdr(w))).body.data.stats as { enrolled: number; sent: number; failed: number };

/** The slow workspace's sends that reached the provider: distinct tokens (retries send the same one again). */
const slowTokensReached = () => new Set(fcm.received.map((r) => r.body.message.token).filter((tok) => tok.startsWith('slow-'))).size;

/** The workspace's scheduled sends by status. */
async function scheduledByStatus(w: Tenant): Promise<Record<string, number>> {
  const r = await sql.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM messages WHERE workspace_id = $1 AND scheduled_at IS NOT NULL GROUP BY status`,
    [w.ws.id],
  );
  return Object.fromEntries(r.rows.map((x) => [x.status, x.n]));
}

t.test("a slow workspace's campaign and scheduled sends do not hold another workspace's", async (t) => {
  const N = 1100;
  const SCHEDULED = 120;
  const slow = await tenant(N, 'slow-token-');
  const other = await tenant(1, 'fast-token-');
  const slowCampaign = await campaign(slow);
  const otherCampaign = await campaign(other);
  // Held past Herald's stream timeout (10 s): each attempt times out, so every send of the slow
  // workspace takes three attempts and stays unanswered for half a minute.
  fcm.slowMs = 12_000;

  // The slow workspace: scheduled sends due in 2 s, and a campaign to its 1,100 people.
  const due = new Date(Date.now() + 2000);
  for (let i = 0; i < SCHEDULED; i += 20) await Promise.all(Array.from({ length: 20 }, (_, k) => schedule(slow, `u${i + k}`, due)));
  await fire(slow, slowCampaign);
  const stuck = await eventually(async () => slowTokensReached() >= SHARE && ((await scheduledByStatus(slow)).sending ?? 0) > 0, 60_000);
  t.ok(stuck, 'the slow workspace has sends with its provider and scheduled sends claimed');

  // Now the other workspace: a campaign push and a scheduled send due in a second.
  const firedAt = Date.now();
  const otherMessage = await schedule(other, 'u0', new Date(Date.now() + 1000));
  await fire(other, otherCampaign);
  const served = await eventually(async () => {
    const st = await s.req('GET', `/workspaces/${other.ws.id}/push/status/${otherMessage}`, { token: other.key });
    return (await stats(other, otherCampaign)).sent === 1 && st.body?.message?.status === 'sent';
  }, 120_000);
  // Read at once: the slow workspace's state when the other's sends had gone out.
  const slowStats = await stats(slow, slowCampaign);
  const slowScheduled = await scheduledByStatus(slow);
  const reached = slowTokensReached();
  t.ok(served, `the other workspace's campaign push and scheduled send went out (${Date.now() - firedAt} ms after they were fired)`);
  t.equal(slowStats.enrolled, N, 'the slow campaign enrolled everyone');
  t.equal(slowStats.sent + slowStats.failed, 0, 'meanwhile none of the slow campaign’s sends had ended');
  t.same(Object.keys(slowScheduled).filter((k) => k !== 'scheduled' && k !== 'sending'), [], `meanwhile none of the slow workspace’s scheduled sends had ended (${JSON.stringify(slowScheduled)})`);
  t.ok(reached <= SHARE, `the slow workspace had at most its share of sends with the provider (${reached} of ${SHARE})`);
});

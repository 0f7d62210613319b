// API key changes across replicas (docs/isolation.md, "API keys across replicas"): two servers on one
// PostgreSQL. A key revoked, refreshed or downgraded through one is refused by the other
// within a second, announced over PostgreSQL NOTIFY (no NATS_URL) or NATS core pub/sub
// (NATS_URL). The caches' TTL is set to 10 minutes here, so only the announcement can explain
// the refusal; a change made behind Herald's back (straight in the database) is seen only
// when the TTL expires.
//
// On the embedded default the second replica uses the first one's embedded PostgreSQL
// through DATABASE_URL; with DATABASE_URL both use it. The NOTIFY pair runs in both passes,
// the NATS pair when NATS_URL is set.
import t, { type Test } from 'tap';
import pg from 'pg';
import { embeddedDatabaseUrl, newKey, newWorkspace, startServer, type Res, type TestServer } from '../helpers/server.js';

const LONG_TTL = '600000';
/** Room for a loaded machine; the announcement itself takes milliseconds. */
const DEADLINE_MS = 3000;
const GENEROUS = 'ws-reads=60000:10000,ws-ingest=60000:10000,ip-public=60000:10000,user-dashboard=60000:10000';

/** Polls `probe` until `done` holds; how long after `since` that was, or null past the deadline. */
async function within(probe: () => Promise<Res[]>, done: (rs: Res[]) => boolean, since: number, deadlineMs = DEADLINE_MS): Promise<{ ms: number | null; last: Res[] }> {
  for (;;) {
    const last = await probe();
    if (done(last)) return { ms: Date.now() - since, last };
    if (Date.now() - since > deadlineMs) return { ms: null, last };
    await new Promise((r) => setTimeout(r, 20));
  }
}

const statuses = (rs: Res[]) => rs.map((r) => r.status).join(', ');

/** Starts two replicas on one database; the second shares the first's when it is embedded. */
async function replicas(t: Test, env: Record<string, string | undefined>): Promise<[TestServer, TestServer, string]> {
  const a = await startServer(env);
  const url = process.env.DATABASE_URL ?? embeddedDatabaseUrl(a.dataDir);
  const b = await startServer({ ...env, DATABASE_URL: url }).catch(async (err: Error) => {
    await a.stop();
    throw err;
  });
  // The replica on DATABASE_URL stops first: the other owns the embedded PostgreSQL.
  t.teardown(async () => {
    await b.stop();
    await a.stop();
  });
  return [a, b, url];
}

/** Revoke through `via`, refresh through the other, downgrade through `via` again. */
function changesReachTheOtherReplica(t: Test, a: TestServer, b: TestServer, bus: string): void {
  t.test(`revoke through A: refused by B (${bus})`, async (t) => {
    const ws = await newWorkspace(a, 'Replicas revoke');
    const k = await newKey(a, ws, { permissions: ['people:read'] });
    t.equal((await b.req('GET', '/people', { token: k.key })).status, 200, 'B accepts the key (and caches it)');
    t.equal((await a.req('GET', '/people', { token: k.key })).status, 200, 'A accepts the key');
    const r = await a.req('DELETE', `/workspaces/${ws.id}/api-keys/${k.id}`, { token: ws.token });
    t.equal(r.status, 200, 'revoked through A');
    const since = Date.now();
    t.equal((await a.req('GET', '/people', { token: k.key })).status, 401, 'A refuses it at once');
    const { ms, last } = await within(async () => [await b.req('GET', '/people', { token: k.key })], ([x]) => x!.status === 401, since);
    t.ok(ms !== null, `B refuses the revoked key within ${DEADLINE_MS} ms (last: ${statuses(last)})`);
    t.equal(last[0]!.body?.details, 'Unknown, revoked or refreshed API key');
    t.comment(`revoke: B refused ${ms} ms after A answered`);
  });

  t.test(`refresh through B: on A the old secret is refused, the new one accepted (${bus})`, async (t) => {
    const ws = await newWorkspace(b, 'Replicas refresh');
    const k = await newKey(b, ws, { permissions: ['people:read'] });
    t.equal((await a.req('GET', '/people', { token: k.key })).status, 200, 'A accepts the key (and caches it)');
    const r = await b.req('POST', `/workspaces/${ws.id}/api-keys/${k.id}/refresh`, { token: ws.token });
    t.equal(r.status, 200, 'refreshed through B');
    const since = Date.now();
    const fresh: string = r.body.api_key.key;
    t.not(fresh, k.key);
    const { ms, last } = await within(
      async () => [await a.req('GET', '/people', { token: k.key }), await a.req('GET', '/people', { token: fresh })],
      ([old, now]) => old!.status === 401 && now!.status === 200,
      since,
    );
    t.ok(ms !== null, `A refuses the old secret and accepts the new one within ${DEADLINE_MS} ms (last: old ${last[0]!.status}, new ${last[1]!.status})`);
    t.comment(`refresh: A switched ${ms} ms after B answered`);
    t.equal((await b.req('GET', '/people', { token: k.key })).status, 401, 'B refuses the old secret');
    t.equal((await b.req('GET', '/people', { token: fresh })).status, 200, 'B accepts the new one');
  });

  t.test(`downgrade through A: B refuses what the key may no longer do (${bus})`, async (t) => {
    const ws = await newWorkspace(a, 'Replicas downgrade');
    const k = await newKey(a, ws, { permissions: ['people:read', 'events:write'] });
    t.equal((await b.req('GET', '/people', { token: k.key })).status, 200, 'B lets the key read people (and caches it)');
    const r = await a.req('PUT', `/workspaces/${ws.id}/api-keys/${k.id}`, { token: ws.token, body: { permissions: ['events:write'] } });
    t.equal(r.status, 200, 'downgraded through A');
    t.same(r.body.api_key.permissions, ['events:write']);
    const since = Date.now();
    const { ms, last } = await within(async () => [await b.req('GET', '/people', { token: k.key })], ([x]) => x!.status === 403, since);
    t.ok(ms !== null, `B refuses people:read within ${DEADLINE_MS} ms (last: ${statuses(last)})`);
    t.comment(`downgrade: B refused ${ms} ms after A answered`);
    const track = await b.req('POST', '/track', { token: k.key, body: { userId: 'replica-user', event: 'still_allowed' } });
    t.equal(track.status, 201, 'what the key still may do passes on B');
  });
}

t.test('key changes over PostgreSQL NOTIFY (no NATS_URL)', async (t) => {
  const env = { NATS_URL: undefined, CLICKHOUSE_URL: undefined, HERALD_KEY_CACHE_TTL_MS: LONG_TTL, HERALD_RATE_LIMITS: GENEROUS };
  const [a, b, url] = await replicas(t, env);
  changesReachTheOtherReplica(t, a, b, 'NOTIFY');

  t.test('a change nobody announced: kept by a long TTL, dropped by a short one', async (t) => {
    const c = await startServer({ ...env, DATABASE_URL: url, HERALD_KEY_CACHE_TTL_MS: '1000' });
    t.teardown(() => c.stop());
    const ws = await newWorkspace(a, 'Replicas TTL');
    const k = await newKey(a, ws, { permissions: ['people:read'] });
    t.equal((await b.req('GET', '/people', { token: k.key })).status, 200, 'B (10 min TTL) caches the key');
    t.equal((await c.req('GET', '/people', { token: k.key })).status, 200, 'C (1 s TTL) caches the key');
    // Revoked behind Herald's back: no replica is told.
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      await db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [k.id]);
    } finally {
      await db.end();
    }
    const since = Date.now();
    const { ms, last } = await within(async () => [await c.req('GET', '/people', { token: k.key })], ([x]) => x!.status === 401, since, 1000 + DEADLINE_MS);
    t.ok(ms !== null, `C refuses the key once its entry expires (last: ${statuses(last)})`);
    t.comment(`TTL 1 s: C refused ${ms} ms after the change`);
    t.equal((await b.req('GET', '/people', { token: k.key })).status, 200, 'B still serves its cached copy: only the TTL or an announcement drops it');
  });
});

t.test('key changes over NATS core pub/sub (NATS_URL)', { skip: !process.env.NATS_URL && 'needs NATS_URL' }, async (t) => {
  const env = { HERALD_NATS_PREFIX: `t-keys-${process.pid}-${Date.now().toString(36)}`, HERALD_KEY_CACHE_TTL_MS: LONG_TTL, HERALD_RATE_LIMITS: GENEROUS };
  const [a, b] = await replicas(t, env);
  changesReachTheOtherReplica(t, a, b, 'NATS');
});

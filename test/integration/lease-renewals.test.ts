// A heartbeat renewing claims (store/job-queue.ts renewLeases) beside the statement completing some
// of them, which holds their rows until its transaction commits (a page's move-on, with the
// page's records; a batch of scheduled sends' records): the heartbeat never waits for a row the
// other holds, so the two cannot deadlock. Waiting there, while holding rows the other locked
// next, is what a 250,000-person fan-out hit ("deadlock detected").
import t, { type Test } from 'tap';
import pg from 'pg';
import { newWorkspace, storeUrl } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { ENROLMENT_JOBS } from '../../src/store/enrolments.js';
import { SCHEDULED_SEND_JOBS } from '../../src/store/messages.js';
import { renewLeases } from '../../src/store/job-queue.js';
import { INSTANCE_LOCKS } from '../../src/store/leases.js';
import { openPostgres } from '../../src/store/pg.js';
import type { Queryable } from '../../src/store/db.js';

const s = await sharedServer();
const connect = async () => {
  const c = new pg.Client({ connectionString: storeUrl(s) });
  await c.connect();
  t.teardown(() => c.end());
  return c;
};
const [sql, completer] = [await connect(), await connect()];
// The heartbeat's own kind of connection: a pool, of one here (so its backend is known).
const heartbeat = openPostgres(storeUrl(s), 1);
t.teardown(() => heartbeat.close());
const heartbeatPid = (await heartbeat.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
// The claims' holder is an instance whose lock is held (here): alive, so nothing releases them.
const HOLDER = 2_000_000;
await sql.query('SELECT pg_advisory_lock($1, $2)', [INSTANCE_LOCKS, HOLDER]);

const ws = await newWorkspace(s, 'Claims');
await sql.query(`INSERT INTO people (id, workspace_id, external_id) SELECT gen_random_uuid(), $1, 'p' || i FROM generate_series(1, 2) AS i`, [ws.id]);

/**
 * Two claims of `table` (made by `claim`, held by HOLDER, renewed 10 s ago): the first is
 * completed by `complete` in a transaction left open while `renew` runs on both. Checks the
 * renewal did not wait, skipped the completed claim and renewed the other.
 */
async function check(t: Test, table: string, claim: string, complete: string, renew: (q: Queryable, ids: string[]) => Promise<void>) {
  const ids = (await sql.query<{ id: string }>(claim, [ws.id, HOLDER])).rows.map((r) => r.id);
  const [completed, other] = ids as [string, string];
  await completer.query('BEGIN');
  await completer.query(complete, [completed]);
  const waitsForALock = async () => {
    for (;;) {
      const r = await sql.query<{ wait_event_type: string | null }>('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [heartbeatPid]);
      if (r.rows[0]?.wait_event_type === 'Lock') return 'waits for the completion' as const;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const outcome = await Promise.race([renew(heartbeat, ids).then(() => 'done' as const), waitsForALock()]);
  await completer.query('COMMIT');
  t.equal(outcome, 'done', 'the heartbeat did not wait for the row being completed');
  const fresh = await sql.query<{ id: string; fresh: boolean | null }>(`SELECT id, claimed_at > now() - interval '5 seconds' AS fresh FROM ${table} WHERE id = ANY ($1::uuid[])`, [ids]);
  const byId = new Map(fresh.rows.map((r) => [r.id, r.fresh]));
  t.equal(byId.get(completed), null, 'the completed claim is left to its completion');
  t.equal(byId.get(other), true, 'the other claim is renewed');
}

t.test('the executor heartbeat beside a page move-on', async (t) => {
  const c = await s.req('POST', '/campaigns', {
    token: ws.token,
    headers: { 'x-workspace-id': ws.id },
    body: { name: 'Held', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'n', type: 'push', title: 'Hi' }] } },
  });
  t.equal(c.status, 201, 'a draft campaign to hold the enrolments');
  await check(
    t,
    'campaign_enrolments',
    `INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry, state, claimed_by, claimed_at)
     SELECT gen_random_uuid(), $1, '${c.body.data.campaign.id}', p.id, 'run', 1, 'running', $2, now() - interval '10 seconds'
     FROM people p WHERE p.workspace_id = $1 ORDER BY p.external_id RETURNING id`,
    `UPDATE campaign_enrolments SET state = 'done', claimed_by = NULL, claimed_at = NULL WHERE id = $1`,
    (q, ids) => renewLeases(q, ENROLMENT_JOBS, ids),
  );
});

t.test('the scheduled sends heartbeat beside their records being saved', async (t) => {
  await check(
    t,
    'messages',
    `INSERT INTO messages (id, workspace_id, person_id, external_id, status, provider, scheduled_at, claimed_by, claimed_at)
     SELECT gen_random_uuid(), $1, p.id, p.external_id, 'sending', 'sandbox', now(), $2, now() - interval '10 seconds'
     FROM people p WHERE p.workspace_id = $1 ORDER BY p.external_id RETURNING id`,
    `UPDATE messages SET status = 'sent', sent_at = now(), claimed_by = NULL, claimed_at = NULL WHERE id = $1`,
    (q, ids) => renewLeases(q, SCHEDULED_SEND_JOBS, ids),
  );
});

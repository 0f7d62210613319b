// The campaign executor's heartbeat (store/enrolments.ts refreshClaims) beside a page's move-on,
// which holds its enrolments' rows until the page's records commit: the heartbeat never waits
// for a row the move-on holds, so the two cannot deadlock. Waiting there, while holding rows the
// move-on locked next, is what a 250,000-person fan-out hit ("deadlock detected").
import t from 'tap';
import pg from 'pg';
import { newWorkspace, startServer, storeUrl } from '../helpers/server.js';
import { refreshClaims } from '../../src/store/enrolments.js';
import { INSTANCE_LOCKS } from '../../src/store/leases.js';
import { openPostgres } from '../../src/store/pg.js';

const s = await startServer();
t.teardown(() => s.stop());
const connect = async () => {
  const c = new pg.Client({ connectionString: storeUrl(s) });
  await c.connect();
  t.teardown(() => c.end());
  return c;
};
const [sql, mover] = [await connect(), await connect()];
// The executor's own kind of connection: a pool, of one here (so its backend is known).
const heartbeat = openPostgres(storeUrl(s), 1);
t.teardown(() => heartbeat.close());

t.test('a heartbeat skips the claims a move-on holds and refreshes the others at once', async (t) => {
  // The claims' holder is an instance whose lock is held (here): alive, so nothing releases them.
  const holder = 2_000_000;
  await sql.query('SELECT pg_advisory_lock($1, $2)', [INSTANCE_LOCKS, holder]);
  const ws = await newWorkspace(s, 'Claims');
  const c = await s.req('POST', '/campaigns', {
    token: ws.token,
    headers: { 'x-workspace-id': ws.id },
    body: { name: 'Held', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'n', type: 'push', title: 'Hi' }] } },
  });
  t.equal(c.status, 201, 'a draft campaign to hold the enrolments');
  await sql.query(`INSERT INTO people (id, workspace_id, external_id) SELECT gen_random_uuid(), $1, 'p' || i FROM generate_series(1, 2) AS i`, [ws.id]);
  const ids = (
    await sql.query<{ id: string }>(
      `INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry, state, claimed_by, claimed_at)
       SELECT gen_random_uuid(), $1, $2, p.id, 'run', 1, 'running', $3, now() - interval '10 seconds'
       FROM people p WHERE p.workspace_id = $1 ORDER BY p.external_id RETURNING id`,
      [ws.id, c.body.data.campaign.id, holder],
    )
  ).rows.map((r) => r.id);
  const [moving, other] = ids as [string, string];

  // A page's move-on, its transaction still open (the records not yet committed).
  await mover.query('BEGIN');
  await mover.query(`UPDATE campaign_enrolments SET state = 'done', claimed_by = NULL, claimed_at = NULL WHERE id = $1`, [moving]);
  const heartbeatPid = (await heartbeat.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  const waitsForALock = async () => {
    for (;;) {
      const r = await sql.query<{ wait_event_type: string | null }>('SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [heartbeatPid]);
      if (r.rows[0]?.wait_event_type === 'Lock') return 'waits for the move-on' as const;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const outcome = await Promise.race([refreshClaims(heartbeat, [moving, other]).then(() => 'done' as const), waitsForALock()]);
  await mover.query('COMMIT');
  t.equal(outcome, 'done', 'the heartbeat did not wait for the row the move-on holds');
  const rows = await sql.query<{ id: string; state: string; fresh: boolean }>(
    `SELECT id, state, claimed_at > now() - interval '5 seconds' AS fresh FROM campaign_enrolments WHERE id = ANY ($1::uuid[])`,
    [ids],
  );
  const byId = new Map(rows.rows.map((r) => [r.id, r]));
  t.same([byId.get(moving)?.state, byId.get(moving)?.fresh], ['done', null], 'the moved-on claim is left to its move-on');
  t.same([byId.get(other)?.state, byId.get(other)?.fresh], ['running', true], 'the other claim is refreshed');
});

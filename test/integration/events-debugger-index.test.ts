// The event debugger's query (store/events.ts latestEvents: a workspace's latest events of any
// type, newest first) reads an index in its order instead of sorting the workspace's events
// (migration 400). The store's events table is what it reads in both modes.
import t from 'tap';
import pg from 'pg';
import { startServer, storeUrl } from '../helpers/server.js';

const s = await startServer();
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

t.test('latestEvents walks events_by_workspace_time, no sort', async (t) => {
  await sql.query('BEGIN');
  try {
    // A fresh store is tiny: forbid the scans that suit tiny tables so the plan shows which index serves the order.
    await sql.query('SET LOCAL enable_seqscan = off');
    await sql.query('SET LOCAL enable_bitmapscan = off');
    const r = await sql.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN SELECT e.id, e.type, e.parameters, e.created_at, e.person_id, p.external_id FROM events e JOIN people p ON p.id = e.person_id
       WHERE e.workspace_id = $1 AND ($2::timestamptz IS NULL OR e.created_at < $2::timestamptz)
       ORDER BY e.created_at DESC, e.id DESC LIMIT $3`,
      ['00000000-0000-4000-8000-000000000000', null, 50],
    );
    const plan = r.rows.map((x) => x['QUERY PLAN']).join('\n');
    t.match(plan, /events_by_workspace_time/, plan);
    t.notMatch(plan, /Sort/, 'read in index order');
  } finally {
    await sql.query('ROLLBACK');
  }
});

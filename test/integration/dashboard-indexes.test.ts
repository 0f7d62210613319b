// The dashboard's campaign reads walk indexes instead of sorting or scanning (DECISIONS §14):
// a campaign's messages newest first (store/push-messages.ts campaignMessages, migration 410)
// and the event names a workspace has seen (store/events.ts eventNames, a skip scan along
// events_by_type).
import t from 'tap';
import pg from 'pg';
import { startServer, storeUrl } from '../helpers/server.js';

const s = await startServer();
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

const WS = '00000000-0000-4000-8000-000000000000';

/** The plan of `query`, with the scans that suit a fresh (tiny) store forbidden so the plan shows which index serves it. */
async function plan(query: string, params: unknown[]): Promise<string> {
  await sql.query('BEGIN');
  try {
    await sql.query('SET LOCAL enable_seqscan = off');
    await sql.query('SET LOCAL enable_bitmapscan = off');
    const r = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${query}`, params);
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  } finally {
    await sql.query('ROLLBACK');
  }
}

t.test("a campaign's messages walk push_messages_by_campaign_time, no sort", async (t) => {
  const p = await plan(
    `SELECT m.id FROM push_messages m WHERE m.workspace_id = $1 AND m.campaign_id = $2::text AND ($3::timestamptz IS NULL OR m.created_at < $3::timestamptz) ORDER BY m.created_at DESC, m.id DESC LIMIT $4`,
    [WS, WS, null, 50],
  );
  t.match(p, /push_messages_by_campaign_time/, p);
  t.notMatch(p, /Sort/, 'read in index order');
});

t.test('event names: one index probe per name along events_by_type', async (t) => {
  const p = await plan(
    `WITH RECURSIVE names AS (
       (SELECT type FROM events WHERE workspace_id = $1 ORDER BY type LIMIT 1)
       UNION ALL
       SELECT (SELECT e.type FROM events e WHERE e.workspace_id = $1 AND e.type > n.type ORDER BY e.type LIMIT 1) FROM names n WHERE n.type IS NOT NULL
     )
     SELECT n.type AS name, (SELECT e.created_at FROM events e WHERE e.workspace_id = $1 AND e.type = n.type ORDER BY e.created_at DESC LIMIT 1) AS last_seen_at
     FROM names n WHERE n.type IS NOT NULL LIMIT $2`,
    [WS, 100],
  );
  t.match(p, /events_by_type/, p);
  t.notMatch(p, /Sort|Seq Scan|HashAggregate/, 'no sort, scan or aggregate over the events');
});

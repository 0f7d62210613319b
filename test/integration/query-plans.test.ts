// The plans of the queries an index was added for: each reads its index rather than walking a
// workspace's rows. One server for all (a fresh store); the store's tables are what they read in
// both modes.
import t from 'tap';
import pg from 'pg';
import { newWorkspace, startServer, storeUrl } from '../helpers/server.js';
import { EVENT_NAMES, latestEventsQuery } from '../../src/store/events.js';
import { PERSON_BY_PHONE } from '../../src/store/people.js';
import { CLAIM_DUE } from '../../src/store/enrolments.js';

const WS = '00000000-0000-4000-8000-000000000000';

const s = await startServer();
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

/** The plan of `text`, inside a transaction rolled back after `setUp` and the check. */
async function planOf(text: string, params: unknown[], opts: { noScans?: boolean; setUp?: () => Promise<void> } = {}): Promise<string> {
  await sql.query('BEGIN');
  try {
    if (opts.noScans) {
      // A fresh store is tiny: forbid the scans that suit tiny tables so the plan shows which index serves the query.
      await sql.query('SET LOCAL enable_seqscan = off');
      await sql.query('SET LOCAL enable_bitmapscan = off');
    }
    await opts.setUp?.();
    const r = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
    return r.rows.map((x) => x['QUERY PLAN']).join('\n');
  } finally {
    await sql.query('ROLLBACK');
  }
}

t.test('the event debugger (store/events.ts latestEvents) walks events_by_workspace_time (migration 400), no sort, a page back included', async (t) => {
  for (const before of [null, { at: '2024-03-01T00:00:00.000Z', id: WS }]) {
    const { text, values } = latestEventsQuery(WS, 50, { before });
    const plan = await planOf(text, values, { noScans: true });
    t.match(plan, /events_by_workspace_time/, plan);
    t.notMatch(plan, /Sort/, 'read in index order');
    if (before) t.match(plan, /Index Cond: .*ROW\(created_at, id\) </, 'the page starts in the index, not by filtering what precedes it');
  }
});

t.test("an inbound SMS's person lookup (store/people.ts personByPhone) reads people_phone_digits (migration 204), not the workspace's people", async (t) => {
  const ws = await newWorkspace(s, 'Phones');
  const spellings = ['+447400012345', '447400012345', '07400012345', '7400012345'];
  // A workspace of 20,000 people with phones in several spellings, analysed: the plan is the one a real workspace gets.
  const setUp = async () => {
    await sql.query(
      `INSERT INTO people (id, workspace_id, external_id, phone, created_at)
       SELECT gen_random_uuid(), $1, 'p' || i, CASE i % 3 WHEN 0 THEN '+44 7400 ' || lpad(i::text, 6, '0') WHEN 1 THEN '(07400) ' || lpad(i::text, 6, '0') ELSE '+447400' || lpad(i::text, 6, '0') END,
              now() - make_interval(secs => i)
       FROM generate_series(1, 20000) AS i`,
      [ws.id],
    );
    await sql.query('ANALYZE people');
    const found = await sql.query(PERSON_BY_PHONE, [ws.id, spellings]);
    t.same(found.rows, [{ external_id: 'p12345' }], 'it finds the person, whatever the spelling stored');
  };
  const plan = await planOf(PERSON_BY_PHONE, [ws.id, spellings], { setUp });
  t.match(plan, /people_phone_digits/, plan);
  t.notMatch(plan, /Seq Scan|people_by_created/, "no walk through the workspace's people");
});

t.test("a Twilio status callback's message (messaging/provider-events.ts, by provider id) is found through messages_by_provider_id (migration 205)", async (t) => {
  // The predicate of the callback's update, which joins the batch's keys on it.
  const plan = await planOf(`SELECT m.id FROM push_messages m WHERE m.workspace_id = $1 AND m.channel IN ('email', 'sms') AND m.provider_id = $2`, ['00000000-0000-4000-8000-000000000000', 'SM123'], {
    noScans: true,
  });
  t.match(plan, /messages_by_provider_id/, plan);
});

t.test("a campaign's messages for the dashboard's live progress (store/push-messages.ts campaignMessages) walk push_messages_by_campaign_time (migration 410), no sort", async (t) => {
  const p = await planOf(
    `SELECT m.id FROM push_messages m WHERE m.workspace_id = $1 AND m.campaign_id = $2::text AND ($3::timestamptz IS NULL OR m.created_at < $3::timestamptz) ORDER BY m.created_at DESC, m.id DESC LIMIT $4`,
    [WS, WS, null, 50],
    { noScans: true },
  );
  t.match(p, /push_messages_by_campaign_time/, p);
  t.notMatch(p, /Sort/, 'read in index order');
});

t.test("the event names a workspace has seen (store/events.ts eventNames): one index probe per name along events_by_type", async (t) => {
  const p = await planOf(
    EVENT_NAMES,
    [WS, 100],
    { noScans: true },
  );
  t.match(p, /events_by_type/, p);
  t.notMatch(p, /Sort|Seq Scan|HashAggregate/, 'no sort, scan or aggregate over the events');
});

t.test("the executor's claim (store/enrolments.ts claimDue) is prepared: its generic plan still takes the first due enrolments along campaign_enrolments_due, no sort", async (t) => {
  const ws = await newWorkspace(s, 'Claims');
  const campaign = '00000000-0000-4000-8000-00000000c1a1';
  // A fan-out under way: 20,000 waiting enrolments, analysed. A generic plan knows neither the
  // workspace nor the LIMIT; with `id IN (…)` it hashed the claimed ids against a scan of every
  // waiting enrolment.
  const setUp = async () => {
    await sql.query(`INSERT INTO campaigns (id, workspace_id, name, status, trigger_type, trigger_config) VALUES ($1, $2, 'Fan-out', 'active', 'schedule', '{}')`, [campaign, ws.id]);
    await sql.query(
      `WITH p AS (INSERT INTO people (id, workspace_id, external_id) SELECT gen_random_uuid(), $1, 'c' || i FROM generate_series(1, 20000) AS i RETURNING id)
       INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry, due_at)
       SELECT gen_random_uuid(), $1, $2, p.id, 'run', 1, now() - interval '1 minute' FROM p`,
      [ws.id, campaign],
    );
    await sql.query('ANALYZE campaign_enrolments');
    await sql.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await sql.query(`PREPARE claim_plan AS ${CLAIM_DUE.text}`);
  };
  try {
    const plan = await planOf(`EXECUTE claim_plan('${ws.id}', 64, 1)`, [], { setUp });
    t.match(plan, /Index Scan using campaign_enrolments_due/, plan);
    t.notMatch(plan, /Sort|Seq Scan on campaign_enrolments/, 'the first 64 in due order, straight from the index');
  } finally {
    await sql.query('DEALLOCATE claim_plan').catch(() => {});
  }
});


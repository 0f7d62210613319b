// The plans of the queries an index was added for: each reads its index rather than walking a
// workspace's rows. One server for all (a fresh store); the store's tables are what they read in
// both modes.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { newWorkspace, storeUrl } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { EVENT_NAMES, latestEventsQuery } from '../../src/store/events.js';
import { PERSON_BY_PHONE } from '../../src/store/people.js';
import { ENROLMENT_JOBS, INSERT_ENROLMENTS } from '../../src/store/enrolments.js';
import { claimStatement } from '../../src/store/job-queue.js';
import { applyEvents } from '../../src/eventlog/apply-events.js';
import { LINKS, MESSAGES_SCANNED_MAX, TIMESERIES, exportPageQuery } from '../../src/store/campaign-analytics.js';
import { dailyQuery, funnelQuery } from '../../src/store/analytics.js';
import { dayRange } from '../../src/domain/analytics.js';

const WS = '00000000-0000-4000-8000-000000000000';

const s = await sharedServer();
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

/** The lines of a plan under `CTE name` (indented deeper than it). */
function cteOf(plan: string, name: string): string {
  const lines = plan.split('\n');
  const at = lines.findIndex((l) => l.trim() === `CTE ${name}`);
  if (at < 0) return '';
  const depth = lines[at]!.search(/\S/);
  const end = lines.findIndex((l, i) => i > at && l.search(/\S/) <= depth);
  return lines.slice(at + 1, end < 0 ? undefined : end).join('\n');
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

t.test("a Twilio status callback's message (channels/callbacks.ts, by provider id) is found through messages_by_provider_id (migration 205)", async (t) => {
  // The predicate of the select that locks the batch's messages.
  const plan = await planOf(`SELECT m.id FROM messages m WHERE m.workspace_id = $1 AND m.channel IN ('email', 'sms') AND m.provider_id = ANY($2::text[])`, ['00000000-0000-4000-8000-000000000000', ['SM123', 'SM456']], {
    noScans: true,
  });
  t.match(plan, /messages_by_provider_id/, plan);
});

t.test("a campaign's messages for the dashboard's live progress (store/messages.ts campaignMessages) walk messages_by_campaign_time (migration 410), no sort", async (t) => {
  const p = await planOf(
    `SELECT m.id FROM messages m WHERE m.workspace_id = $1 AND m.campaign_id = $2::text AND ($3::timestamptz IS NULL OR m.created_at < $3::timestamptz) ORDER BY m.created_at DESC, m.id DESC LIMIT $4`,
    [WS, WS, null, 50],
    { noScans: true },
  );
  t.match(p, /messages_by_campaign_time/, p);
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

/**
 * A live campaign of the workspace with new people, each with `each` enrolments (entries 1…) in
 * `state`, due a minute ago, under the run `run` (an SQL expression).
 */
async function campaignUnderWay(workspaceId: string, campaign: string, trigger: string, e: { people: number; each: number; run: string; state: string }): Promise<void> {
  await sql.query(`INSERT INTO campaigns (id, workspace_id, name, status, trigger_type, trigger_config) VALUES ($1, $2, 'Under way', 'active', $3, '{}')`, [campaign, workspaceId, trigger]);
  await sql.query(
    `WITH p AS (INSERT INTO people (id, workspace_id, external_id) SELECT gen_random_uuid(), $1, 'u' || i FROM generate_series(1, $3) AS i RETURNING id)
     INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry, state, due_at)
     SELECT gen_random_uuid(), $1, $2, p.id, ${e.run}, n, $5, now() - interval '1 minute' FROM p, generate_series(1, $4) AS n`,
    [workspaceId, campaign, e.people, e.each, e.state],
  );
}

// Before the claim's test below, which analyses campaign_enrolments: this one needs the table
// as a new Herald has it, never analysed.
t.test("an event's enrolment (store/enrolments.ts insertEnrolments) is prepared: its generic plan reads the people's entries along (campaign_id, person_id, entry), not every enrolment of the campaign", async (t) => {
  const ws = await newWorkspace(s, 'Entries');
  const campaign = '00000000-0000-4000-8000-00000000e1e1';
  // An event campaign under way on a table not analysed yet: 2,000 people with ten entries each.
  // Its generic plan read the people's entries (person_id = ANY) along (campaign_id, run_id,
  // person_id): every index entry of the campaign, for an event's few people (5 ms in a bench).
  const setUp = async () => {
    await campaignUnderWay(ws.id, campaign, 'event', { people: 2000, each: 10, run: `'event-' || gen_random_uuid()`, state: 'done' });
    await sql.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await sql.query(`PREPARE enrol_plan AS ${INSERT_ENROLMENTS.text}`);
  };
  try {
    const people = (await sql.query<{ id: string }>('SELECT id FROM people WHERE workspace_id = $1 LIMIT 3', [ws.id])).rows.map((r) => `'${r.id}'`);
    const uuids = (xs: string[]) => `ARRAY[${xs.join(', ')}]::uuid[]`;
    const plan = await planOf(
      `EXECUTE enrol_plan('${campaign}', '${ws.id}', ${uuids(people.map(() => 'gen_random_uuid()'))}, ${uuids(people)}, ARRAY['a', 'b', 'c'], ARRAY[1, 1, 1], ARRAY['{}'], NULL, NULL, NULL)`,
      [],
      { setUp },
    );
    t.match(plan, /Index (Only )?Scan Backward using campaign_enrolments_campaign_id_person_id_entry_key/, plan);
    t.notMatch(plan, /Seq Scan on campaign_enrolments|Bitmap Heap Scan on campaign_enrolments|Hash (Anti |Right Anti )?Join/, "nothing read beyond these people's entries");
    t.notMatch(plan, /Index Cond: \(\(campaign_id = \$1\) AND \(person_id = ANY/, 'no read of the key whose first columns are not (campaign_id, person_id)');
  } finally {
    await sql.query('DEALLOCATE enrol_plan').catch(() => {});
  }
});

t.test("a fan-out page's enrolment (store/enrolments.ts insertEnrolments, 2,000 people) on tables not analysed: each person and entry probed along its key, the candidates and those inserted grouped, not joined", async (t) => {
  const ws = await newWorkspace(s, 'Fan-out page');
  const campaign = '00000000-0000-4000-8000-00000000f0f0';
  const people = Array.from({ length: 2000 }, () => randomUUID());
  // A second run of a schedule campaign over people it enrolled before: the planner knows
  // neither table's contents. Its join of the candidates with those inserted was a nested loop
  // (4,000,000 comparisons a page), and its join with people hashed the workspace's people.
  const setUp = async () => {
    await sql.query(`INSERT INTO campaigns (id, workspace_id, name, status, trigger_type, trigger_config) VALUES ($1, $2, 'Fan-out', 'active', 'schedule', '{}')`, [campaign, ws.id]);
    await sql.query(
      `WITH p AS (INSERT INTO people (id, workspace_id, external_id) SELECT id, $2, id::text FROM unnest($3::uuid[]) AS id RETURNING id)
       INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry, state) SELECT gen_random_uuid(), $2, $1, p.id, 'run-1', 1, 'done' FROM p`,
      [campaign, ws.id, people],
    );
  };
  const plan = await planOf(
    INSERT_ENROLMENTS.text,
    [campaign, ws.id, people.map(() => randomUUID()), people, people.map(() => 'run-2'), people.map(() => 1), ['{}'], null, null, null],
    { setUp },
  );
  t.match(plan, /Index (Only )?Scan using people_\w+ on people p/, plan);
  // The per-person probes: once (this database being shared with the run's other files) the
  // planner took campaign_enrolments_by_time with the person as a filter; that index is gone.
  t.match(plan, /Index (Only )?Scan (Backward )?using campaign_enrolments_campaign_id_person_id_entry_key/, 'each person\'s entries along (campaign_id, person_id, entry)');
  t.notMatch(plan, /Hash Join|Merge Join|Join Filter|Seq Scan|Bitmap Heap Scan/, 'no join that reads beyond each row\'s own keys');
});

t.test("a Log group's apply (eventlog/apply-events.ts, 2,000 records of new people, both variants): no join between the records and their probes", async (t) => {
  const ws = await newWorkspace(s, 'Apply');
  // Records naming people by external_id, none of them stored yet: the first wave of a
  // track-batch load. Joining the records to their probes was planned as a nested loop
  // (28,000,000 comparisons and 10 s for a group of 5,300).
  const records = Array.from({ length: 2000 }, (_, i) => ({
    id: randomUUID(), workspace_id: ws.id, person_id: null, external_id: `apply-${i % 1500}`, type: 'bench_event', parameters: {},
    created_at: new Date().toISOString(), new_person_id: randomUUID(), message_id: i % 2 ? randomUUID() : null,
  }));
  for (const dedup of [false, true]) {
    const plan = await planOf(applyEvents(true, dedup).text, [JSON.stringify(records)]);
    for (const cte of ['found', 'created', 'resolved', 'counted']) {
      const part = cteOf(plan, cte);
      t.ok(part, `${dedup ? 'with' : 'without'} message ids: CTE ${cte} is in the plan`);
      t.notMatch(part, /Nested Loop|Hash Join|Merge Join/, `${dedup ? 'with' : 'without'} message ids, ${cte}: ${plan}`);
    }
  }
});

t.test("the executor's claim (store/job-queue.ts claimJobs of ENROLMENT_JOBS) is prepared: its generic plan still takes the first due enrolments along campaign_enrolments_due, no sort", async (t) => {
  const ws = await newWorkspace(s, 'Claims');
  const campaign = '00000000-0000-4000-8000-00000000c1a1';
  // A fan-out under way: 20,000 waiting enrolments, analysed. A generic plan knows neither the
  // workspace nor the LIMIT; with `id IN (…)` it hashed the claimed ids against a scan of every
  // waiting enrolment.
  const setUp = async () => {
    await campaignUnderWay(ws.id, campaign, 'schedule', { people: 20000, each: 1, run: `'run'`, state: 'waiting' });
    await sql.query('ANALYZE campaign_enrolments');
    await sql.query('SET LOCAL plan_cache_mode = force_generic_plan');
    await sql.query(`PREPARE claim_plan AS ${claimStatement(ENROLMENT_JOBS)}`);
  };
  try {
    const plan = await planOf(`EXECUTE claim_plan('${ws.id}', 64, 1)`, [], { setUp });
    t.match(plan, /Index Scan using campaign_enrolments_due/, plan);
    t.notMatch(plan, /Sort|Seq Scan on campaign_enrolments/, 'the first 64 in due order, straight from the index');
  } finally {
    await sql.query('DEALLOCATE claim_plan').catch(() => {});
  }
});


t.test("a campaign's analytics (store/campaign-analytics.ts: timeseries, links, a page of the CSV export) walk messages_by_campaign_time, in its order, a bounded number of messages", async (t) => {
  const day = ['2024-03-01T00:00:00.000Z', '2024-03-02T00:00:00.000Z'];
  const reads: [string, string, unknown[]][] = [
    ['timeseries', TIMESERIES, [WS, WS, ...day, 'hour', MESSAGES_SCANNED_MAX]],
    ['links', LINKS, [WS, WS, MESSAGES_SCANNED_MAX, 20]],
    ...[null, { at: day[0]!, id: WS }].map((before): [string, string, unknown[]] => {
      const { text, values } = exportPageQuery(WS, WS, before, 10_000);
      return [`export${before ? ', a page back' : ''}`, text, values];
    }),
  ];
  for (const [what, text, params] of reads) {
    const p = await planOf(text, params, { noScans: true });
    t.match(p, /messages_by_campaign_time/, `${what}: ${p}`);
    t.notMatch(p, /Seq Scan on messages|Sort Key: m\.created_at/, `${what}: no walk through the table, no sort of the messages`);
    t.match(p, /Limit/, `${what}: stops after its bound`);
  }
});

// On an empty store the planner may take events_by_workspace_time for one type (the costs tie);
// either way the scan is bounded by the workspace and the days in the index.
t.test('the analytics reads (store/analytics.ts) range-scan events and analytics_events_by_type (migration 570) within the days', async (t) => {
  const range = dayRange('2025-03-01', '2025-03-30');
  for (const { text, values } of [dailyQuery(WS, { event: 'signed_up', range }), funnelQuery(WS, { steps: ['signed_up', 'purchase_completed', 'subscription_started'], range, window: '7d', windowMs: 7 * 86_400_000 })]) {
    const plan = await planOf(text, values, { noScans: true });
    t.match(plan, /Index (Only )?Scan (Backward )?using events_by_(type|workspace_time) on events/, plan);
    t.match(plan, /Index (Only )?Scan (Backward )?using analytics_events_by_type on analytics_events/, plan);
    t.match(plan, /Index Cond: .*created_at >=/, 'the days bound the scan in the index');
  }
});

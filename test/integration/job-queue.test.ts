// The one job mechanism (store/job-queue.ts) on a real store: the shard inside its statements
// agrees with the actors' own, and a claim not completed becomes what its kind says (waiting
// again after the back-off, or failed). The jobs here are held by a holder whose lock this test
// holds, or belong to draft campaigns, so the server's own workers leave them alone.
import t from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { newWorkspace, storeUrl } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { ENROLMENT_JOBS, SHARED_ENROLMENT_JOBS } from '../../src/store/enrolments.js';
import { SCHEDULED_SEND_JOBS } from '../../src/store/messages.js';
import { endLapsed, giveBack, workspacesWaiting } from '../../src/store/job-queue.js';
import { INSTANCE_LOCKS } from '../../src/store/leases.js';
import { shardOf } from '../../src/util/shard.js';
import { openPostgres } from '../../src/store/pg.js';

const s = await sharedServer();
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());
// The store functions' own kind of connection.
const db = openPostgres(storeUrl(s), 1);
t.teardown(() => db.close());
// A holder that lives (its lock held here) and one that is gone (nobody holds its lock).
const LIVE = 3_000_000;
const GONE = 3_000_001;
await sql.query('SELECT pg_advisory_lock($1, $2)', [INSTANCE_LOCKS, LIVE]);

async function draftCampaign(ws: { id: string; token: string }): Promise<string> {
  const c = await s.req('POST', '/campaigns', {
    token: ws.token,
    headers: { 'x-workspace-id': ws.id },
    body: { name: 'Held', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'n', type: 'push', title: 'Hi' }] } },
  });
  t.equal(c.status, 201, 'a draft campaign holds the enrolments');
  return c.body.data.campaign.id as string;
}

/** `n` enrolments of a draft campaign of a new workspace, in `state`, claimed by `holder` `claims` times, due at `due` (long past). */
async function enrolments(n: number, o: { state: 'waiting' | 'running'; holder?: number; claims?: number; due?: string }): Promise<{ ws: string; ids: string[] }> {
  const ws = await newWorkspace(s, 'Jobs');
  const campaign = await draftCampaign(ws);
  await sql.query(`INSERT INTO people (id, workspace_id, external_id) SELECT gen_random_uuid(), $1, 'p' || i FROM generate_series(1, $2) AS i`, [ws.id, n]);
  const r = await sql.query<{ id: string }>(
    `INSERT INTO campaign_enrolments (id, workspace_id, campaign_id, person_id, run_id, entry, state, due_at, claimed_by, claimed_at, claims)
     SELECT gen_random_uuid(), $1, $2, p.id, 'run', 1, $3, $6, $4, CASE WHEN $4::int IS NULL THEN NULL ELSE now() END, $5
     FROM people p WHERE p.workspace_id = $1 ORDER BY p.external_id RETURNING id`,
    [ws.id, campaign, o.state, o.holder ?? null, o.claims ?? 0, o.due ?? '2026-01-01T00:00:00Z'],
  );
  return { ws: ws.id, ids: r.rows.map((x) => x.id) };
}

t.test("herald_shard (migration 420) is util/shard.ts shardOf: a claim's workspaces are its actor's", async (t) => {
  const keys = Array.from({ length: 300 }, () => randomUUID());
  for (const n of [1, 2, 3, 7]) {
    const r = await sql.query<{ k: string; shard: number }>('SELECT k, herald_shard(k, $2) AS shard FROM unnest($1::text[]) AS k', [keys, n]);
    const differ = r.rows.filter((x) => x.shard !== shardOf(x.k, n));
    t.same(differ, [], `the same shard of ${keys.length} ids among ${n}`);
  }
});

t.test("an actor's look names only its shard's workspaces", async (t) => {
  const a = await enrolments(1, { state: 'waiting' });
  const b = await enrolments(1, { state: 'waiting' });
  const mine = [a.ws, b.ws];
  for (const count of [1, 2, 3]) {
    for (let index = 0; index < count; index++) {
      const seen = (await workspacesWaiting(db, ENROLMENT_JOBS, { index, count })).filter((ws) => mine.includes(ws));
      t.same(seen.sort(), mine.filter((ws) => shardOf(ws, count) === index).sort(), `actor ${index} of ${count}`);
    }
  }
});

t.test('a look names the workspaces with jobs to claim now: not one whose jobs wait for later; for shared steps, not one with a cap', async (t) => {
  const due = await enrolments(1, { state: 'waiting' });
  const later = await enrolments(1, { state: 'waiting', due: new Date(Date.now() + 3_600_000).toISOString() });
  const capped = await enrolments(1, { state: 'waiting' });
  await sql.query(`UPDATE workspaces SET settings = jsonb_set(settings, '{send_policy}', '{"max_pushes_per_day": 3}') WHERE id = $1`, [capped.ws]);
  const mine = [due.ws, later.ws, capped.ws];
  const own = (await workspacesWaiting(db, ENROLMENT_JOBS, { index: 0, count: 1 })).filter((ws) => mine.includes(ws));
  t.same(own.sort(), [due.ws, capped.ws].sort(), 'the owner: every workspace with a due enrolment');
  // Each workspace as another actor sees it: one of two actors, not its owner.
  const shared = [];
  for (const ws of mine) if ((await workspacesWaiting(db, SHARED_ENROLMENT_JOBS, { index: 1 - shardOf(ws, 2), count: 2 }, 'others')).includes(ws)) shared.push(ws);
  t.same(shared, [due.ws], 'another actor: only the workspace without a cap');
});

t.test('an enrolment given back waits again: when it was due after its first claim, then 1 s, 2 s … at most a minute from now', async (t) => {
  const { ids } = await enrolments(4, { state: 'running', holder: LIVE });
  const claims = [1, 2, 3, 12];
  for (const [i, id] of ids.entries()) await sql.query('UPDATE campaign_enrolments SET claims = $2 WHERE id = $1', [id, claims[i]]);
  await giveBack(db, ENROLMENT_JOBS, ids);
  const r = await sql.query<{ id: string; state: string; claimed_by: number | null; wait: number | null; kept: boolean }>(
    `SELECT id, state, claimed_by, round(extract(epoch FROM due_at - now()))::int AS wait, due_at = '2026-01-01T00:00:00Z' AS kept FROM campaign_enrolments WHERE id = ANY ($1::uuid[])`,
    [ids],
  );
  const byId = new Map(r.rows.map((x) => [x.id, x]));
  t.ok(r.rows.every((x) => x.state === 'waiting' && x.claimed_by === null), 'every one waits again, unclaimed');
  t.equal(byId.get(ids[0]!)!.kept, true, 'after its first claim, due when it was due');
  t.same(ids.slice(1).map((id) => byId.get(id)!.wait), [1, 2, 60], 'after more claims: 1 s, 2 s, and a minute at most');
});

t.test('a lapsed claim ends as its kind says: an enrolment waits again, a scheduled send is failed, not sent again; a live holder keeps its claims', async (t) => {
  const gone = await enrolments(2, { state: 'running', holder: GONE, claims: 1 });
  const live = await enrolments(1, { state: 'running', holder: LIVE, claims: 1 });
  const sends = await sql.query<{ id: string }>(
    `INSERT INTO messages (id, workspace_id, person_id, external_id, status, provider, scheduled_at, claimed_by, claimed_at)
     SELECT gen_random_uuid(), p.workspace_id, p.id, p.external_id, 'sending', 'sandbox', now(), $2, now() FROM people p WHERE p.workspace_id = $1 RETURNING id`,
    [gone.ws, GONE],
  );
  await endLapsed(db, ENROLMENT_JOBS);
  await endLapsed(db, SCHEDULED_SEND_JOBS);
  const e = await sql.query<{ id: string; state: string; claimed_by: number | null }>('SELECT id, state, claimed_by FROM campaign_enrolments WHERE id = ANY ($1::uuid[])', [[...gone.ids, ...live.ids]]);
  const state = new Map(e.rows.map((x) => [x.id, `${x.state}/${x.claimed_by ?? '-'}`]));
  t.same(gone.ids.map((id) => state.get(id)), ['waiting/-', 'waiting/-'], "the gone holder's enrolments wait again");
  t.same(live.ids.map((id) => state.get(id)), [`running/${LIVE}`], "the live holder's stays claimed");
  const m = await sql.query<{ status: string; error: string | null; claimed_by: number | null }>('SELECT status, error, claimed_by FROM messages WHERE id = ANY ($1::uuid[])', [sends.rows.map((x) => x.id)]);
  t.equal(m.rowCount, 2);
  t.ok(m.rows.every((x) => x.status === 'failed' && /Interrupted while sending/.test(x.error ?? '') && x.claimed_by === null), `the scheduled sends are failed (${JSON.stringify(m.rows)})`);
});

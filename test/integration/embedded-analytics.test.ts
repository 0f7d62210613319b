// Without ClickHouse the store is the analytics store (README, Routes: a person's delete removes
// their events, but not their analytics copies), each event written once:
//  - a living person's events are in `events` only, not copied to `analytics_events`;
//  - a delete moves the person's events to `analytics_events` (with their person and
//    external id), and the view `embedded_analytics_events` shows every event exactly once
//    before and after;
//  - an event applied after its person was deleted goes to `analytics_events`, not lost.
// With CLICKHOUSE_URL, ClickHouse keeps the copies (clickhouse.test.ts) and the store keeps none.
import t from 'tap';
import pg from 'pg';
import { eventually, storeUrl, uniqueUser, workspaceWithKeys } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { storeLog } from '../../src/eventlog/event-log.js';
import { openPostgres } from '../../src/store/pg.js';
import { newId } from '../../src/ids.js';

const enc = encodeURIComponent;
const inStore = !process.env.CLICKHOUSE_URL;

const srv = await sharedServer();
const sql = new pg.Client({ connectionString: storeUrl(srv) });
await sql.connect();
t.teardown(() => sql.end());

const ids = async (table: string, wsId: string) =>
  (await sql.query<{ id: string }>(`SELECT id::text FROM ${table} WHERE workspace_id = $1 ORDER BY id`, [wsId])).rows.map((r) => r.id);

const sorted = (xs: string[]) => [...xs].sort();

t.test('a delete keeps the person’s events in the analytics store, each event stored once', async (t) => {
  const k = await workspaceWithKeys(srv, { all: ['events:write', 'events:read', 'people:delete'] }, 'Embedded analytics');
  const [gone, kept] = [uniqueUser('an-gone'), uniqueUser('an-kept')];
  const tracked: Record<string, string[]> = { [gone]: [], [kept]: [] };
  let goneId = '';
  for (const [user, n] of [[gone, 3], [kept, 2]] as const) {
    for (let i = 0; i < n; i++) {
      const r = await srv.req('POST', '/track', { token: k.all, body: { event: 'an_evt', external_id: user, parameters: { i } } });
      t.equal(r.status, 201, r.text.slice(0, 200));
      tracked[user]!.push(r.body.data.event_id);
      if (user === gone) goneId = r.body.data.person_id;
    }
  }
  const all = sorted([...tracked[gone]!, ...tracked[kept]!]);
  // On JetStream the store sink writes them a moment after their 201.
  t.ok(await eventually(async () => (await ids('events', k.ws.id)).length === all.length, 30_000), 'every event is in the store');
  if (inStore) {
    t.same(await ids('analytics_events', k.ws.id), [], 'the living’s events are not copied');
    t.same(await ids('embedded_analytics_events', k.ws.id), all, 'the view shows every event once');
  }

  const del = await srv.req('DELETE', `/people/${enc(gone)}`, { token: k.all });
  t.equal(del.status, 200, del.text);
  t.equal((await srv.req('GET', `/people/${enc(gone)}/events`, { token: k.all })).status, 404, 'the deleted person’s events leave the reads');
  t.same(await ids('events', k.ws.id), sorted(tracked[kept]!), 'events holds the living’s only');
  if (!inStore) {
    t.same(await ids('analytics_events', k.ws.id), [], 'with ClickHouse the store keeps no copy');
    return;
  }
  t.same(await ids('analytics_events', k.ws.id), sorted(tracked[gone]!), 'the deleted person’s events moved to analytics_events');
  const rows = (await sql.query('SELECT DISTINCT person_id::text, external_id FROM analytics_events WHERE workspace_id = $1', [k.ws.id])).rows;
  t.same(rows, [{ person_id: goneId, external_id: gone }], 'with their person and external id');
  t.same(await ids('embedded_analytics_events', k.ws.id), all, 'the view still shows every event once');
});

t.test('an event applied after its person was deleted goes to analytics_events', { skip: !inStore && 'the store is not the analytics store with CLICKHOUSE_URL' }, async (t) => {
  const k = await workspaceWithKeys(srv, { all: ['events:write', 'people:delete'] }, 'Embedded analytics late');
  const user = uniqueUser('an-late');
  const db = openPostgres(storeUrl(srv), 1);
  const log = storeLog(db);
  t.teardown(async () => {
    await log.close();
    await db.close();
  });
  const event = () => ({ id: newId(), workspace_id: k.ws.id, external_id: user, type: 'an_late', parameters: {}, created_at: new Date().toISOString() });
  // This Log's cache (this process's) learns the person, then the server deletes them: the
  // next append names the person by the id it cached, as an actor's append racing the delete.
  const [first] = await log.appendEvents([event()]);
  t.equal(first!.personCreated, true);
  t.equal((await srv.req('DELETE', `/people/${enc(user)}`, { token: k.all })).status, 200);
  const [late] = await log.appendEvents([event()]);
  t.equal(late!.record.person_id, first!.record.person_id, 'appended naming the deleted person');
  t.same(await ids('events', k.ws.id), [], 'not in events');
  t.same(await ids('analytics_events', k.ws.id), sorted([first!.record.id, late!.record.id]), 'both kept in analytics_events');
});

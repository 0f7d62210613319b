// The store's Log finds or creates the people its events name, in the statement that applies
// them (eventlog/apply-events.ts), driven directly over a real server's database:
//  - unknown people are created with their events, `personCreated` on exactly the first event
//    of each, and found (not created again) by the next append;
//  - a person another transaction created after the statement's snapshot (an identify
//    committing meanwhile) is the events' person, not a second one, and not an error;
//  - an append PostgreSQL refuses creates no one.
import t from 'tap';
import pg from 'pg';
import { storeUrl, uniqueUser, workspaceWithKeys } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { storeLog, type NewEvent } from '../../src/eventlog/event-log.js';
import { openPostgres } from '../../src/store/pg.js';
import { DomainError } from '../../src/domain/errors.js';
import { newId } from '../../src/ids.js';
import { setLogLevel } from '../../src/logger.js';

setLogLevel('error'); // the refused append below is logged as a warning
const enc = encodeURIComponent;

const srv = await sharedServer();
const db = openPostgres(storeUrl(srv), 2);
const log = storeLog(db);
t.teardown(async () => {
  await log.close();
  await db.close();
});

const setup = () => workspaceWithKeys(srv, { all: ['people:read', 'events:read'] }, 'Store Log people');
const event = (ws: string, user: string, over: Partial<NewEvent> = {}): NewEvent => ({
  id: newId(),
  workspace_id: ws,
  external_id: user,
  type: 'direct',
  parameters: {},
  created_at: new Date().toISOString(),
  ...over,
});
const personOf = async (key: string, user: string) => srv.req('GET', `/people/${enc(user)}`, { token: key });

t.test('unknown people are created with their events; personCreated on the first event of each', async (t) => {
  const k = await setup();
  const [a, b] = [uniqueUser('new-a'), uniqueUser('new-b')];
  const appended = await log.appendEvents([event(k.ws.id, a), event(k.ws.id, b), event(k.ws.id, a)]);
  t.same(appended.map((x) => x.personCreated), [true, true, false], 'created once per person, on its first event');
  t.equal(appended[0]!.record.person_id, appended[2]!.record.person_id, 'one person for both of a’s events');
  t.not(appended[0]!.record.person_id, appended[1]!.record.person_id);
  for (const [user, x] of [[a, appended[0]!], [b, appended[1]!]] as const) {
    const p = await personOf(k.all, user);
    t.equal(p.body?.person?.id, x.record.person_id, `${user} exists with the returned id`);
  }
  const events = await srv.req('GET', `/people/${enc(a)}/events`, { token: k.all });
  t.same(events.body?.events?.map((e: { id: string }) => e.id).sort(), [appended[0]!.record.id, appended[2]!.record.id].sort(), 'a’s events are readable at once');

  // Found the next time, from the store (a second Log has an empty cache... this one has them cached: both say the same).
  const again = await log.appendEvents([event(k.ws.id, b)]);
  t.same(again.map((x) => [x.record.person_id, x.personCreated]), [[appended[1]!.record.person_id, false]], 'known now: not created again');
});

t.test('a person created by another transaction after the statement began is the events’ person', async (t) => {
  const k = await setup();
  const user = uniqueUser('raced');
  const theirs = newId();
  const other = new pg.Client({ connectionString: storeUrl(srv) });
  await other.connect();
  t.teardown(() => other.end());
  // Inserted and not yet committed: the append's probe cannot see it, its insert must wait for it.
  await other.query('BEGIN');
  await other.query('INSERT INTO people (id, workspace_id, external_id) VALUES ($1, $2, $3)', [theirs, k.ws.id, user]);
  let settled = false;
  const appending = log.appendEvents([event(k.ws.id, user)]).finally(() => (settled = true));
  await new Promise((r) => setTimeout(r, 500));
  t.notOk(settled, 'the append waits for the other transaction');
  await other.query('COMMIT');
  const [x] = await appending;
  t.equal(x!.record.person_id, theirs, 'the other transaction’s person');
  t.equal(x!.personCreated, false, 'not created by this append');
  const count = await other.query('SELECT count(*)::int AS n FROM people WHERE workspace_id = $1 AND external_id = $2', [k.ws.id, user]);
  t.equal(count.rows[0].n, 1, 'one person');
  const events = await srv.req('GET', `/people/${enc(user)}/events`, { token: k.all });
  t.same(events.body?.events?.map((e: { id: string }) => e.id), [x!.record.id], 'the event is theirs, readable');
});

t.test('an append PostgreSQL refuses creates no one', async (t) => {
  const k = await setup();
  const [fine, bad] = [uniqueUser('refused-fine'), uniqueUser('refused-bad')];
  const err = await log.appendEvents([event(k.ws.id, fine), event(k.ws.id, bad, { parameters: { k: 'x\u0000y' } })]).catch((e: unknown) => e);
  t.ok(err instanceof DomainError && err.code === 'VALIDATION_ERROR', 'refused: 400');
  t.equal((await personOf(k.all, fine)).status, 404, 'the other event’s new person was not created either');
  t.equal((await personOf(k.all, bad)).status, 404, 'nor the refused event’s');
});

// A prepared statement's cached plan is made again every few seconds (store/pg.ts): a plan
// made while a table was nearly empty would keep scanning the whole table after it has grown,
// for as long as the connection lives; past the interval the connection discards its plans,
// and the statement is planned again on the table's present size. Driven over a real server's
// database, on a table of the test's own (autovacuum off, so no ANALYZE replans it meanwhile).
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { storeUrl } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { openPostgres } from '../../src/store/pg.js';
import { prepared } from '../../src/store/db.js';

const srv = await sharedServer();

const table = `plan_probe_${randomBytes(4).toString('hex')}`;
// Long enough for the first steps to run within one interval, short enough to wait out.
const REPLAN_MS = 5000;
// One connection, so every statement runs on the one whose plans are looked at.
const db = openPostgres(storeUrl(srv), 1, REPLAN_MS);
t.teardown(async () => {
  await db.query(`DROP TABLE IF EXISTS ${table}`);
  await db.close();
});

// The shape of identify's update: rows picked by id from an array a subquery builds, from a
// table of wide rows (as people's are: few rows a page, so a small table is cheap to read whole).
const probe = prepared(`plan-probe-${table}`, `SELECT v FROM ${table} WHERE id = ANY (ARRAY(SELECT generate_series(1, 3)))`);
/** The plan the connection's cached statement runs with now (EXPLAIN EXECUTE of the protocol-level statement). */
const planOf = async () => {
  await db.query(probe); // prepared on the connection the first time; planned again after a discard
  const r = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN EXECUTE "${probe.name}"`);
  return r.rows.map((x) => x['QUERY PLAN']).join('\n');
};

t.test('a plan made on a small table is made again on the grown table', async (t) => {
  await db.query(`CREATE TABLE ${table} (id int PRIMARY KEY, v int NOT NULL, pad char(1000) NOT NULL DEFAULT '') WITH (autovacuum_enabled = false)`);
  await db.query(`INSERT INTO ${table} SELECT g, g FROM generate_series(1, 5) g`);
  t.match(await planOf(), /Seq Scan/, 'five rows: the whole table is read');

  await db.query(`INSERT INTO ${table} SELECT g, g FROM generate_series(6, 20000) g`);
  t.match(await planOf(), /Seq Scan/, 'grown, within the interval: the cached plan still reads all 20,000 rows');

  await new Promise((r) => setTimeout(r, REPLAN_MS + 500));
  const fresh = await planOf();
  t.notMatch(fresh, /Seq Scan/, 'past the interval, planned again on the present size');
  t.match(fresh, /Index/, 'the three rows are found through the primary key');
  const rows = await db.query<{ v: number }>(probe);
  t.same(rows.rows.map((r) => r.v).sort(), [1, 2, 3]);
});

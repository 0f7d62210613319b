// An inbound SMS finds its person by number (handlers/provider-callbacks.ts → store/people.ts
// personByPhone): the phone with its punctuation removed, compared to the number's spellings,
// read through the expression index of migration 204 rather than a walk through the workspace's
// people (before it, the plan read every person of the workspace and filtered).
import t from 'tap';
import pg from 'pg';
import { newWorkspace, startServer, storeUrl } from '../helpers/server.js';
import { PERSON_BY_PHONE } from '../../src/store/people.js';

const s = await startServer();
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

t.test('the inbound SMS person lookup reads people_phone_digits, not the workspace\'s people', async (t) => {
  const ws = await newWorkspace(s, 'Phones');
  await sql.query('BEGIN');
  try {
    // A workspace of 20,000 people with phones in several spellings, analysed: the plan is the one a real workspace gets.
    await sql.query(
      `INSERT INTO people (id, workspace_id, external_id, phone, created_at)
       SELECT gen_random_uuid(), $1, 'p' || i, CASE i % 3 WHEN 0 THEN '+44 7400 ' || lpad(i::text, 6, '0') WHEN 1 THEN '(07400) ' || lpad(i::text, 6, '0') ELSE '+447400' || lpad(i::text, 6, '0') END,
              now() - make_interval(secs => i)
       FROM generate_series(1, 20000) AS i`,
      [ws.id],
    );
    await sql.query('ANALYZE people');
    const r = await sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${PERSON_BY_PHONE}`, [ws.id, ['+447400012345', '447400012345', '07400012345', '7400012345']]);
    const plan = r.rows.map((x) => x['QUERY PLAN']).join('\n');
    t.match(plan, /people_phone_digits/, plan);
    t.notMatch(plan, /Seq Scan|people_by_created/, 'no walk through the workspace\'s people');
    const found = await sql.query(PERSON_BY_PHONE, [ws.id, ['+447400012345', '447400012345', '07400012345', '7400012345']]);
    t.same(found.rows, [{ external_id: 'p12345' }], 'and it finds the person, whatever the spelling stored');
  } finally {
    await sql.query('ROLLBACK');
  }
});

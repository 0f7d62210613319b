// The campaign counters (migration 441, store/channel-stats.ts) against a count of the messages
// themselves: kept by the statements that insert, update and delete messages, from several
// database sessions at once, and unchanged by the stats read's fold of the sessions' rows.
import t from 'tap';
import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { storeUrl, newWorkspace } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { channelStats } from '../../src/store/channel-stats.js';
import type { Prepared, Queryable } from '../../src/store/db.js';

const s = await sharedServer();
const sessions = await Promise.all(
  Array.from({ length: 3 }, async () => {
    const c = new pg.Client({ connectionString: storeUrl(s) });
    await c.connect();
    return c;
  }),
);
t.teardown(() => Promise.all(sessions.map((c) => c.end())));
const [sql] = sessions as [pg.Client];
const queryable: Queryable = {
  async query<T>(text: string | Prepared, params?: unknown[]) {
    const r = await sql.query(typeof text === 'string' ? text : text.text, params);
    return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
  },
  exec: async (text) => void (await sql.query(text)),
};

/** The counters as the stats read them (without by_channel), and as a count over the messages. */
async function both(ws: string, campaign: string) {
  const { by_channel: _, ...counted } = await channelStats(queryable, ws, campaign);
  const r = await sql.query(
    `SELECT count(*) FILTER (WHERE status IN ('sent', 'delivered', 'bounced', 'complained'))::int AS sent,
            count(*) FILTER (WHERE status = 'skipped')::int AS skipped, count(*) FILTER (WHERE status = 'policy_suppressed')::int AS policy_suppressed,
            count(*) FILTER (WHERE status = 'failed')::int AS failed, count(*) FILTER (WHERE status IN ('delivered', 'complained'))::int AS delivered,
            count(*) FILTER (WHERE status = 'bounced')::int AS bounced, count(*) FILTER (WHERE status = 'complained')::int AS complained,
            count(*) FILTER (WHERE events @> '[{"type":"opened"}]')::int AS opened, count(*) FILTER (WHERE events @> '[{"type":"clicked"}]')::int AS clicked
     FROM messages WHERE workspace_id = $1 AND campaign_id = $2 AND NOT COALESCE(tags @> '["test"]'::jsonb, false)`,
    [ws, campaign],
  );
  return { counted, scanned: r.rows[0] };
}

t.test('inserts, updates and deletes from three sessions keep the counters equal to a count of the messages; the fold keeps them', async (t) => {
  const ws = (await newWorkspace(s, 'Counters')).id;
  const campaign = randomUUID();
  const people = Array.from({ length: 30 }, () => randomUUID());
  await sql.query(`INSERT INTO people (id, workspace_id, external_id) SELECT id, $1, id::text FROM unnest($2::uuid[]) AS id`, [ws, people]);
  // Each session writes its share of every status and channel, test sends among them.
  await Promise.all(
    sessions.map((c, k) =>
      c.query(
        `INSERT INTO messages (id, workspace_id, person_id, external_id, status, provider, campaign_id, channel, tags)
         SELECT gen_random_uuid(), $1, p, 'x', st, 'sandbox', $2, ch, CASE WHEN i % 4 = 0 THEN '["test"]'::jsonb END
         FROM unnest($3::uuid[]) WITH ORDINALITY AS x(p, i), unnest(ARRAY['sending', 'sent', 'failed', 'skipped']) AS st, unnest(ARRAY['push', 'email']) AS ch
         WHERE i % 3 = $4`,
        [ws, campaign, people, k],
      ),
    ),
  );
  let r = await both(ws, campaign);
  t.same(r.counted, r.scanned, 'after the inserts');
  t.ok(r.counted.sent > 0 && r.counted.failed > 0 && r.counted.skipped > 0, JSON.stringify(r.counted));
  // The outcomes, callbacks' statuses and events, from different sessions.
  await sessions[0]!.query(`UPDATE messages SET status = 'sent' WHERE campaign_id = $1 AND status = 'sending' AND channel = 'push'`, [campaign]);
  await sessions[1]!.query(`UPDATE messages SET status = 'delivered', events = '[{"type":"opened"},{"type":"clicked"}]' WHERE campaign_id = $1 AND status = 'sending' AND channel = 'email'`, [campaign]);
  await sessions[2]!.query(`UPDATE messages SET status = 'complained' WHERE campaign_id = $1 AND ctid IN (SELECT ctid FROM messages WHERE campaign_id = $1 AND status = 'delivered' LIMIT 3)`, [campaign]);
  await sessions[0]!.query(`UPDATE messages SET events = events || '[{"type":"opened"}]' WHERE campaign_id = $1 AND status = 'sent' AND channel = 'email'`, [campaign]);
  r = await both(ws, campaign);
  t.same(r.counted, r.scanned, 'after the updates');
  t.ok(r.counted.opened > 0 && r.counted.clicked > 0 && r.counted.complained > 0, JSON.stringify(r.counted));
  // A person's delete cascades to their messages.
  await sessions[1]!.query('DELETE FROM people WHERE id = $1', [people[4]]);
  r = await both(ws, campaign);
  t.same(r.counted, r.scanned, "after a person's delete");

  // Rows of many sessions (as the pool's sessions come and go over a campaign's life): the read folds them into one per status.
  const before = r.counted;
  for (const person of people) {
    const c = new pg.Client({ connectionString: storeUrl(s) });
    await c.connect();
    await c.query(`UPDATE messages SET status = 'skipped' WHERE campaign_id = $1 AND status = 'failed' AND person_id = $2`, [campaign, person]);
    await c.end();
  }
  const rows = async () => (await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM message_counters WHERE campaign_id = $1', [campaign])).rows[0]!.n;
  t.ok((await rows()) > 64, 'many sessions wrote');
  r = await both(ws, campaign);
  t.same(r.counted, r.scanned, 'the read before the fold');
  t.same({ ...r.counted, failed: 0, skipped: 0 }, { ...before, failed: 0, skipped: 0 });
  t.ok((await rows()) <= 12, 'folded: a row per channel and status');
  t.same((await both(ws, campaign)).counted, r.counted, 'the same after the fold');
});

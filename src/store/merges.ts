// Anonymous merge (README, Request bodies): the person whose external_id equals the anonymousId is
// folded into the identified person after the response: devices (and, with event storage,
// events), list memberships and topic choices move over, traits merge with the identified person's values winning, the anonymous
// person is deleted. Pending merges are stored rows, so a restart resumes them.
import type { Db, Queryable } from './db.js';
import { newId } from '../ids.js';
import { DEDICATED_FIELDS } from '../domain/traits.js';
import { logger } from '../logger.js';
import { personIds } from './person-cache.js';

export async function scheduleMerge(q: Queryable, workspaceId: string, personId: string, anonymousId: string): Promise<string> {
  const id = newId();
  await q.query('INSERT INTO pending_merges (id, workspace_id, person_id, anonymous_id) VALUES ($1, $2, $3, $4)', [id, workspaceId, personId, anonymousId]);
  return id;
}

export async function runMerge(db: Db, mergeId: string): Promise<void> {
  await db.tx(async (q) => {
    const m = (await q.query<{ workspace_id: string; person_id: string; anonymous_id: string }>(
      'DELETE FROM pending_merges WHERE id = $1 RETURNING workspace_id, person_id, anonymous_id', [mergeId],
    )).rows[0];
    if (!m) return; // already merged
    const anon = (await q.query<{ id: string }>(
      'SELECT id FROM people WHERE workspace_id = $1 AND external_id = $2 AND id <> $3 FOR UPDATE', [m.workspace_id, m.anonymous_id, m.person_id],
    )).rows[0];
    if (!anon) return;
    await q.query('UPDATE devices SET person_id = $2, updated_at = now() WHERE person_id = $1', [anon.id, m.person_id]);
    await q.query('UPDATE events SET person_id = $2 WHERE person_id = $1', [anon.id, m.person_id]);
    await q.query(
      `INSERT INTO person_event_counts (person_id, type, count, first_at, last_at, first_event_id)
       SELECT $2, type, count, first_at, last_at, first_event_id FROM person_event_counts WHERE person_id = $1
       ON CONFLICT (person_id, type) DO UPDATE SET count = person_event_counts.count + EXCLUDED.count,
         first_at = LEAST(person_event_counts.first_at, EXCLUDED.first_at), last_at = GREATEST(person_event_counts.last_at, EXCLUDED.last_at)`,
      [anon.id, m.person_id],
    );
    // Events of the anonymous person still on the Log follow it (the sink reads redirects).
    await q.query('UPDATE person_redirects SET to_id = $2 WHERE to_id = $1', [anon.id, m.person_id]);
    await q.query('INSERT INTO person_redirects (from_id, to_id) VALUES ($1, $2) ON CONFLICT (from_id) DO UPDATE SET to_id = EXCLUDED.to_id', [anon.id, m.person_id]);
    await q.query(
      `UPDATE people AS p SET traits = a.traits || p.traits,
         ${DEDICATED_FIELDS.map((f) => `${f} = COALESCE(p.${f}, a.${f})`).join(', ')},
         first_seen_at = LEAST(p.first_seen_at, a.first_seen_at), updated_at = now()
       FROM people AS a WHERE p.id = $1 AND a.id = $2`,
      [m.person_id, anon.id],
    );
    // Lists and topic choices follow the person (docs/audiences.md); the identified person's choice wins.
    await q.query('INSERT INTO list_members (list_id, person_id, added_at) SELECT list_id, $2, added_at FROM list_members WHERE person_id = $1 ON CONFLICT DO NOTHING', [anon.id, m.person_id]);
    await q.query(
      'INSERT INTO topic_subscriptions (topic_id, person_id, subscribed, updated_at) SELECT topic_id, $2, subscribed, updated_at FROM topic_subscriptions WHERE person_id = $1 ON CONFLICT DO NOTHING',
      [anon.id, m.person_id],
    );
    await q.query('DELETE FROM people WHERE id = $1', [anon.id]);
    personIds.forget(m.workspace_id, m.anonymous_id);
  });
}

/** Runs the merges left pending (e.g. by a restart) for the workspaces `owns` accepts. */
export async function resumeMerges(db: Db, owns: (workspaceId: string) => boolean): Promise<void> {
  const pending = await db.query<{ id: string; workspace_id: string }>('SELECT id, workspace_id FROM pending_merges ORDER BY created_at');
  for (const m of pending.rows) {
    if (!owns(m.workspace_id)) continue;
    await runMerge(db, m.id).catch((err) => logger.error('anonymous merge failed', { merge: m.id, err }));
  }
}

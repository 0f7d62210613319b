// Topics and people's subscriptions to them (docs/audiences.md). A person's choice is a row of
// topic_subscriptions; without one, the topic's default applies.
import type { Queryable } from './db.js';
import type { TopicDefault } from '../domain/topics.js';

export interface TopicRow {
  id: string;
  workspace_id: string;
  name: string;
  description: string | null;
  default: TopicDefault;
  created_at: Date;
  updated_at: Date;
}

export type TopicFields = Pick<TopicRow, 'name' | 'description' | 'default'>;

const COLUMNS = 'id, workspace_id, name, description, default_state AS "default", created_at, updated_at';

export async function insertTopic(q: Queryable, id: string, workspaceId: string, f: TopicFields): Promise<TopicRow> {
  const r = await q.query<TopicRow>(`INSERT INTO topics (id, workspace_id, name, description, default_state) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`, [id, workspaceId, f.name, f.description, f.default]);
  return r.rows[0]!;
}

export async function findTopic(q: Queryable, workspaceId: string, id: string, lock = false): Promise<TopicRow | null> {
  const r = await q.query<TopicRow>(`SELECT ${COLUMNS} FROM topics WHERE id = $1 AND workspace_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, workspaceId]);
  return r.rows[0] ?? null;
}

/** The workspace's topics, oldest first (the order the preference page lists them in). */
export async function topicsOf(q: Queryable, workspaceId: string): Promise<TopicRow[]> {
  return (await q.query<TopicRow>(`SELECT ${COLUMNS} FROM topics WHERE workspace_id = $1 ORDER BY created_at, id`, [workspaceId])).rows;
}

export async function saveTopic(q: Queryable, id: string, f: TopicFields): Promise<TopicRow> {
  const r = await q.query<TopicRow>(`UPDATE topics SET name = $2, description = $3, default_state = $4, updated_at = now() WHERE id = $1 RETURNING ${COLUMNS}`, [id, f.name, f.description, f.default]);
  return r.rows[0]!;
}

export async function deleteTopic(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM topics WHERE id = $1', [id]);
}

/** Topic id → whether the person is subscribed, for every topic of the workspace (their choice, else the default). */
export async function subscriptionsOf(q: Queryable, workspaceId: string, personId: string): Promise<Record<string, boolean>> {
  const r = await q.query<{ id: string; subscribed: boolean }>(
    `SELECT t.id, COALESCE(s.subscribed, t.default_state = 'opted_in') AS subscribed
     FROM topics t LEFT JOIN topic_subscriptions s ON s.topic_id = t.id AND s.person_id = $2
     WHERE t.workspace_id = $1 ORDER BY t.created_at, t.id`,
    [workspaceId, personId],
  );
  return Object.fromEntries(r.rows.map((x) => [x.id, x.subscribed]));
}

/** Records the person's choices (topic id → subscribed); the caller has checked every topic is the workspace's. */
export async function setSubscriptions(q: Queryable, personId: string, choices: Readonly<Record<string, boolean>>): Promise<void> {
  const ids = Object.keys(choices);
  if (ids.length === 0) return;
  await q.query(
    `INSERT INTO topic_subscriptions (topic_id, person_id, subscribed)
     SELECT t, $1, s FROM unnest($2::uuid[], $3::boolean[]) AS x(t, s)
     ON CONFLICT (topic_id, person_id) DO UPDATE SET subscribed = EXCLUDED.subscribed, updated_at = now()`,
    [personId, ids, ids.map((id) => choices[id])],
  );
}

/** Those of `personIds` not subscribed to the topic (opted out, or never chose and its default is opted_out). */
export async function optedOutOf(q: Queryable, workspaceId: string, topicId: string, personIds: readonly string[]): Promise<Set<string>> {
  if (personIds.length === 0) return new Set();
  const r = await q.query<{ person_id: string }>(
    `SELECT p.id AS person_id FROM unnest($3::uuid[]) AS p(id)
     JOIN topics t ON t.id = $2 AND t.workspace_id = $1
     LEFT JOIN topic_subscriptions s ON s.topic_id = t.id AND s.person_id = p.id
     WHERE NOT COALESCE(s.subscribed, t.default_state = 'opted_in')`,
    [workspaceId, topicId, personIds],
  );
  return new Set(r.rows.map((x) => x.person_id));
}

// SQL for people, shared by every route that writes or reads them.
import { prepared, type Queryable } from './db.js';
import { newId } from '../ids.js';
import { DEDICATED_FIELDS } from '../domain/traits.js';
import type { IdentifyInput } from '../domain/identify.js';
import type { PersonStatus } from '../domain/people.js';

export interface PersonRow {
  id: string;
  workspace_id: string;
  external_id: string;
  email: string | null;
  phone: string | null;
  first_name: string | null;
  last_name: string | null;
  avatar_url: string | null;
  timezone: string | null;
  locale: string | null;
  status: PersonStatus;
  unsubscribed_at: Date | null;
  unsubscribe_reason: string | null;
  traits: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
  first_seen_at: Date;
  last_seen_at: Date;
}

const PERSON_COLUMNS =
  'id, workspace_id, external_id, email, phone, first_name, last_name, avatar_url, timezone, locale, status, unsubscribed_at, unsubscribe_reason, traits, created_at, updated_at, first_seen_at, last_seen_at';

export const RETURNING = `RETURNING ${PERSON_COLUMNS.split(', ').map((c) => `p.${c}`).join(', ')}`;
/** Each dedicated field of person `p` takes the value sent when its key is present in `sent` (jsonb), else keeps its own. */
export const setFields = (sent: string) => DEDICATED_FIELDS.map((f) => `${f} = CASE WHEN ${sent} ? '${f}' THEN ${sent}->>'${f}' ELSE p.${f} END`).join(',\n  ');
/** The dedicated fields of a new person from `sent` (jsonb), in DEDICATED_FIELDS order. */
export const newFields = (sent: string) => DEDICATED_FIELDS.map((f) => `${sent}->>'${f}'`).join(', ');

/** Creates the person or merges into them (traits: new values win); keyed only on the identifier. */
export async function upsertPerson(q: Queryable, workspaceId: string, input: IdentifyInput): Promise<{ person: PersonRow; created: boolean }> {
  const r = await q.query<PersonRow & { created: boolean }>(
    `INSERT INTO people AS p (id, workspace_id, external_id, ${DEDICATED_FIELDS.join(', ')}, traits, first_seen_at, last_seen_at)
     SELECT $1, $2, $3, ${newFields('f')}, $5::text::jsonb, $6::timestamptz, $6::timestamptz
     FROM (SELECT $4::text::jsonb AS f) AS x
     ON CONFLICT (workspace_id, external_id) DO UPDATE SET
       ${setFields('$4::text::jsonb')},
       traits = p.traits || EXCLUDED.traits,
       updated_at = now(),
       last_seen_at = GREATEST(p.last_seen_at, EXCLUDED.last_seen_at)
     ${RETURNING}, (xmax = 0) AS created`,
    [newId(), workspaceId, input.userId, JSON.stringify(input.fields), JSON.stringify(input.traits), input.seenAt],
  );
  const { created, ...person } = r.rows[0]!;
  return { person, created };
}

/** The person with this identifier, created bare when unknown (devices, track). */
export async function ensurePerson(q: Queryable, workspaceId: string, externalId: string): Promise<{ person: PersonRow; created: boolean }> {
  // Locked (in the caller's transaction) until it commits: a delete or merge of this person
  // waits for it, rather than leaving the caller to write rows that refer to no one.
  const found = await findPerson(q, workspaceId, externalId, true);
  if (found) return { person: found, created: false };
  return upsertPerson(q, workspaceId, { userId: externalId, fields: {}, traits: {}, seenAt: new Date().toISOString() });
}

/** `lock`: FOR KEY SHARE, so the person cannot be deleted before the caller's transaction ends. */
export async function findPerson(q: Queryable, workspaceId: string, externalId: string, lock = false): Promise<PersonRow | null> {
  const r = await q.query<PersonRow>(`SELECT ${PERSON_COLUMNS} FROM people WHERE workspace_id = $1 AND external_id = $2${lock ? ' FOR KEY SHARE' : ''}`, [workspaceId, externalId]);
  return r.rows[0] ?? null;
}

export async function findPersonById(q: Queryable, workspaceId: string, id: string): Promise<PersonRow | null> {
  const r = await q.query<PersonRow>(`SELECT ${PERSON_COLUMNS} FROM people WHERE workspace_id = $1 AND id = $2`, [workspaceId, id]);
  return r.rows[0] ?? null;
}

/** The workspace's people among these UUIDs (unknown ones are absent). */
export async function peopleByIds(q: Queryable, workspaceId: string, ids: readonly string[]): Promise<PersonRow[]> {
  const r = await q.query<PersonRow>(PEOPLE_BY_IDS, [workspaceId, ids]);
  return r.rows;
}

/** Read for every page of a fan-out and every matched event: prepared. */
const PEOPLE_BY_IDS = prepared('people-by-ids', `SELECT ${PERSON_COLUMNS} FROM people WHERE workspace_id = $1 AND id = ANY ($2::uuid[])`);

/** Merges traits and their dedicated fields into a known person; false when unknown. */
export async function updateTraits(q: Queryable, workspaceId: string, externalId: string, traits: Record<string, unknown>, fields: Record<string, string | null>): Promise<boolean> {
  const r = await q.query(
    `UPDATE people AS p SET ${setFields('$4::text::jsonb')}, traits = p.traits || $3::text::jsonb, updated_at = now()
     WHERE p.workspace_id = $1 AND p.external_id = $2`,
    [workspaceId, externalId, JSON.stringify(traits), JSON.stringify(fields)],
  );
  return r.rowCount > 0;
}

/**
 * Deletes a person; their events and devices go with them (foreign keys, ON DELETE CASCADE).
 * `archiveEvents` (the store is the analytics store): their events are moved to
 * `analytics_events` first, which keeps the events of deleted people (README, Routes). Run in
 * a transaction: the person's row is locked first, so no event can be added for them (its
 * foreign key check waits on that lock) between the copy and the cascade.
 */
export async function deletePerson(q: Queryable, workspaceId: string, externalId: string, archiveEvents: boolean): Promise<boolean> {
  const found = await q.query<{ id: string }>('SELECT id FROM people WHERE workspace_id = $1 AND external_id = $2 FOR UPDATE', [workspaceId, externalId]);
  const id = found.rows[0]?.id;
  if (id === undefined) return false;
  if (archiveEvents) {
    await q.query(
      `INSERT INTO analytics_events (id, workspace_id, person_id, external_id, type, parameters, created_at, ingested_at)
       SELECT id, workspace_id, person_id, $2, type, parameters, created_at, ingested_at FROM events WHERE person_id = $1
       ON CONFLICT (id) DO NOTHING`,
      [id, externalId],
    );
  }
  await q.query('DELETE FROM people WHERE id = $1', [id]);
  return true;
}

/** `%text%` for ILIKE with the pattern characters of `text` escaped. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => '\\' + c)}%`;
}

export interface PeoplePage {
  people: PersonRow[];
  total: number;
}

/** A page of the workspace's people, oldest first, optionally filtered by status and text. */
export async function listPeople(
  q: Queryable,
  workspaceId: string,
  opts: { limit: number; offset: number; status?: string; search?: string; searchColumns: readonly string[] },
): Promise<PeoplePage> {
  const where = ['workspace_id = $1'];
  const params: unknown[] = [workspaceId];
  if (opts.status) {
    params.push(opts.status);
    where.push(`status = $${params.length}`);
  }
  if (opts.search) {
    params.push(containsPattern(opts.search));
    where.push(`(${opts.searchColumns.map((c) => `${c} ILIKE $${params.length}`).join(' OR ')})`);
  }
  const filter = where.join(' AND ');
  const total = await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM people WHERE ${filter}`, params);
  const page = await q.query<PersonRow>(
    `SELECT ${PERSON_COLUMNS} FROM people WHERE ${filter} ORDER BY created_at, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, opts.limit, opts.offset],
  );
  return { people: page.rows, total: total.rows[0]!.n };
}

export interface PeopleStats {
  total: number;
  active: number;
  unsubscribed: number;
  bounced: number;
  suppressed: number;
  /** Created in the last 7 days. */
  recent: number;
}

export async function peopleStats(q: Queryable, workspaceId: string): Promise<PeopleStats> {
  const r = await q.query<PeopleStats>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'active')::int AS active,
            count(*) FILTER (WHERE status = 'unsubscribed')::int AS unsubscribed,
            count(*) FILTER (WHERE status = 'bounced')::int AS bounced,
            count(*) FILTER (WHERE status = 'suppressed')::int AS suppressed,
            count(*) FILTER (WHERE created_at > now() - interval '7 days')::int AS recent
     FROM people WHERE workspace_id = $1`,
    [workspaceId],
  );
  return r.rows[0]!;
}

/** Sets consent (README, Request bodies): `unsubscribed` stamps the time; back to `active` clears both consent fields. */
/** The person with the new consent state; null when they were deleted meanwhile. */
export async function setConsent(q: Queryable, personId: string, status: PersonRow['status'], reason: string | undefined): Promise<PersonRow | null> {
  const r = await q.query<PersonRow>(
    `UPDATE people SET status = $2,
       unsubscribed_at = CASE WHEN $2 = 'active' THEN NULL WHEN $2 = 'unsubscribed' AND status <> 'unsubscribed' THEN now() ELSE unsubscribed_at END,
       unsubscribe_reason = CASE WHEN $2 = 'active' THEN NULL ELSE COALESCE($3, unsubscribe_reason) END,
       updated_at = now()
     WHERE id = $1 RETURNING ${PERSON_COLUMNS}`,
    [personId, status, reason ?? null],
  );
  return r.rows[0] ?? null;
}

/** A phone with its punctuation removed: the expression migration 204 indexes (people_phone_digits), spelled the same. */
const PHONE_DIGITS = `regexp_replace(phone, '[^0-9+]', '', 'g')`;
/**
 * personByPhone's query ($1 the workspace, $2 the spellings); its plan is checked in
 * test/integration/query-plans.test.ts. The matches are gathered first (MATERIALIZED),
 * then the oldest taken: with `ORDER BY created_at LIMIT 1` on the scan itself the planner may
 * walk the workspace's people in people_by_created order hoping to meet a match early.
 */
export const PERSON_BY_PHONE = `WITH matches AS MATERIALIZED (
    SELECT external_id, created_at FROM people WHERE workspace_id = $1 AND phone IS NOT NULL AND ${PHONE_DIGITS} = ANY ($2::text[])
  ) SELECT external_id FROM matches ORDER BY created_at LIMIT 1`;

/** The first person (oldest) whose phone, punctuation removed, is one of `spellings`; read through people_phone_digits. */
export async function personByPhone(q: Queryable, workspaceId: string, spellings: readonly string[]): Promise<{ external_id: string } | undefined> {
  return (await q.query<{ external_id: string }>(PERSON_BY_PHONE, [workspaceId, spellings])).rows[0];
}

/** What the unsubscribe page shows of a token's person: their workspace's name and their email; undefined when the person is gone. */
export async function unsubscribeSubject(q: Queryable, workspaceId: string, personId: string): Promise<{ workspace: string; email: string | null } | undefined> {
  const r = await q.query<{ workspace: string; email: string | null }>(
    'SELECT w.name AS workspace, p.email FROM people p JOIN workspaces w ON w.id = p.workspace_id WHERE p.id = $1 AND p.workspace_id = $2',
    [personId, workspaceId],
  );
  return r.rows[0];
}

/** The person unsubscribed by an unsubscribe link; one unsubscribed already keeps their time and reason. */
export async function unsubscribeByLink(q: Queryable, personId: string): Promise<void> {
  await q.query(`UPDATE people SET status = 'unsubscribed', unsubscribed_at = now(), unsubscribe_reason = 'unsubscribe_link', updated_at = now() WHERE id = $1 AND status <> 'unsubscribed'`, [personId]);
}

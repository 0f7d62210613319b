// What event triggers read and claim (campaigns/event-triggers.ts): the active event campaigns,
// the first-seen record of first_occurrence (person_event_counts.first_event_id, migration 10),
// and the per-person counts performed_count_* conditions read.
import type { Queryable } from './db.js';
import { groupBy } from '../util/group-by.js';

export interface EventCampaignRow {
  id: string;
  workspace_id: string;
  trigger_config: Record<string, unknown>;
}

/** The active event campaigns, of one workspace or of all. */
export async function activeEventCampaigns(q: Queryable, workspaceId?: string): Promise<EventCampaignRow[]> {
  const r = await q.query<EventCampaignRow>(
    `SELECT id, workspace_id, trigger_config FROM campaigns
     WHERE trigger_type = 'event' AND status = 'active' AND ($1::uuid IS NULL OR workspace_id = $1) ORDER BY created_at`,
    [workspaceId ?? null],
  );
  return r.rows;
}

export interface Occurrence {
  personId: string;
  type: string;
  eventId: string;
  at: string;
}

/**
 * Claims the first-seen record of each occurrence's (person, event name) for its event unless
 * one exists (made when the events were applied, or by an earlier claim), and answers the ids of the events that
 * are first: those the record names. Asking again for the same event answers the same.
 */
export async function firstOccurrences(q: Queryable, occurrences: readonly Occurrence[]): Promise<Set<string>> {
  const cols = [occurrences.map((o) => o.personId), occurrences.map((o) => o.type), occurrences.map((o) => o.eventId), occurrences.map((o) => o.at)];
  const input = 'unnest($1::uuid[], $2::text[], $3::uuid[], $4::timestamptz[]) WITH ORDINALITY AS x(person_id, type, event_id, at, ord)';
  await q.query(
    `INSERT INTO person_event_counts (person_id, type, count, first_at, last_at, first_event_id)
     SELECT DISTINCT ON (person_id, type) person_id, type, 0, at, at, event_id FROM ${input} ORDER BY person_id, type, ord
     ON CONFLICT (person_id, type) DO NOTHING`,
    cols,
  );
  // A new statement: it sees the rows a concurrent claim made (the insert waited for them).
  const r = await q.query<{ event_id: string }>(
    `SELECT x.event_id FROM ${input} JOIN person_event_counts c ON c.person_id = x.person_id AND c.type = x.type AND c.first_event_id = x.event_id`,
    cols,
  );
  return new Set(r.rows.map((x) => x.event_id));
}

/** Which of the events are stored (so the counts include them). */
export async function storedEvents(q: Queryable, ids: readonly string[]): Promise<Set<string>> {
  const r = await q.query<{ id: string }>('SELECT id FROM events WHERE id = ANY ($1::uuid[])', [ids]);
  return new Set(r.rows.map((x) => x.id));
}

/** The people's counts of the named events, by person then event name (absent: 0). */
export async function eventCounts(q: Queryable, personIds: readonly string[], types: readonly string[]): Promise<Map<string, Record<string, number>>> {
  const r = await q.query<{ person_id: string; type: string; count: string }>(
    'SELECT person_id, type, count FROM person_event_counts WHERE person_id = ANY ($1::uuid[]) AND type = ANY ($2::text[])',
    [personIds, types],
  );
  return new Map([...groupBy(r.rows, (x) => x.person_id)].map(([person, rows]) => [person, Object.fromEntries(rows.map((x) => [x.type, Number(x.count)]))]));
}

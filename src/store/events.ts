// Event reads: the `events` table the sink fills (eventlog/event-sink.ts).
import type { Queryable } from './db.js';
import { pageBackTerm, type PageBack } from './page-back.js';

export interface EventRow {
  id: string;
  type: string;
  parameters: Record<string, unknown>;
  created_at: Date;
  person_id?: string;
  external_id?: string;
}

/** Which of a newest-first list to read: events of one name only; a page back. */
export interface EventFilter {
  name?: string;
  before?: PageBack | null;
}

/** The WHERE terms of a filter on `events e` in the list `scope` ($1), numbering its parameters after `params`'s. */
function filterTerms(f: EventFilter, scope: string, params: unknown[]): string {
  return (f.name === undefined ? '' : ` AND e.type = $${params.push(f.name)}`) + pageBackTerm('e', 'events', scope, f.before, params);
}

/** A person's events, newest first (index events_by_person). */
export async function eventsOf(q: Queryable, personId: string, limit: number, withPersonId: boolean, filter: EventFilter = {}): Promise<EventRow[]> {
  const params: unknown[] = [personId, limit];
  const r = await q.query<EventRow>(
    `SELECT e.id, e.type, e.parameters, e.created_at${withPersonId ? ', e.person_id' : ''} FROM events e
     WHERE e.person_id = $1${filterTerms(filter, 'person_id = $1', params)} ORDER BY e.created_at DESC, e.id DESC LIMIT $2`,
    params,
  );
  return r.rows;
}

/** A workspace's events of one name, at or after `since`, newest first, with the person's external id. */
export async function searchEvents(q: Queryable, workspaceId: string, type: string, since: string | null, limit: number): Promise<EventRow[]> {
  const r = await q.query<EventRow>(
    `SELECT e.id, e.type, e.parameters, e.created_at, p.external_id FROM events e JOIN people p ON p.id = e.person_id
     WHERE e.workspace_id = $1 AND e.type = $2 AND ($3::timestamptz IS NULL OR e.created_at >= $3::timestamptz)
     ORDER BY e.created_at DESC, e.id DESC LIMIT $4`,
    [workspaceId, type, since, limit],
  );
  return r.rows;
}

/**
 * The event names the workspace has seen, in name order, each with when it was last seen: a
 * skip scan along events_by_type (one index probe per name, recursion stopping at `limit`
 * names), so the cost is the number of names returned, not of events. $1 the workspace, $2 the
 * limit; its plan is checked in test/integration/query-plans.test.ts.
 */
export const EVENT_NAMES = `WITH RECURSIVE names AS (
   (SELECT type FROM events WHERE workspace_id = $1 ORDER BY type LIMIT 1)
   UNION ALL
   SELECT (SELECT e.type FROM events e WHERE e.workspace_id = $1 AND e.type > n.type ORDER BY e.type LIMIT 1) FROM names n WHERE n.type IS NOT NULL
 )
 SELECT n.type AS name, (SELECT e.created_at FROM events e WHERE e.workspace_id = $1 AND e.type = n.type ORDER BY e.created_at DESC LIMIT 1) AS last_seen_at
 FROM names n WHERE n.type IS NOT NULL LIMIT $2`;

export async function eventNames(q: Queryable, workspaceId: string, limit: number): Promise<{ name: string; last_seen_at: Date }[]> {
  return (await q.query<{ name: string; last_seen_at: Date }>(EVENT_NAMES, [workspaceId, limit])).rows;
}

/**
 * A workspace's events, newest first, with the person's UUID and external id (index
 * events_by_workspace_time, or events_by_type with a name); the statement is exported for its
 * plan's test (test/integration/query-plans.test.ts).
 */
export function latestEventsQuery(workspaceId: string, limit: number, filter: EventFilter): { text: string; values: unknown[] } {
  const values: unknown[] = [workspaceId, limit];
  const text = `SELECT e.id, e.type, e.parameters, e.created_at, e.person_id, p.external_id FROM events e JOIN people p ON p.id = e.person_id
     WHERE e.workspace_id = $1${filterTerms(filter, 'workspace_id = $1', values)} ORDER BY e.created_at DESC, e.id DESC LIMIT $2`;
  return { text, values };
}

export async function latestEvents(q: Queryable, workspaceId: string, limit: number, filter: EventFilter): Promise<EventRow[]> {
  const { text, values } = latestEventsQuery(workspaceId, limit, filter);
  return (await q.query<EventRow>(text, values)).rows;
}

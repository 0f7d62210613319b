// Event reads: the `events` table the sink fills (eventlog/event-sink.ts).
import type { Queryable } from './db.js';

export interface EventRow {
  id: string;
  type: string;
  parameters: Record<string, unknown>;
  created_at: Date;
  person_id?: string;
  external_id?: string;
}

/** A person's events, newest first; with `name`, only the events of that name. */
export async function eventsOf(q: Queryable, personId: string, limit: number, withPersonId: boolean, name?: string): Promise<EventRow[]> {
  const r = await q.query<EventRow>(
    `SELECT id, type, parameters, created_at${withPersonId ? ', person_id' : ''} FROM events
     WHERE person_id = $1${name === undefined ? '' : ' AND type = $3'} ORDER BY created_at DESC, id DESC LIMIT $2`,
    name === undefined ? [personId, limit] : [personId, limit, name],
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
 * A workspace's events created before `before` (all when null), newest first, with the person's
 * UUID and external id; with `name`, only the events of that name (index events_by_type).
 */
export async function latestEvents(q: Queryable, workspaceId: string, before: string | null, limit: number, name?: string): Promise<EventRow[]> {
  const r = await q.query<EventRow>(
    `SELECT e.id, e.type, e.parameters, e.created_at, e.person_id, p.external_id FROM events e JOIN people p ON p.id = e.person_id
     WHERE e.workspace_id = $1 AND ($2::timestamptz IS NULL OR e.created_at < $2::timestamptz)${name === undefined ? '' : ' AND e.type = $4'}
     ORDER BY e.created_at DESC, e.id DESC LIMIT $3`,
    name === undefined ? [workspaceId, before, limit] : [workspaceId, before, limit, name],
  );
  return r.rows;
}

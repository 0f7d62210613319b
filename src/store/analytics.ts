// Workspace analytics on the embedded default (docs/analytics.md): the analytics store is the
// events table together with analytics_events (a deleted person's events, store/people.ts).
// Every read is a range scan of events_by_type and analytics_events_by_type (migration 570) for
// the named types and days, under a statement timeout. The statements are exported for their
// plans' test; ClickHouse answers the same questions in analytics/clickhouse-reader.ts.
import type { Db, Queryable } from './db.js';
import { withDeadline } from './deadline.js';
import { denseDays, type AnalyticsReader, type DailyQuestion, type FunnelQuestion } from '../domain/analytics.js';

const TIMED_OUT = 'The analytics query ran past its time limit; try a shorter range';

/** The events of the types `$2` from `$3` to before `$4`, in both tables (never both: a row moves on delete). */
const EVENTS = (types: string) => `(
  SELECT person_id, type, created_at FROM events WHERE workspace_id = $1 AND type = ${types} AND created_at >= $3 AND created_at < $4
  UNION ALL
  SELECT person_id, type, created_at FROM analytics_events WHERE workspace_id = $1 AND type = ${types} AND created_at >= $3 AND created_at < $4
)`;

/** Day numbers since the epoch (UTC) with their counts; the row with a null day is the whole range. */
export function dailyQuery(workspaceId: string, q: DailyQuestion): { text: string; values: unknown[] } {
  const text = `SELECT day, count(*)::bigint AS count, count(DISTINCT person_id)::bigint AS people
    FROM (SELECT floor(extract(epoch FROM created_at) / 86400)::int AS day, person_id FROM ${EVENTS('$2')} u) e GROUP BY GROUPING SETS ((day), ())`;
  return { text, values: [workspaceId, q.event, new Date(q.range.fromMs), new Date(q.range.toMs)] };
}

/**
 * Each person's first step-1 event in the range, then for each further step their earliest
 * event of it after the step before and within the window of the first (domain/analytics.ts).
 * One scan of the steps' types, grouped by person (each step's times an array); the steps are
 * then followed per person through those arrays: no join between people's events, so the work
 * grows with the events scanned, as ClickHouse's reading does.
 */
export function funnelQuery(workspaceId: string, q: FunnelQuestion): { text: string; values: unknown[] } {
  const values: unknown[] = [workspaceId, [...new Set(q.steps)], new Date(q.range.fromMs), new Date(q.range.toMs + q.windowMs), new Date(q.range.toMs), q.windowMs];
  const end = `p.t1 + $6::float8 * interval '1 millisecond'`;
  const columns = [`min(created_at) FILTER (WHERE type = $${values.push(q.steps[0])} AND created_at < $5) AS t1`];
  const follow: string[] = [];
  for (let k = 2; k <= q.steps.length; k++) {
    columns.push(`array_agg(created_at) FILTER (WHERE type = $${values.push(q.steps[k - 1])}) AS a${k}`);
    const before = k === 2 ? 'p.t1' : `s${k - 1}.t${k - 1}`;
    follow.push(`CROSS JOIN LATERAL (SELECT min(x) AS t${k} FROM unnest(p.a${k}) x WHERE x > ${before} AND x <= ${end}) s${k}`);
  }
  const counts = q.steps.map((_, i) => (i === 0 ? 'count(p.t1)' : `count(s${i + 1}.t${i + 1})`));
  const text = `SELECT ARRAY[${counts.join(', ')}]::bigint[] AS people
    FROM (SELECT person_id, ${columns.join(', ')} FROM ${EVENTS('ANY($2::text[])')} ev GROUP BY person_id) p
    ${follow.join('\n    ')}
    WHERE p.t1 IS NOT NULL`;
  return { text, values };
}

export function storeAnalytics(db: Db): AnalyticsReader {
  const timed = <T>(deadline: number, fn: (q: Queryable) => Promise<T>) => db.tx((q) => fn(withDeadline(q, deadline, TIMED_OUT)));
  return {
    async daily(workspaceId, q, deadline) {
      const { text, values } = dailyQuery(workspaceId, q);
      const rows = await timed(deadline, async (tx) => (await tx.query<{ day: number | null; count: string; people: string }>(text, values)).rows);
      const byDay = new Map<number, { count: number; people: number }>();
      let total = { count: 0, people: 0 };
      for (const r of rows) {
        const counts = { count: Number(r.count), people: Number(r.people) };
        if (r.day === null) total = counts;
        else byDay.set(r.day, counts);
      }
      return { days: denseDays(q.range, byDay), total };
    },
    async funnel(workspaceId, q, deadline) {
      const { text, values } = funnelQuery(workspaceId, q);
      const rows = await timed(deadline, async (tx) => (await tx.query<{ people: string[] }>(text, values)).rows);
      return rows[0]!.people.map(Number);
    },
    close: async () => {},
  };
}

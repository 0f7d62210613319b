// Workspace analytics from ClickHouse (CLICKHOUSE_URL; docs/analytics.md): the same questions,
// the same rules and the same answers as the store's (store/analytics.ts). SQL that Debian's
// 18.16 accepts: no CTEs, no query parameters; event names go in as hex (unhex('…')), so the
// only values spliced into SQL are UUIDs, hex and integers, each checked or made here. Rows
// are selected by the table's key (workspace, type, second) and by created_ms for the exact
// instant; max_execution_time bounds each query.
import { createClient } from '@clickhouse/client';
import { isUuid } from '../ids.js';
import { Unavailable } from '../domain/errors.js';
import { denseDays, type AnalyticsReader, type DayRange } from '../domain/analytics.js';

const TABLE = 'analytics_events';
/** A step not reached: later than any instant, so no later step can follow it. */
const NEVER = '9000000000000000000';
/** ClickHouse's TIMEOUT_EXCEEDED. */
const TIMEOUT_EXCEEDED = 159;

const hexOf = (s: string) => `unhex('${Buffer.from(s, 'utf8').toString('hex')}')`;

/** Rows of `workspaceId` of the types `types` with created_ms in [fromMs, toMs). */
function where(workspaceId: string, types: string[], fromMs: number, toMs: number): string {
  if (!isUuid(workspaceId)) throw new Error('not a workspace id');
  const [from, to] = [Math.floor(fromMs), Math.floor(toMs)];
  return `workspace_id = '${workspaceId}' AND type IN (${types.map(hexOf).join(', ')})
    AND created_at >= toDateTime(${Math.floor(from / 1000)}) AND created_at <= toDateTime(${Math.floor((to - 1) / 1000)})
    AND created_ms >= ${from} AND created_ms < ${to}`;
}

function dailySql(workspaceId: string, event: string, range: DayRange): { days: string; total: string } {
  const rows = `FROM ${TABLE} WHERE ${where(workspaceId, [event], range.fromMs, range.toMs)}`;
  return {
    days: `SELECT intDiv(created_ms, 86400000) AS day, count() AS count, uniqExact(person_id) AS people ${rows} GROUP BY day`,
    total: `SELECT count() AS count, uniqExact(person_id) AS people ${rows}`,
  };
}

/** Per person: their step events' times as arrays, then each step's time from the one before (domain/analytics.ts). */
function funnelSql(workspaceId: string, steps: string[], range: DayRange, windowMs: number): string {
  const arrays = steps.map((s, i) => `groupArrayIf(created_ms, type = ${hexOf(s)}${i === 0 ? ` AND created_ms < ${range.toMs}` : ''}) AS a${i + 1}`);
  const times = [`arrayReduce('min', a1) AS t1`];
  for (let k = 2; k <= steps.length; k++) {
    times.push(`arrayFilter(x -> x > t${k - 1} AND x <= t1 + ${Math.floor(windowMs)}, a${k}) AS f${k}`, `if(empty(f${k}), toInt64(${NEVER}), arrayReduce('min', f${k})) AS t${k}`);
  }
  const counts = steps.map((_, i) => (i === 0 ? 'count() AS s1' : `countIf(t${i + 1} < ${NEVER}) AS s${i + 1}`));
  return `SELECT ${counts.join(', ')} FROM (
    SELECT ${times.join(',\n      ')}
    FROM (SELECT person_id, ${arrays.join(', ')} FROM ${TABLE} WHERE ${where(workspaceId, [...new Set(steps)], range.fromMs, range.toMs + windowMs)} GROUP BY person_id)
    WHERE notEmpty(a1))`;
}

export function clickHouseReader(url: string): AnalyticsReader {
  // The server stops a query at its deadline; the client waits a little longer for that answer.
  const ch = createClient({ url, request_timeout: 60_000 });
  /** Rows of `query`, cancelled on the server by the deadline; 64-bit counts arrive as text. */
  async function rows<T>(query: string, deadline: number): Promise<T[]> {
    const seconds = Math.max(1, Math.ceil((deadline - Date.now()) / 1000));
    try {
      const rs = await ch.query({ query, format: 'JSONEachRow', clickhouse_settings: { max_execution_time: seconds } });
      return await rs.json<T>();
    } catch (err) {
      const e = err as { code?: unknown; message?: unknown };
      const code = Number(e.code ?? /^Code: (\d+)/.exec(String(e.message))?.[1]);
      if (code === TIMEOUT_EXCEEDED) throw new Unavailable('The analytics query ran past its time limit; try a shorter range', err);
      // The SQL is ours: a failure is ClickHouse unreachable or failing (logged with its cause), a 503.
      throw new Unavailable('The analytics store (ClickHouse) did not answer', err);
    }
  }
  return {
    async daily(workspaceId, q, deadline) {
      const sql = dailySql(workspaceId, q.event, q.range);
      type Counts = { count: string; people: string };
      const [days, total] = await Promise.all([rows<Counts & { day: string }>(sql.days, deadline), rows<Counts>(sql.total, deadline)]);
      const byDay = new Map(days.map((d) => [Number(d.day), { count: Number(d.count), people: Number(d.people) }]));
      return { days: denseDays(q.range, byDay), total: { count: Number(total[0]?.count ?? 0), people: Number(total[0]?.people ?? 0) } };
    },
    async funnel(workspaceId, q, deadline) {
      const [row] = await rows<Record<string, string>>(funnelSql(workspaceId, q.steps, q.range, q.windowMs), deadline);
      return q.steps.map((_, i) => Number(row?.[`s${i + 1}`] ?? 0));
    },
    close: () => ch.close(),
  };
}

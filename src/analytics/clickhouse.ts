// The production analytics store: every event, in ClickHouse (CLICKHOUSE_URL; the database is
// the URL's path, created when missing). The SQL is what both Debian's 18.16 and current
// releases accept: no DateTime64 (epoch milliseconds in an Int64 beside a DateTime), no
// query parameters (18.16 has no server-side binding), no TTL. Rows travel as JSONEachRow
// data, never as SQL; the only values spliced into SQL are UUIDs and integers we check first.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { EventRecord } from '../domain/events.js';
import { isUuid } from '../ids.js';

const TABLE = 'analytics_events';

// ReplacingMergeTree: should two replicas ever write the same event, merges keep one row.
// The sink's own check below is what keeps plain `count()` exact.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS ${TABLE} (
  id UUID,
  workspace_id UUID,
  person_id UUID,
  external_id String,
  type String,
  parameters String,
  created_at DateTime,
  created_ms Int64,
  ingested_at DateTime DEFAULT now()
) ENGINE = ReplacingMergeTree(ingested_at)
PARTITION BY toYYYYMM(created_at)
ORDER BY (workspace_id, type, created_at, id)`;

/** Keeps each existence query well under ClickHouse's 256 KiB max_query_size. */
const IDS_PER_QUERY = 2000;
const DATETIME_MAX = 4294967295;

export interface AnalyticsStore {
  /** Writes the events not already stored; returns how many it wrote. */
  write(records: EventRecord[]): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A record that cannot be a row (not an object, an id that is no UUID, no readable time). */
class BadRecord extends Error {}

function uuid(v: unknown): string {
  if (typeof v !== 'string' || !isUuid(v)) throw new BadRecord(`not a UUID: ${String(JSON.stringify(v)).slice(0, 60)}`);
  return v;
}

/**
 * ClickHouse error codes of data it refuses (an INSERT's JSONEachRow it cannot parse or
 * convert): 6 CANNOT_PARSE_TEXT, 25 CANNOT_PARSE_ESCAPE_SEQUENCE (e.g. an unpaired surrogate),
 * 26 CANNOT_PARSE_QUOTED_STRING, 27 CANNOT_PARSE_INPUT_ASSERTION_FAILED, 38 CANNOT_PARSE_DATE,
 * 41 CANNOT_PARSE_DATETIME, 53 TYPE_MISMATCH, 69 ARGUMENT_OUT_OF_BOUND, 70
 * CANNOT_CONVERT_TYPE, 72 CANNOT_PARSE_NUMBER, 117 INCORRECT_DATA, 131 TOO_LARGE_STRING_SIZE,
 * 321 VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE, 376 CANNOT_PARSE_UUID. The HTTP status does not
 * tell (18.16 answers 500 for most of these).
 */
const DATA_CODES = new Set([6, 25, 26, 27, 38, 41, 53, 69, 70, 72, 117, 131, 321, 376]);

/**
 * True when ClickHouse (or the row conversion before it) refused the records themselves;
 * false for an outage (no connection, a timeout, a server error of any other code). The
 * client parses `Code: N` into ClickHouseError.code on current servers; 18.16's messages
 * (`Code: 25, e.displayText() = …`) stay plain errors, read here.
 */
export function isRefusedData(err: unknown): boolean {
  if (err instanceof BadRecord) return true;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' && /^\d+$/.test(e.code) ? Number(e.code) : typeof e?.message === 'string' ? Number(/^Code: (\d+)[.,]/.exec(e.message)?.[1]) : NaN;
  return DATA_CODES.has(code);
}

function parametersText(p: unknown): string {
  try {
    return JSON.stringify(p) ?? 'null';
  } catch (err) {
    throw new BadRecord(`parameters cannot be serialized: ${(err as Error).message}`);
  }
}

/** DateTime holds 1970..2106 in seconds; the exact instant is kept in created_ms. */
const seconds = (ms: number) => Math.min(Math.max(Math.floor(ms / 1000), 0), DATETIME_MAX);

function toRow(r: EventRecord) {
  if (r === null || typeof r !== 'object' || Array.isArray(r)) throw new BadRecord(`an event record that is not an object: ${String(JSON.stringify(r)).slice(0, 60)}`);
  uuid(r.id);
  uuid(r.workspace_id);
  const ms = Date.parse(r.created_at);
  if (Number.isNaN(ms)) throw new BadRecord(`created_at is not a time: ${String(JSON.stringify(r.created_at)).slice(0, 60)}`);
  return {
    id: r.id,
    workspace_id: r.workspace_id,
    person_id: r.person_id,
    external_id: r.external_id,
    type: r.type,
    parameters: parametersText(r.parameters),
    created_at: seconds(ms),
    created_ms: ms,
  };
}
type Row = ReturnType<typeof toRow>;

export async function clickHouseAnalytics(url: string): Promise<AnalyticsStore> {
  const parsed = new URL(url);
  const database = parsed.pathname.slice(1) || 'default';
  if (!/^[A-Za-z0-9_]{1,64}$/.test(database)) throw new Error(`CLICKHOUSE_URL database must be letters, digits or '_', got '${database}'`);
  const settings = { date_time_input_format: 'best_effort' } as const;
  if (database !== 'default') {
    parsed.pathname = '/'; // the database in the path is the one about to be created
    const admin = createClient({ url: parsed.toString(), request_timeout: 10_000 });
    try {
      await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${database}` });
    } finally {
      await admin.close();
    }
  }
  const ch: ClickHouseClient = createClient({ url, request_timeout: 10_000, clickhouse_settings: settings });
  await ch.command({ query: CREATE_TABLE });

  /**
   * Ids of `rows` already in the table: a redelivered batch is not written twice. The ids go
   * as one string literal split on the server: as 2,000 literals in an IN list, parsing the
   * query took most of the check's time (bench/HISTORY.md, issue 12, fifth round).
   */
  async function stored(rows: Row[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < rows.length; i += IDS_PER_QUERY) {
      const chunk = rows.slice(i, i + IDS_PER_QUERY);
      const secs = chunk.map((r) => r.created_at);
      // Spliced into the SQL as they are: toRow checked every id against the UUID pattern.
      const workspaces = [...new Set(chunk.map((r) => r.workspace_id))];
      const rs = await ch.query({
        query: `SELECT toString(id) AS held FROM ${TABLE}
          WHERE workspace_id IN (${workspaces.map((w) => `'${w}'`).join(',')})
            AND created_at BETWEEN toDateTime(${Math.min(...secs)}) AND toDateTime(${Math.max(...secs)})
            AND id IN (SELECT toUUID(arrayJoin(splitByChar(',', '${chunk.map((r) => r.id).join(',')}'))))`,
        format: 'JSONEachRow',
      });
      for (const row of await rs.json<{ held: string }>()) found.add(row.held);
    }
    return found;
  }

  return {
    async write(records) {
      if (records.length === 0) return 0;
      const all = records.map(toRow);
      const have = await stored(all);
      const rows = all.filter((r) => {
        if (have.has(r.id)) return false;
        have.add(r.id); // an event twice in one batch is written once
        return true;
      });
      if (rows.length > 0) await ch.insert({ table: TABLE, values: rows, format: 'JSONEachRow' });
      return rows.length;
    },
    async ping() {
      const r = await ch.ping();
      if (!r.success) throw r.error;
    },
    close: () => ch.close(),
  };
}

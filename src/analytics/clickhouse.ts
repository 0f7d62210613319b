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

function uuid(v: string): string {
  if (!isUuid(v)) throw new Error(`not a UUID: ${JSON.stringify(v).slice(0, 60)}`);
  return v;
}

/** DateTime holds 1970..2106 in seconds; the exact instant is kept in created_ms. */
const seconds = (ms: number) => Math.min(Math.max(Math.floor(ms / 1000), 0), DATETIME_MAX);

function toRow(r: EventRecord) {
  const ms = Date.parse(r.created_at);
  return {
    id: r.id,
    workspace_id: r.workspace_id,
    person_id: r.person_id,
    external_id: r.external_id,
    type: r.type,
    parameters: JSON.stringify(r.parameters),
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

  /** Ids of `rows` already in the table: a redelivered batch is not written twice. */
  async function stored(rows: Row[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let i = 0; i < rows.length; i += IDS_PER_QUERY) {
      const chunk = rows.slice(i, i + IDS_PER_QUERY);
      const secs = chunk.map((r) => r.created_at);
      const workspaces = [...new Set(chunk.map((r) => uuid(r.workspace_id)))];
      const rs = await ch.query({
        query: `SELECT toString(id) AS id FROM ${TABLE}
          WHERE workspace_id IN (${workspaces.map((w) => `'${w}'`).join(',')})
            AND created_at BETWEEN toDateTime(${Math.min(...secs)}) AND toDateTime(${Math.max(...secs)})
            AND id IN (${chunk.map((r) => `'${uuid(r.id)}'`).join(',')})`,
        format: 'JSONEachRow',
      });
      for (const row of await rs.json<{ id: string }>()) found.add(row.id);
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

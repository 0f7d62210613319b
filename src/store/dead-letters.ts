// The dead-letter table: what a sink could not apply for a reason other than an outage (a
// value PostgreSQL or ClickHouse refuses), set aside so that everything else on the Log flows
// (eventlog/event-sink.ts). Operators read it with SQL; /healthz reports how many rows it has.
import type { Queryable } from './db.js';
import { isUuid } from '../ids.js';

/** Which sink set it aside: one of the JetStream consumers'. (`store-log` rows come from migration 12.) */
export type DeadLetterSink = 'jetstream-store' | 'clickhouse';

export interface DeadLetter {
  sink: DeadLetterSink;
  /** Where it was on the Log, unique per sink: a poison redelivered after a crash is recorded once. */
  ref: string;
  /** The record (or the whole entry or message, when unreadable) as the Log held it: JSON text, or the raw text. */
  payload: string;
  error: unknown;
}

// eslint-disable-next-line no-control-regex -- U+0000 is the character replaced
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** Text PostgreSQL can hold: U+0000 written as the 6 characters `\u0000`, an unpaired surrogate as U+FFFD. */
const storable = (s: string) => s.replace(UNSTORABLE, (c) => (c === '\u0000' ? '\\u0000' : '\uFFFD'));

const MAX_ERROR_CHARS = 2000;

/** The error's message, with the SQLSTATE and detail when PostgreSQL gave them. */
function describe(err: unknown): string {
  const e = (err ?? {}) as { message?: unknown; code?: unknown; detail?: unknown };
  let s = typeof e.message === 'string' ? e.message : String(err);
  if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) s += ` (SQLSTATE ${e.code})`;
  if (typeof e.detail === 'string') s += `: ${e.detail}`;
  return storable(s).slice(0, MAX_ERROR_CHARS);
}

/** The record's workspace, when the payload is a record naming one. */
function workspaceOf(payload: string): string | null {
  try {
    const v = JSON.parse(payload) as unknown;
    const ws = v !== null && typeof v === 'object' ? (v as { workspace_id?: unknown }).workspace_id : undefined;
    return typeof ws === 'string' && isUuid(ws) ? ws.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** Records `letters`; one already recorded (same sink and ref) is left as it is. */
export async function recordDeadLetters(q: Queryable, letters: DeadLetter[]): Promise<void> {
  if (letters.length === 0) return;
  await q.query(
    `INSERT INTO dead_letters (sink, ref, workspace_id, payload, error)
     SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[])
     ON CONFLICT (sink, ref) DO NOTHING`,
    [letters.map((l) => l.sink), letters.map((l) => storable(l.ref)), letters.map((l) => workspaceOf(l.payload)), letters.map((l) => storable(l.payload)), letters.map((l) => describe(l.error))],
  );
}

export async function countDeadLetters(q: Queryable): Promise<number> {
  return (await q.query<{ n: number }>('SELECT count(*)::int AS n FROM dead_letters')).rows[0]!.n;
}

// Moves events from the embedded Log into the store's `events` (what the read routes and
// deletes use), the per-person counts, and the embedded analytics table. One statement takes
// a batch off the log and writes all three, so a batch is applied exactly once; events of a
// person deleted meanwhile are dropped (their analytics copy stays), events of a person
// merged away follow the redirect.
import type { Db } from '../store/db.js';
import { log } from '../log.js';

const BATCH_ROWS = 200;

const SINK_SQL = `
WITH taken AS (
  DELETE FROM log_entries WHERE seq IN (
    SELECT seq FROM log_entries WHERE topic = 'events' ORDER BY seq LIMIT ${BATCH_ROWS} FOR UPDATE SKIP LOCKED
  ) RETURNING payload
), recs AS (
  SELECT r.* FROM taken, jsonb_to_recordset(taken.payload)
    AS r(id uuid, workspace_id uuid, person_id uuid, external_id text, type text, parameters jsonb, created_at timestamptz)
), resolved AS (
  SELECT recs.id, recs.workspace_id, COALESCE(rd.to_id, recs.person_id) AS person_id, recs.type, recs.parameters, recs.created_at
  FROM recs LEFT JOIN person_redirects rd ON rd.from_id = recs.person_id
), stored AS (
  INSERT INTO events (id, workspace_id, person_id, type, parameters, created_at)
  SELECT r.id, r.workspace_id, r.person_id, r.type, r.parameters, r.created_at
  FROM resolved r JOIN people p ON p.id = r.person_id
  ON CONFLICT (id) DO NOTHING
  RETURNING person_id, type, created_at
), counted AS (
  INSERT INTO person_event_counts (person_id, type, count, first_at, last_at)
  SELECT person_id, type, count(*), min(created_at), max(created_at) FROM stored GROUP BY person_id, type
  ON CONFLICT (person_id, type) DO UPDATE SET count = person_event_counts.count + EXCLUDED.count,
    first_at = LEAST(person_event_counts.first_at, EXCLUDED.first_at), last_at = GREATEST(person_event_counts.last_at, EXCLUDED.last_at)
  RETURNING 1
), analytics AS (
  INSERT INTO analytics_events (id, workspace_id, person_id, external_id, type, parameters, created_at)
  SELECT id, workspace_id, person_id, external_id, type, parameters, created_at FROM recs
  ON CONFLICT (id) DO NOTHING
  RETURNING 1
)
SELECT (SELECT count(*) FROM recs)::int AS events, (SELECT count(*) FROM counted)::int AS counted, (SELECT count(*) FROM analytics)::int AS analysed`;

export class EventSink {
  private stopped = false;
  private running: Promise<void> | undefined;

  /** `idleMs`: the pause when the log is empty, which bounds how far reads lag behind writes. */
  constructor(private readonly db: Db, private readonly idleMs: number) {}

  start(): void {
    this.running = this.loop();
  }

  private async loop(): Promise<void> {
    let backoff = this.idleMs;
    while (!this.stopped) {
      try {
        const r = await this.db.query<{ events: number }>(SINK_SQL);
        backoff = this.idleMs;
        if (r.rows[0]!.events > 0) continue;
      } catch (err) {
        // The store is down or busy: nothing was taken off the log; retry with backoff.
        log.warn('event sink failed; retrying', { err, retryMs: backoff });
        backoff = Math.min(backoff * 2, 5000);
      }
      await new Promise((r) => setTimeout(r, backoff));
    }
  }

  /** Drains what is on the log, then stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
    for (let i = 0; i < 1000; i++) {
      const r = await this.db.query<{ events: number }>(SINK_SQL).catch(() => null);
      if (!r || r.rows[0]!.events === 0) break;
    }
  }
}

-- name: events applied at the append: the log_entries queue goes
-- The store's Log now writes events where they are read when it appends them
-- (eventlog/event-log.ts). What an earlier version queued in log_entries and had not
-- applied yet (it was stopped with kill -9 before its sink caught up) is applied here as
-- that sink did (a frozen copy of its statement), one record at a time; a record the store
-- refuses, or an entry that is not a list, goes to dead_letters (sink 'store-log').
DO $$
DECLARE
  e record;
  r record;
BEGIN
  FOR e IN SELECT seq, payload FROM log_entries WHERE topic = 'events' ORDER BY seq LOOP
    IF jsonb_typeof(e.payload) <> 'array' THEN
      INSERT INTO dead_letters (sink, ref, payload, error)
      VALUES ('store-log', 'log_entries:' || e.seq, e.payload::text, 'not an array of event records')
      ON CONFLICT (sink, ref) DO NOTHING;
      CONTINUE;
    END IF;
    FOR r IN SELECT x, o FROM jsonb_array_elements(e.payload) WITH ORDINALITY AS t(x, o) LOOP
      BEGIN
        WITH recs AS (
          SELECT * FROM jsonb_to_recordset(jsonb_build_array(r.x)) AS t(id uuid, workspace_id uuid, person_id uuid, external_id text, type text, parameters jsonb, created_at timestamptz)
        ), resolved AS (
          SELECT recs.id, recs.workspace_id, recs.type, recs.parameters, recs.created_at,
            (SELECT p.id FROM people p WHERE p.id = COALESCE((SELECT rd.to_id FROM person_redirects rd WHERE rd.from_id = recs.person_id), recs.person_id)) AS person_id
          FROM recs
        ), stored AS (
          INSERT INTO events (id, workspace_id, person_id, type, parameters, created_at)
          SELECT id, workspace_id, person_id, type, parameters, created_at FROM resolved WHERE person_id IS NOT NULL
          ON CONFLICT (id) DO NOTHING
          RETURNING id, person_id, type, created_at
        ), counted AS (
          INSERT INTO person_event_counts (person_id, type, count, first_at, last_at, first_event_id)
          SELECT person_id, type, 1, created_at, created_at, id FROM stored
          ON CONFLICT (person_id, type) DO UPDATE SET count = person_event_counts.count + 1,
            first_at = LEAST(person_event_counts.first_at, EXCLUDED.first_at), last_at = GREATEST(person_event_counts.last_at, EXCLUDED.last_at)
        )
        INSERT INTO analytics_events (id, workspace_id, person_id, external_id, type, parameters, created_at)
        SELECT id, workspace_id, person_id, external_id, type, parameters, created_at FROM recs
        ON CONFLICT (id) DO NOTHING;
      EXCEPTION WHEN data_exception OR integrity_constraint_violation OR cardinality_violation OR program_limit_exceeded THEN
        INSERT INTO dead_letters (sink, ref, workspace_id, payload, error)
        VALUES ('store-log', 'log_entries:' || e.seq || ':' || (r.o - 1),
          CASE WHEN r.x->>'workspace_id' ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN (r.x->>'workspace_id')::uuid END,
          r.x::text, SQLERRM || ' (SQLSTATE ' || SQLSTATE || ')')
        ON CONFLICT (sink, ref) DO NOTHING;
      END;
    END LOOP;
  END LOOP;
END $$;
DROP TABLE log_entries;

-- name: 500-segments
-- Segments (docs/audiences.md): a saved condition tree and its members, kept. A segment is
-- also the job (store/job-queue.ts) that computes it from scratch: `waiting`/`running` while
-- a computation walks the workspace's people in id order (after_person, walked of total),
-- then `ready`. Its members change meanwhile too (the people who change are evaluated at once).
CREATE TABLE segments (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name text NOT NULL,
  conditions jsonb NOT NULL,
  state text NOT NULL CHECK (state IN ('waiting', 'running', 'ready', 'failed')),
  -- Bumped by every change of the conditions: a computation's page of an older tree is dropped.
  generation integer NOT NULL DEFAULT 0,
  after_person uuid,
  walked bigint NOT NULL DEFAULT 0,
  total bigint NOT NULL DEFAULT 0,
  error text,
  -- Windowed event conditions: the events up to this instant have been aged out (the expiry job).
  expired_to timestamptz,
  due_at timestamptz NOT NULL DEFAULT now(),
  claims integer NOT NULL DEFAULT 0,
  claimed_by integer,
  claimed_at timestamptz,
  computed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX segments_by_workspace ON segments (workspace_id, created_at DESC, id DESC);
CREATE INDEX segments_due ON segments (workspace_id, due_at) WHERE state = 'waiting';
CREATE TABLE segment_members (
  segment_id uuid NOT NULL REFERENCES segments(id) ON DELETE CASCADE,
  person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
  entered_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (segment_id, person_id)
);
CREATE INDEX segment_members_by_person ON segment_members (person_id);
-- A segment's count, kept by the statements that write its members (their transition tables),
-- never counted on read. Each backend adds to a row of its own (slot: its pid), so a computation
-- and the people evaluated meanwhile never wait on one counter row; a read sums the slots.
CREATE TABLE segment_counters (
  segment_id uuid NOT NULL REFERENCES segments(id) ON DELETE CASCADE,
  slot integer NOT NULL,
  members bigint NOT NULL,
  PRIMARY KEY (segment_id, slot)
);
CREATE FUNCTION herald_count_segment_members() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  -- A segment deleted takes its counters with it: its members' cascade counts nothing (the
  -- EXISTS keeps the insert from naming a segment no longer there).
  IF TG_OP = 'INSERT' THEN
    INSERT INTO segment_counters AS c (segment_id, slot, members)
    SELECT n.segment_id, pg_backend_pid(), count(*) FROM new_rows n
    WHERE EXISTS (SELECT 1 FROM segments s WHERE s.id = n.segment_id) GROUP BY n.segment_id
    ON CONFLICT (segment_id, slot) DO UPDATE SET members = c.members + excluded.members;
  ELSE
    INSERT INTO segment_counters AS c (segment_id, slot, members)
    SELECT o.segment_id, pg_backend_pid(), -count(*) FROM old_rows o
    WHERE EXISTS (SELECT 1 FROM segments s WHERE s.id = o.segment_id) GROUP BY o.segment_id
    ON CONFLICT (segment_id, slot) DO UPDATE SET members = c.members + excluded.members;
  END IF;
  RETURN NULL;
END $fn$;
CREATE TRIGGER segment_members_counted_in AFTER INSERT ON segment_members REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_count_segment_members();
CREATE TRIGGER segment_members_counted_out AFTER DELETE ON segment_members REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_count_segment_members();
-- Windowed event counts read a person's events of one name by time.
CREATE INDEX events_by_person_type ON events (person_id, type, created_at);

-- name: one job mechanism: runs, enrolments and scheduled sends (store/job-queue.ts)
-- util/shard.ts shardOf in SQL, so that a claim names the workspaces its actor serves:
-- FNV-1a over the key's characters (a workspace id's are ASCII), modulo n.
CREATE OR REPLACE FUNCTION herald_shard(key text, n integer) RETURNS integer
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $fn$
DECLARE h bigint := 2166136261;
BEGIN
  FOR i IN 1 .. length(key) LOOP
    h := ((h # ascii(substr(key, i, 1))) * 16777619) % 4294967296;
  END LOOP;
  RETURN (h % n)::integer;
END $fn$;
-- A run is a job like the others: an id, waiting (due) or running (claimed), its claims
-- counted for the back-off; it walks a page per claim and waits again between pages.
ALTER TABLE campaign_runs ADD COLUMN id uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
  ADD COLUMN due_at timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN claims integer NOT NULL DEFAULT 0,
  ALTER COLUMN claimed_at DROP NOT NULL,
  ALTER COLUMN claimed_at DROP DEFAULT,
  DROP CONSTRAINT campaign_runs_state_check;
UPDATE campaign_runs SET state = 'running' WHERE state = 'enrolling';
ALTER TABLE campaign_runs ADD CONSTRAINT campaign_runs_state_check CHECK (state IN ('waiting', 'running', 'enrolled', 'failed'));
DROP INDEX campaign_runs_enrolling;
CREATE INDEX campaign_runs_due ON campaign_runs (workspace_id, due_at) WHERE state = 'waiting';
CREATE INDEX campaign_runs_running ON campaign_runs (workspace_id) WHERE state = 'running';
-- The scheduled sends' workspaces are found and claimed by workspace, as the other jobs'.
CREATE INDEX push_messages_waiting ON push_messages (workspace_id, scheduled_at) WHERE status = 'scheduled';

-- name: campaign runtime: enrolment progress, schedule runs
-- Where each enrolment is in its workflow (campaigns/executor.ts): 'waiting' until due_at,
-- then next_node (a node id of workflow_definition; null: the first) runs; 'running' while
-- an executor holds it (claimed_at, refreshed while it works, goes stale when its process
-- died); 'done' after the last node; 'stopped' when its campaign was archived or failed,
-- or the node is gone. claims counts the claims at the current node: more than one means
-- a claim was interrupted there. context holds what templates read besides the person:
-- {event, trigger, variables}. Rows are updated in place two or three times each, so
-- pages keep room for the new versions (fillfactor) and claimed_at is in no index: the
-- heartbeat's updates stay HOT.
ALTER TABLE campaign_enrolments
  ADD COLUMN state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'running', 'done', 'stopped')),
  ADD COLUMN next_node text,
  ADD COLUMN due_at timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN context jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN claimed_at timestamptz,
  ADD COLUMN claims integer NOT NULL DEFAULT 0;
ALTER TABLE campaign_enrolments SET (fillfactor = 70);
-- A third of an enrolment's insert was its three foreign-key checks: the workspace's is
-- implied by the campaign's (a workspace's deletion cascades through its campaigns).
ALTER TABLE campaign_enrolments DROP CONSTRAINT campaign_enrolments_workspace_id_fkey;
CREATE INDEX campaign_enrolments_due ON campaign_enrolments (workspace_id, due_at) WHERE state = 'waiting';
CREATE INDEX campaign_enrolments_running ON campaign_enrolments (workspace_id) WHERE state = 'running';
-- One row per schedule run (campaigns/schedules.ts): its key (the send_at, the cron tick, the
-- dynamic date) is unique per campaign, so a run is started once whatever the number of
-- replicas; claimed_at is the lease of the process enrolling its audience (refreshed while it
-- works), after_person how far that walk got, so a run a crash interrupted resumes there.
CREATE TABLE campaign_runs (
  campaign_id uuid NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  run_key text NOT NULL,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  state text NOT NULL CHECK (state IN ('enrolling', 'enrolled', 'failed')),
  after_person uuid,
  enrolled integer NOT NULL DEFAULT 0,
  truncated boolean NOT NULL DEFAULT false,
  error text,
  claimed_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz,
  PRIMARY KEY (campaign_id, run_key)
);
CREATE INDEX campaign_runs_enrolling ON campaign_runs (claimed_at) WHERE state = 'enrolling';
-- When the campaign last went live (draft or paused → active or scheduled): cron ticks
-- and dynamic dates before it are not run.
ALTER TABLE campaigns ADD COLUMN live_since timestamptz;
UPDATE campaigns SET live_since = updated_at WHERE status IN ('active', 'scheduled');
-- A trait's ISO 8601 date or date-time (no offset: UTC) as an instant, NULL when it is
-- not one, for dynamic_schedule campaigns. Lenient rather than failing the statement: an
-- impossible day rolls over (2024-02-30 is 2024-03-01), as no exception can be caught in
-- a plain (inlinable) SQL function.
CREATE FUNCTION herald_instant(s text) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$
  SELECT CASE WHEN m IS NULL THEN NULL ELSE
    (timestamp '2000-01-01' + make_interval(years => m[1]::int - 2000, months => m[2]::int - 1, days => m[3]::int - 1,
       hours => COALESCE(m[4]::int, 0), mins => COALESCE(m[5]::int, 0), secs => COALESCE(m[6]::double precision, 0))) AT TIME ZONE 'UTC'
    - CASE WHEN m[8] IS NULL THEN interval '0'
           ELSE (CASE WHEN m[8] = '-' THEN -1 ELSE 1 END) * make_interval(hours => m[9]::int, mins => COALESCE(m[10]::int, 0)) END
  END
  FROM (SELECT regexp_match(s, '^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}(?:\.\d{1,6})?))?)?(Z|([+-])(\d{2}):?(\d{2})?)?$') AS m) x
$f$;
-- Audiences are read in keyset pages of person ids within a workspace.
CREATE INDEX people_by_workspace_id ON people (workspace_id, id);

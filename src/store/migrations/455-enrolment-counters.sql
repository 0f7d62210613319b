-- name: enrolment counters per campaign, kept by the writing statements
-- Campaign stats and the campaign list read these rather than count every enrolment of the
-- campaign on each read (store/enrolment-counters.ts): per campaign, its enrolments, the runs
-- that enrolled someone and the latest enrolment. As message_counters (migration 441): a
-- statement inserting or deleting enrolments adds its rows' change in one upsert, into rows of
-- its backend's own (slot: its pid; 0 the backfill and folds), so concurrent pages of one
-- campaign never wait on each other's counter rows.
-- A run is counted when the statement enrolled its first people: the campaign's enrolments
-- of that run are read along the (campaign_id, run_id, person_id) key, at most one more than
-- the statement inserted. A deletion (a person deleted or merged away) takes its enrolments
-- out, and a run whose last enrolment went; the latest enrolment time stays.
CREATE TABLE enrolment_counters (
  campaign_id uuid NOT NULL,
  slot integer NOT NULL,
  enrolled bigint NOT NULL,
  triggered bigint NOT NULL,
  last_enrolled_at timestamptz,
  PRIMARY KEY (campaign_id, slot)
);
CREATE FUNCTION herald_count_enrolments() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO enrolment_counters AS c (campaign_id, slot, enrolled, triggered, last_enrolled_at)
    SELECT r.campaign_id, pg_backend_pid(), sum(r.n),
           count(*) FILTER (WHERE (SELECT count(*) FROM (SELECT 1 FROM campaign_enrolments e
                                    WHERE e.campaign_id = r.campaign_id AND e.run_id = r.run_id LIMIT r.n + 1) x) = r.n),
           max(r.last)
    FROM (SELECT campaign_id, run_id, count(*) AS n, max(enrolled_at) AS last FROM new_rows GROUP BY campaign_id, run_id) r
    GROUP BY r.campaign_id
    ORDER BY r.campaign_id
    ON CONFLICT (campaign_id, slot) DO UPDATE
      SET enrolled = c.enrolled + excluded.enrolled, triggered = c.triggered + excluded.triggered,
          last_enrolled_at = GREATEST(c.last_enrolled_at, excluded.last_enrolled_at);
  ELSE
    -- A campaign's own deletion takes its counters with it (store/campaigns.ts): only the
    -- enrolments of campaigns still there are counted out.
    INSERT INTO enrolment_counters AS c (campaign_id, slot, enrolled, triggered, last_enrolled_at)
    SELECT r.campaign_id, pg_backend_pid(), -sum(r.n),
           -count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM campaign_enrolments e WHERE e.campaign_id = r.campaign_id AND e.run_id = r.run_id)),
           NULL
    FROM (SELECT campaign_id, run_id, count(*) AS n FROM old_rows GROUP BY campaign_id, run_id) r
    WHERE EXISTS (SELECT 1 FROM campaigns WHERE id = r.campaign_id)
    GROUP BY r.campaign_id
    ORDER BY r.campaign_id
    ON CONFLICT (campaign_id, slot) DO UPDATE
      SET enrolled = c.enrolled + excluded.enrolled, triggered = c.triggered + excluded.triggered;
  END IF;
  RETURN NULL;
END $fn$;
CREATE TRIGGER enrolments_counted_in AFTER INSERT ON campaign_enrolments REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_count_enrolments();
CREATE TRIGGER enrolments_counted_out AFTER DELETE ON campaign_enrolments REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION herald_count_enrolments();
-- The stats were the only reader of campaign_enrolments_by_time: one index fewer to write per
-- enrolment (three entries a send of a scheduled fan-out, an enrolment being written three
-- times), and one the per-person probes of the enrolment insert can no longer wander into.
DROP INDEX campaign_enrolments_by_time;
-- The enrolments written before (the triggers' lock on the table holds writers back until this commits).
INSERT INTO enrolment_counters (campaign_id, slot, enrolled, triggered, last_enrolled_at)
SELECT campaign_id, 0, count(*), count(DISTINCT run_id), max(enrolled_at) FROM campaign_enrolments GROUP BY campaign_id;

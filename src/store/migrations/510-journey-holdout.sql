-- name: 510-journey-holdout
-- A campaign may hold out a share of its enrolments (0 to 50 percent, chosen by a hash of the
-- enrolment id): they end `held_out`, sent nothing. The statement that holds them out counts
-- them in the campaign's enrolment counters (migration 455), so the stats read a few rows.
ALTER TABLE campaigns ADD COLUMN holdout_percent integer NOT NULL DEFAULT 0 CHECK (holdout_percent BETWEEN 0 AND 50);
ALTER TABLE enrolment_counters ADD COLUMN held_out bigint NOT NULL DEFAULT 0;
ALTER TABLE campaign_enrolments DROP CONSTRAINT campaign_enrolments_state_check,
  ADD CONSTRAINT campaign_enrolments_state_check CHECK (state IN ('waiting', 'running', 'done', 'stopped', 'held_out')) NOT VALID;
ALTER TABLE campaign_enrolments VALIDATE CONSTRAINT campaign_enrolments_state_check;

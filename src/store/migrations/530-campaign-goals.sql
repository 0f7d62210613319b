-- name: 530-campaign-goals
-- A campaign's goal {event_name, within} (docs/campaigns-runtime.md, Goals and conversions): a
-- person who performs the event within `within` after their first message of the campaign is
-- converted once. The conversion's row is the once (its key: campaign and person); the
-- statement that inserts it also marks the first message (an event `converted`), ends the
-- person's enrolments still running (`converted`) and counts it in the campaign's enrolment
-- counters (migration 455), so the stats read a few rows.
ALTER TABLE campaigns ADD COLUMN goal jsonb;
-- What the actors' goal index reads (store/conversions.ts campaignGoals), every few seconds.
CREATE INDEX campaigns_with_goals ON campaigns (workspace_id) WHERE goal IS NOT NULL;
CREATE TABLE campaign_conversions (
  campaign_id uuid NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
  workspace_id uuid NOT NULL,
  message_id uuid NOT NULL,
  event_id uuid NOT NULL,
  converted_at timestamptz NOT NULL,
  PRIMARY KEY (campaign_id, person_id)
);
CREATE INDEX campaign_conversions_by_person ON campaign_conversions (person_id);
ALTER TABLE enrolment_counters ADD COLUMN converted bigint NOT NULL DEFAULT 0;
ALTER TABLE campaign_enrolments DROP CONSTRAINT campaign_enrolments_state_check,
  ADD CONSTRAINT campaign_enrolments_state_check CHECK (state IN ('waiting', 'running', 'done', 'stopped', 'held_out', 'converted')) NOT VALID;
ALTER TABLE campaign_enrolments VALIDATE CONSTRAINT campaign_enrolments_state_check;

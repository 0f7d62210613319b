-- name: claims name their holder: instance numbers (store/leases.ts)
-- An actor thread holds an instance number for its life and an advisory lock on it; a
-- claim whose holder's lock is gone lapses at once, without waiting for its stale time.
CREATE SEQUENCE herald_instances AS integer CYCLE;
ALTER TABLE campaign_enrolments ADD COLUMN claimed_by integer;
ALTER TABLE push_messages ADD COLUMN claimed_by integer;
ALTER TABLE campaign_runs ADD COLUMN claimed_by integer;

-- name: first-seen event of a person
-- first_occurrence (README, Request bodies): the event that first made a person's count of a type,
-- in Log order. Set once, by whichever comes first: the sink creating the row, or an
-- event trigger claiming it (a row of count 0 the sink then adds to). Rows from before
-- this migration have none: those people had been seen already.
ALTER TABLE person_event_counts ADD COLUMN first_event_id uuid;

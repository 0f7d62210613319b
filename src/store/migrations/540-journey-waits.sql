-- name: 540-journey-waits
-- An enrolment's position in its journey (docs/campaigns-runtime.md, Journeys) is its row:
-- next_node, when it reached that node (entered_at; null: at its first node since enrolled_at),
-- and, at a wait_for_event node whose wait has started, the deadline (wait_until; due_at is then
-- the same instant, so the timeout is the enrolment's own delayed job). The event resumes it
-- through the (campaign_id, person_id, entry) key, one probe per person.
ALTER TABLE campaign_enrolments ADD COLUMN entered_at timestamptz, ADD COLUMN wait_until timestamptz;

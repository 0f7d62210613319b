-- name: 511-journey-node-counters
-- Per-node stats of a campaign (docs/campaigns-runtime.md, Journeys): how many enrolments went
-- along each edge of its workflow, from a node to the next ('' when the journey ended there).
-- The statement that moves enrolments past a node adds its count in the same statement
-- (store/enrolments.ts MOVE_ON), into a row of its own backend (slot: its pid), as the
-- enrolment and message counters do, so concurrent pages never wait on one another's rows.
-- A node's completed is the sum of its out-edges, a branch's took its edge, a node's entered
-- the sum of its in-edges (the first node's: the enrolments not held out).
CREATE TABLE journey_edges (
  campaign_id uuid NOT NULL,
  from_node text NOT NULL,
  to_node text NOT NULL,
  slot integer NOT NULL,
  n bigint NOT NULL,
  PRIMARY KEY (campaign_id, from_node, to_node, slot)
);

-- name: dead letters
-- What a sink could not apply for a reason other than an outage (a value PostgreSQL or
-- ClickHouse refuses), set aside so that everything else on the Log flows
-- (eventlog/event-sink.ts). ref says where it was on the Log ('log_entries:<seq>:<i>',
-- '<stream>:<stream seq>:<i>'; no ':<i>' when the whole entry or message was unreadable),
-- unique per sink, so a poison redelivered after a crash is recorded once.
CREATE TABLE dead_letters (
  id bigserial PRIMARY KEY,
  sink text NOT NULL,
  ref text NOT NULL,
  workspace_id uuid,
  payload text NOT NULL,
  error text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (sink, ref)
);

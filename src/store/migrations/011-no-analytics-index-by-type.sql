-- name: no index on the embedded analytics copy by type
-- No query reads analytics_events by type (the analytics routes answer 501), and the
-- sink paid for this index on every event it stored. The primary key stays: it makes a
-- batch applied twice harmless.
DROP INDEX analytics_events_by_type;

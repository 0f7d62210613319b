-- name: no workspace foreign keys on the tables every ingest writes
-- Each of these ran a lookup of the workspace's row for every row inserted, and every
-- transaction that inserted (the Log's group commit, the person resolver, the device
-- registrar: several at once on one workspace) took a KEY SHARE lock on that one row,
-- rewriting it, a multixact when two held it, and queued on its page. Workspaces are
-- never deleted and the workspace id written comes from the authenticated key, so the
-- checks guarded nothing, and their cascade never ran. The person foreign keys stay: a
-- person's delete cascades, and must not race an event written for them.
ALTER TABLE events DROP CONSTRAINT events_workspace_id_fkey;
ALTER TABLE people DROP CONSTRAINT people_workspace_id_fkey;
ALTER TABLE devices DROP CONSTRAINT devices_workspace_id_fkey;
ALTER TABLE push_messages DROP CONSTRAINT push_messages_workspace_id_fkey;

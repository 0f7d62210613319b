-- name: push_messages becomes messages
-- The table has held every channel's messages since migration 201: it takes their name,
-- every row and id kept, and so do its indexes and constraints.
ALTER TABLE push_messages RENAME TO messages;
ALTER INDEX push_messages_pkey RENAME TO messages_pkey;
ALTER INDEX push_messages_by_person RENAME TO messages_by_person;
ALTER INDEX push_messages_sent RENAME TO messages_sent;
ALTER INDEX push_messages_due RENAME TO messages_due;
ALTER INDEX push_messages_by_campaign RENAME TO messages_by_campaign;
ALTER INDEX push_messages_by_campaign_time RENAME TO messages_by_campaign_time;
ALTER INDEX push_messages_waiting RENAME TO messages_waiting;
ALTER TABLE messages RENAME CONSTRAINT push_messages_person_id_fkey TO messages_person_id_fkey;
ALTER TABLE messages RENAME CONSTRAINT push_messages_status_check TO messages_status_check;
ALTER TABLE messages RENAME CONSTRAINT push_messages_channel_check TO messages_channel_check;

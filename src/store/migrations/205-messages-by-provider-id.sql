-- name: email and SMS messages by provider id
-- A Twilio status callback names its message by MessageSid, stored as provider_id
-- (messaging/provider-events.ts): without this index each callback scans the workspace's
-- messages, one scan per text of a 50,000-person SMS campaign.
CREATE INDEX IF NOT EXISTS messages_by_provider_id ON push_messages (workspace_id, provider_id) WHERE channel IN ('email', 'sms');

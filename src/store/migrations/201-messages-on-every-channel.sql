-- name: messages on every channel: channel, address, delivery statuses, events
-- Email and SMS: push records become messages with a channel; email and SMS add the
-- statuses their callbacks report, the address sent to and the provider events applied.
ALTER TABLE push_messages ADD COLUMN channel text NOT NULL DEFAULT 'push' CHECK (channel IN ('push', 'email', 'sms'));
ALTER TABLE push_messages ADD COLUMN address text;
ALTER TABLE push_messages ADD COLUMN events jsonb NOT NULL DEFAULT '[]';
ALTER TABLE push_messages DROP CONSTRAINT push_messages_status_check;
ALTER TABLE push_messages ADD CONSTRAINT push_messages_status_check
  CHECK (status IN ('scheduled', 'sending', 'sent', 'failed', 'policy_suppressed', 'skipped', 'delivered', 'bounced', 'complained'));

-- name: email and SMS templates
-- Templates per channel; email's fields beside push's (sms uses body).
ALTER TABLE message_templates DROP CONSTRAINT message_templates_channel_check;
ALTER TABLE message_templates ADD CONSTRAINT message_templates_channel_check CHECK (channel IN ('push', 'email', 'sms'));
ALTER TABLE message_templates ADD COLUMN subject text, ADD COLUMN html text, ADD COLUMN text text, ADD COLUMN preheader text;

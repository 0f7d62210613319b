-- name: people by phone number
-- An inbound SMS (handlers/provider-callbacks.ts) finds its person by number: people keep
-- their phone as they gave it, so store/people.ts personByPhone compares the phone with its
-- punctuation removed, exactly this expression (PHONE_DIGITS there), to the number's
-- spellings. Without this index that is a scan of the workspace's people per message.
CREATE INDEX IF NOT EXISTS people_phone_digits ON people (workspace_id, regexp_replace(phone, '[^0-9+]', '', 'g')) WHERE phone IS NOT NULL;

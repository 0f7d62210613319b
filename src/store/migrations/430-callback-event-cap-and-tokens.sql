-- name: provider callbacks: a message's events capped, Mailgun's tokens remembered
-- A message keeps its first 1,000 provider events (messaging/provider-events.ts); the
-- others still apply and are counted here.
ALTER TABLE push_messages ADD COLUMN events_not_stored integer NOT NULL DEFAULT 0;
-- Mailgun signs a timestamp and a token, not the event: a token is accepted once
-- (store/callback-tokens.ts), and kept while its timestamp could still be accepted.
CREATE TABLE callback_tokens (
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  token text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (workspace_id, token)
);
CREATE INDEX callback_tokens_expiry ON callback_tokens (workspace_id, expires_at);

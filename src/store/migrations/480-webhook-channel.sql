-- name: webhook channel: its messages and the workspace's node secret
-- The webhook channel (docs/channels.md): its calls are messages on channel `webhook`, signed
-- with one secret per workspace, made on first use and sealed under HERALD_SECRETS_KEY
-- (channels/webhook/secret.ts).
ALTER TABLE messages DROP CONSTRAINT messages_channel_check;
ALTER TABLE messages ADD CONSTRAINT messages_channel_check CHECK (channel IN ('push', 'email', 'sms', 'webhook'));
CREATE TABLE webhook_node_secrets (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
  secret bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

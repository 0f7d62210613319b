-- name: email and SMS channels, address suppressions
-- Email and SMS (docs/channels.md): each channel's settings as JSON sealed with AES-256-GCM under
-- HERALD_SECRETS_KEY (as push_channels), null when the channel is not configured.
CREATE TABLE message_channels (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
  email bytea,
  sms bytea,
  updated_at timestamptz NOT NULL DEFAULT now()
);
-- An email address (lower case) or an E.164 number, suppressed once per type.
CREATE TABLE address_suppressions (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  channel text NOT NULL CHECK (channel IN ('email', 'sms')),
  address text NOT NULL,
  suppression_type text NOT NULL CHECK (suppression_type IN ('hard_bounce', 'complaint', 'invalid_address', 'opt_out', 'manual')),
  reason text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX address_suppressions_by_type ON address_suppressions (workspace_id, channel, address, suppression_type);
CREATE INDEX address_suppressions_newest ON address_suppressions (workspace_id, created_at DESC, id);

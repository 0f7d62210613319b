-- name: push records, deliveries, token suppressions, channel credentials
-- One row per send request that reached a decision worth keeping (README, Request bodies and Routes):
-- sent, failed, policy_suppressed, and scheduled sends (docs/channels.md) from their 202 on.
-- A scheduled row keeps the unrendered content and variables: it is rendered at send time.
-- 'sending' marks a scheduled send claimed by one actor, so that it is sent once.
CREATE TABLE push_messages (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
  external_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('scheduled', 'sending', 'sent', 'failed', 'policy_suppressed', 'skipped')),
  platform text,
  provider text NOT NULL,
  provider_id text,
  skip_reason text,
  error text,
  title text,
  body text,
  image_url text,
  action_url text,
  custom_data jsonb,
  variables jsonb,
  tags jsonb,
  campaign_id text,
  event_id text,
  scheduled_at timestamptz,
  claimed_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  sent_at timestamptz
);
CREATE INDEX push_messages_by_person ON push_messages (person_id, created_at DESC);
-- The send counters are rebuilt from these (the send policy's caps count 'sent').
CREATE INDEX push_messages_sent ON push_messages (person_id, sent_at) WHERE status = 'sent';
CREATE INDEX push_messages_due ON push_messages (scheduled_at) WHERE status IN ('scheduled', 'sending');
CREATE TABLE push_deliveries (
  message_id uuid NOT NULL REFERENCES push_messages(id) ON DELETE CASCADE,
  device_id uuid NOT NULL,
  device_token text NOT NULL,
  platform text NOT NULL,
  status text NOT NULL CHECK (status IN ('sent', 'failed')),
  provider_id text,
  error text,
  PRIMARY KEY (message_id, device_id)
);
-- A token is suppressed once per type; tokens are matched by md5
-- for the same reason as devices (migration 5).
CREATE TABLE token_suppressions (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  device_token text NOT NULL,
  platform text NOT NULL,
  suppression_type text NOT NULL CHECK (suppression_type IN ('uninstalled', 'disabled', 'invalid_token', 'opt_out')),
  reason text,
  source_push_id uuid,
  source_campaign_id uuid,
  suppressed_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX token_suppressions_by_type ON token_suppressions (workspace_id, md5(device_token), suppression_type);
-- Provider credentials (docs/channels.md), each sealed with AES-256-GCM under HERALD_SECRETS_KEY.
CREATE TABLE push_channels (
  workspace_id uuid PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
  fcm bytea,
  apns bytea,
  updated_at timestamptz NOT NULL DEFAULT now()
);

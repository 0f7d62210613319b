-- name: webhook trigger idempotency claims
-- An Idempotency-Key claimed by a trigger, per workspace and campaign, on the
-- embedded default (with NATS_URL the claims live in NATS KV instead). people_queued is
-- null while the trigger is in progress. A row past expires_at counts as absent (a claim
-- replaces it) and is purged. campaign_id has no foreign key: the claim is only a memory
-- of the key, and a key check must never wait on a lock of the campaign row.
CREATE TABLE trigger_claims (
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  campaign_id uuid NOT NULL,
  idempotency_key text NOT NULL,
  fingerprint text NOT NULL,
  trigger_id uuid NOT NULL,
  triggered_at timestamptz NOT NULL,
  claim_token uuid NOT NULL,
  claimed_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  people_queued integer,
  audience_truncated boolean,
  PRIMARY KEY (workspace_id, campaign_id, idempotency_key)
);
CREATE INDEX trigger_claims_expiry ON trigger_claims (expires_at);

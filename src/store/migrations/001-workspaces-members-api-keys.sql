-- name: workspaces, members, api keys
CREATE TABLE workspaces (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  settings jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE workspace_members (
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  user_id text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX workspace_members_by_user ON workspace_members (user_id);
CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  key_prefix text NOT NULL UNIQUE,
  secret_hash text NOT NULL,
  name text NOT NULL,
  description text NOT NULL DEFAULT '',
  permissions jsonb NOT NULL,
  key_type text NOT NULL CHECK (key_type IN ('secret', 'public')),
  environment text NOT NULL CHECK (environment IN ('live', 'test')),
  expires_at timestamptz,
  ip_whitelist jsonb NOT NULL DEFAULT '[]',
  created_by text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
CREATE INDEX api_keys_by_workspace ON api_keys (workspace_id) WHERE revoked_at IS NULL;
CREATE TABLE api_key_usage (
  key_id uuid NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  day date NOT NULL,
  route text NOT NULL,
  requests bigint NOT NULL,
  PRIMARY KEY (key_id, day, route)
);

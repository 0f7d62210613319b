-- name: campaigns, message templates, campaign enrolments
-- Message templates: push content that campaign nodes name by template_id.
CREATE TABLE message_templates (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name text NOT NULL,
  channel text NOT NULL CHECK (channel IN ('push')),
  title text,
  body text,
  image_url text,
  action_url text,
  custom_data jsonb,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX message_templates_by_workspace ON message_templates (workspace_id, created_at DESC, id DESC);
-- Campaigns (docs/campaigns-runtime.md). trigger_config, audience_config and workflow_definition are
-- kept as written (validated for activation by domain/campaigns.ts). template_id is the
-- one the campaign was created with, as given: push nodes name theirs in the workflow, and
-- a template deleted since is reported by activation. No foreign key, so deleting a
-- template never locks campaign rows (which a campaign going live holds while it reads
-- its templates).
CREATE TABLE campaigns (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  name text NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'active', 'paused', 'completed', 'archived', 'failed')),
  trigger_type text NOT NULL CHECK (trigger_type IN ('event', 'webhook', 'schedule', 'dynamic_schedule')),
  trigger_config jsonb NOT NULL,
  audience_config jsonb NOT NULL DEFAULT '{}',
  workflow_definition jsonb NOT NULL DEFAULT '{"nodes": []}',
  template_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaigns_by_workspace ON campaigns (workspace_id, created_at DESC, id DESC);
-- The campaigns that can send (what trigger indexes and schedulers load).
CREATE INDEX campaigns_live ON campaigns (workspace_id, trigger_type) WHERE status IN ('active', 'scheduled');
-- One row per entry of a person into a campaign; the campaign's stats count them, and
-- they go with the campaign. The unique keys are what concurrent triggers, replicas and
-- redeliveries insert against (ON CONFLICT DO NOTHING): run_id names what enrolled the
-- person (the event id, the webhook trigger, the schedule run), so one run enrols a
-- person once; entry is the person's nth entry into the campaign, so max_per_user (and
-- first_occurrence, max 1) is a bound on entry that no race can exceed.
CREATE TABLE campaign_enrolments (
  id uuid PRIMARY KEY,
  workspace_id uuid NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  campaign_id uuid NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  person_id uuid NOT NULL REFERENCES people(id) ON DELETE CASCADE,
  run_id text NOT NULL,
  entry integer NOT NULL CHECK (entry >= 1),
  enrolled_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (campaign_id, run_id, person_id),
  UNIQUE (campaign_id, person_id, entry)
);
CREATE INDEX campaign_enrolments_by_time ON campaign_enrolments (campaign_id, enrolled_at);
-- Campaign stats count a campaign's push records by status.
CREATE INDEX push_messages_by_campaign ON push_messages (workspace_id, campaign_id, status) WHERE campaign_id IS NOT NULL;

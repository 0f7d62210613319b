-- name: a campaign's messages, newest first
-- GET /workspaces/{id}/campaigns/{campaignId}/messages (store/push-messages.ts
-- campaignMessages): the dashboard's live progress pages back through a campaign's
-- messages newest first; push_messages_by_campaign is by status, so without this every
-- message of the campaign would be sorted.
CREATE INDEX IF NOT EXISTS push_messages_by_campaign_time ON push_messages (workspace_id, campaign_id, created_at DESC, id DESC) WHERE campaign_id IS NOT NULL;

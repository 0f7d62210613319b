// Route id → handler, for every route an actor answers. Typed against the route table: a
// served route without a handler, or a handler for no route, does not compile.
import type { AllHandlers } from './context.js';
import { workspaceHandlers } from './workspaces.js';
import { apiKeyHandlers } from './api-keys.js';
import { peopleHandlers } from './people.js';
import { deviceHandlers } from './devices.js';
import { eventHandlers } from './events.js';
import { pushHandlers } from './push.js';
import { pushTokenHandlers } from './push-tokens.js';
import { channelHandlers } from './channels.js';
import { messageChannelHandlers } from './message-channels.js';
import { addressSuppressionHandlers } from './address-suppressions.js';
import { unsubscribeHandlers } from './unsubscribe.js';
import { providerCallbackHandlers } from './provider-callbacks.js';
import { campaignHandlers } from './campaigns.js';
import { campaignAnalyticsHandlers } from './campaign-analytics.js';
import { templateHandlers } from './templates.js';
import { campaignTriggerHandlers } from './campaign-trigger.js';
import { authoringHandlers } from './authoring.js';
import { sourceHandlers } from './segment-source.js';
import { webhookHandlers } from './webhooks.js';
import { listHandlers } from './lists.js';
import { topicHandlers } from './topics.js';
import { segmentHandlers } from './segments.js';
import { preferenceHandlers } from './preferences.js';
import { analyticsHandlers } from './analytics.js';
import { trackingHandlers } from './tracking.js';

export const handlers: AllHandlers = {
  ...workspaceHandlers,
  ...apiKeyHandlers,
  ...peopleHandlers,
  ...deviceHandlers,
  ...eventHandlers,
  ...pushHandlers,
  ...pushTokenHandlers,
  ...channelHandlers,
  ...messageChannelHandlers,
  ...addressSuppressionHandlers,
  ...unsubscribeHandlers,
  ...providerCallbackHandlers,
  ...campaignHandlers,
  ...campaignAnalyticsHandlers,
  ...templateHandlers,
  ...campaignTriggerHandlers,
  ...authoringHandlers,
  ...sourceHandlers,
  ...webhookHandlers,
  ...listHandlers,
  ...topicHandlers,
  ...segmentHandlers,
  ...preferenceHandlers,
  ...analyticsHandlers,
  ...trackingHandlers,
};

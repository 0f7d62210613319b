// Request schemas of campaign authoring and message templates (INTERFACE 2.7, 4.7; DECISIONS
// §6, §10, §11). Only the shape is checked here: trigger_config and audience_config are free
// objects at creation, and what activation requires of them is src/domain/campaigns.ts.
import { CAMPAIGN_STATUSES, SETTABLE_STATUSES, TRIGGER_TYPES } from '../src/domain/campaigns.js';
import { nonEmptyString, object, pagination, type Schema, type SchemaRefusal } from './common.js';
import { pushContent } from './push-send.js';

const uuid: Schema = { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'UUID' };
const nullable = (properties: Record<string, Schema>): Record<string, Schema> =>
  Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, { ...s, nullable: true }]));

/** DECISIONS §13: push uses title, body, image_url, action_url, custom_data; email subject, html, text, preheader; sms body. */
const TEMPLATE_CHANNEL: Schema = { type: 'string', enum: ['push', 'email', 'sms'] };
const emailContent: Record<string, Schema> = {
  subject: { type: 'string', maxLength: 998, description: 'email: the subject, Liquid' },
  html: { type: 'string', maxLength: 1_000_000, description: 'email: the html part, Liquid (`{{ unsubscribe_url }}` is the one-click link)' },
  text: { type: 'string', maxLength: 1_000_000, description: 'email: the text part; derived from html when absent' },
  preheader: { type: 'string', maxLength: 255, description: 'email: the preview text' },
};

/** DECISIONS §6, §13: push, email, sms and delay nodes, run in order. Other keys on a node are kept (e.g. a dashboard's layout). */
const node = object(
  {
    id: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,100}$', description: 'Unique in the workflow; 1 to 100 of A-Z a-z 0-9 _ . : - (it appears in the node-messages path)' },
    type: { type: 'string', enum: ['push', 'delay', 'email', 'sms'] },
    ...emailContent,
    ...pushContent,
    template_id: { ...uuid, description: "push, email, sms: a message template of the workspace and of the node's channel; its fields apply where the node has none of its own" },
    bypass_frequency_cap: { type: 'boolean', description: 'push: skips the daily and rolling caps, never quiet hours' },
    minutes: { type: 'integer', minimum: 0, maximum: 525_600, description: 'delay (required there): minutes before the next node' },
  },
  ['id', 'type'],
);

const workflowDefinition = object({ nodes: { type: 'array', maxItems: 100, items: node } }, ['nodes']);

const freeObject = (description: string): Schema => ({ type: 'object', description });
const triggerConfig = freeObject('Shape depends on trigger_type; checked at activation. `event_name` is refused (INVALID_TRIGGER_CONFIG): use `event_names`');
const audienceConfig = freeObject('{filters: [conditions], match: "all"|"any"}; checked at activation');

/** POST /campaigns */
export const campaignCreate = object(
  {
    name: nonEmptyString(255),
    trigger_type: { type: 'string', enum: [...TRIGGER_TYPES] },
    trigger_config: triggerConfig,
    audience_config: audienceConfig,
    workflow_definition: workflowDefinition,
    template_id: { ...uuid, description: 'A message template of the workspace: without workflow_definition the campaign gets one push node using it; with one, its push nodes that name no template use it' },
  },
  ['name', 'trigger_type', 'trigger_config'],
);

/** PUT /campaigns/{campaignId}: partial; each object sent replaces the stored one whole. */
export const campaignUpdate = object({
  name: nonEmptyString(255),
  trigger_config: triggerConfig,
  audience_config: audienceConfig,
  workflow_definition: workflowDefinition,
  status: { type: 'string', enum: [...SETTABLE_STATUSES] },
});

export const campaignUpdateRefusals: readonly SchemaRefusal[] = [
  { at: '/status', keyword: 'enum', message: `must be one of ${SETTABLE_STATUSES.join(', ')}: scheduled and failed are set only by the system` },
];

/** GET /campaigns */
export const campaignList = object({
  ...pagination(100),
  status: { type: 'string', enum: [...CAMPAIGN_STATUSES] },
  trigger_type: { type: 'string', enum: [...TRIGGER_TYPES] },
});

/** PUT /workspaces/{workspaceId}/campaigns/{campaignId}/node-messages/{nodeId}: fields sent replace, `null` removes, omitted stay. */
export const nodeMessage = object(nullable(pushContent));

/** POST /workspaces/{workspaceId}/templates */
export const templateCreate = object(
  { name: nonEmptyString(255), channel: TEMPLATE_CHANNEL, ...pushContent, ...emailContent },
  ['name', 'channel'],
);

/** PUT /workspaces/{workspaceId}/templates/{templateId}: fields sent replace, `null` clears a content field, omitted stay. */
export const templateUpdate = object({ name: nonEmptyString(255), channel: TEMPLATE_CHANNEL, ...nullable(pushContent), ...nullable(emailContent) });

/**
 * POST /campaigns/{campaignId}/trigger (INTERFACE 4.6). The audience is the campaign's own, so
 * the body takes nothing else: a field beyond these two (`user_ids`, `filters`, a typo) is
 * refused rather than ignored, since ignoring it would send to the whole audience.
 */
export const campaignTrigger = object(
  {
    workspace_id: { type: 'string', description: "Must be the API key's workspace (403 otherwise)" },
    trigger_data: { type: 'object', description: 'Passed to the workflow: the template scope `trigger` ({{ trigger.<path> }})' },
  },
  ['workspace_id'],
  { additionalProperties: false },
);

export const campaignTriggerRefusals: readonly SchemaRefusal[] = [
  { at: '', keyword: 'additionalProperties', message: "is not a known field: the audience is the campaign's audience_config (user ids or filters cannot be passed); the body takes workspace_id and trigger_data" },
];

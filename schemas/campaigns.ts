// Request schemas of campaign authoring and message templates (docs/campaigns-runtime.md).
// Only the shape is checked here: trigger_config and audience_config are free objects at
// creation, and what activation requires of them is src/domain/campaigns.ts.
import { CAMPAIGN_STATUSES, NODE_TYPES, SETTABLE_STATUSES, TRIGGER_TYPES } from '../src/domain/campaigns.js';
import { CHANNELS, TEMPLATE_CHANNELS } from '../src/domain/messages.js';
import { GOAL_WINDOW_RULE } from '../src/domain/goals.js';
import { nonEmptyString, object, pagination, pageBack, queryLimit, type Schema, type SchemaRefusal } from './common.js';
import { pushContent, pushMessage } from './push-send.js';
import { closed, count, enumOf, freeObject, isoTime, message, nullableIsoTime, nullableStr, ok, str, success, uuidText, type HandlerErrors, type ResponseDoc, type RouteResponses } from './response-parts.js';

const uuid = { type: 'string', pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'UUID' } as const;
const nullable = <P extends Record<string, Schema>>(properties: P) =>
  Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, { ...s, nullable: true }])) as { [K in keyof P]: P[K] & { nullable: true } };

/** Each channel's content fields: push uses title, body, image_url, action_url, custom_data; email subject, html, text, preheader; sms body. */
const TEMPLATE_CHANNEL = { type: 'string', enum: [...TEMPLATE_CHANNELS] } as const;
/** A webhook node's call (docs/channels.md); its `body` is the push `body` field, up to 4,000 characters, JSON once rendered. */
export const webhookCall = {
  url: { type: 'string', maxLength: 2048, description: 'webhook (required there): the http(s) URL called, Liquid' },
} as const;
export const emailContent = {
  subject: { type: 'string', maxLength: 998, description: 'email: the subject, Liquid' },
  html: { type: 'string', maxLength: 1_000_000, description: 'email: the html part, Liquid (`{{ unsubscribe_url }}` is the one-click link)' },
  text: { type: 'string', maxLength: 1_000_000, description: 'email: the text part; derived from html when absent' },
  preheader: { type: 'string', maxLength: 255, description: 'email: the preview text' },
} as const;

const nodeId = { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,100}$' } as const;
/**
 * The workflow: push, email, sms, webhook and delay nodes, run in order, or a journey whose nodes
 * name what follows (next; split, wait_for_event, random_split and exit). Other keys on a node are kept (e.g. a dashboard's layout).
 */
const node = object(
  {
    id: { ...nodeId, description: 'Unique in the workflow; 1 to 100 of A-Z a-z 0-9 _ . : - (it appears in the node-messages path)' },
    type: { type: 'string', enum: NODE_TYPES },
    ...emailContent,
    ...pushContent,
    template_id: { ...uuid, description: "push, email, sms: a message template of the workspace and of the node's channel; its fields apply where the node has none of its own" },
    topic_id: { ...uuid, description: 'push, email, sms, webhook: a topic of the workspace; its people not subscribed are skipped (`topic_unsubscribed`), and an email\'s unsubscribe link leaves that topic only' },
    bypass_frequency_cap: { type: 'boolean', description: 'push: skips the daily and rolling caps, never quiet hours' },
    ...webhookCall,
    method: { type: 'string', enum: ['POST', 'PUT', 'PATCH'], description: 'webhook: the HTTP method (POST)' },
    headers: { type: 'object', maxProperties: 20, additionalProperties: { type: 'string', maxLength: 1000 }, description: 'webhook: headers sent as written (the Standard Webhooks headers are added)' },
    minutes: { type: 'integer', minimum: 0, maximum: 525_600, description: 'delay (required there): minutes before the next node' },
    next: { ...nodeId, description: 'Any node but split, wait_for_event, random_split and exit: the id of the node that follows (without it, the node after this one in the list; none: the journey ends)' },
    condition: { type: 'object', description: 'split (required there): a condition {field, operator, value} or an audience {filters, match} or {segment_id}, evaluated for the person when they reach the node' },
    yes: { ...nodeId, description: 'split: the node the person goes to when the condition holds' },
    no: { ...nodeId, description: 'split: the node the person goes to when it does not' },
    event_name: { type: 'string', minLength: 1, maxLength: 255, description: 'wait_for_event (required there): the event the person is waited for' },
    filters: { type: 'array', maxItems: 50, items: { type: 'object' }, description: 'wait_for_event: conditions {field, operator, value} the event (parameters.*) and the person (traits.*, person.*) must all meet, as an event trigger\'s filters (no performed_count_*)' },
    timeout: { type: 'string', maxLength: 20, description: 'wait_for_event (required there): how long to wait, a whole number and a unit (ms, s, m, h, d), e.g. 2d; at most 365d' },
    on_event: { ...nodeId, description: 'wait_for_event: the node the person goes to when the event comes in time' },
    on_timeout: { ...nodeId, description: 'wait_for_event: the node the person goes to when it does not' },
    branches: {
      type: 'array',
      maxItems: 20,
      items: object({ weight: { type: 'number', description: 'above 0; the share is weight / the sum of weights' }, next: nodeId }, ['weight', 'next']),
      description: 'random_split (required there, at least two): each enrolment takes one branch by weight, chosen from its id (the same if the step runs again)',
    },
  },
  ['id', 'type'],
);

const workflowDefinition = object({ nodes: { type: 'array', maxItems: 100, items: node } }, ['nodes']);

/** A campaign's goal (docs/campaigns-runtime.md, Goals and conversions). */
const goal = object(
  {
    event_name: { ...nonEmptyString(255), description: 'The event that converts' },
    within: { type: 'string', pattern: '^[1-9][0-9]{0,5}[mhd]$', description: 'How long after their first message of the campaign the person may convert: minutes, hours or days ("45m", "12h", "3d"), at most 366 days' },
  },
  ['event_name', 'within'],
  { additionalProperties: false, description: 'A person who performs event_name within `within` after their first message of the campaign is counted converted once (stats.converted, a converted event on that message) and leaves the journey' },
);

const describedObject = (description: string) => ({ type: 'object', description }) as const;
const triggerConfig = describedObject('Shape depends on trigger_type; checked at activation. `event_name` is refused (INVALID_TRIGGER_CONFIG): use `event_names`');
export const audienceConfig = describedObject('{filters: [conditions], match: "all"|"any"}; checked at activation');

/** POST /campaigns */
export const campaignCreate = object(
  {
    name: nonEmptyString(255),
    trigger_type: { type: 'string', enum: [...TRIGGER_TYPES] },
    trigger_config: triggerConfig,
    audience_config: audienceConfig,
    workflow_definition: workflowDefinition,
    holdout_percent: { type: 'integer', minimum: 0, maximum: 50, description: 'The share of enrolments (percent, chosen by a hash of each enrolment) held out: recorded held_out and sent nothing, counted in stats.held_out (0)' },
    goal,
    template_id: { ...uuid, description: 'A message template of the workspace: without workflow_definition the campaign gets one push node using it; with one, its push nodes that name no template use it' },
  },
  ['name', 'trigger_type', 'trigger_config'],
);

/** A goal's window the pattern refuses ("3w", "3 days") is said as the rule says one too long is. */
const goalRefusals: readonly SchemaRefusal[] = [{ at: '/goal/within', keyword: 'pattern', message: GOAL_WINDOW_RULE }];
export const campaignCreateRefusals = goalRefusals;

/** PUT /campaigns/{campaignId}: partial; each object sent replaces the stored one whole. */
export const campaignUpdate = object({
  name: nonEmptyString(255),
  trigger_config: triggerConfig,
  audience_config: audienceConfig,
  workflow_definition: workflowDefinition,
holdout_percent: { type: 'integer', minimum: 0, maximum: 50, description: 'The share of enrolments (percent, chosen by a hash of each enrolment) held out: recorded held_out and sent nothing, counted in stats.held_out (0)' },
  goal: { ...goal, nullable: true, description: `${goal.description}; null removes it` },
  status: { type: 'string', enum: [...SETTABLE_STATUSES] },
});

export const campaignUpdateRefusals: readonly SchemaRefusal[] = [
  ...goalRefusals,
  { at: '/status', keyword: 'enum', message: `must be one of ${SETTABLE_STATUSES.join(', ')}: scheduled and failed are set only by the system` },
];

/** GET /campaigns */
export const campaignList = object({
  ...pagination(100),
  status: { type: 'string', enum: [...CAMPAIGN_STATUSES] },
  trigger_type: { type: 'string', enum: [...TRIGGER_TYPES] },
  q: { type: 'string', maxLength: 255, description: 'Only campaigns whose name contains this text (any case)' },
});

/** GET /workspaces/{workspaceId}/campaigns/{campaignId}/messages */
export const campaignMessages = object({ limit: queryLimit(50), ...pageBack });

/**
 * PUT /workspaces/{workspaceId}/campaigns/{campaignId}/node-messages/{nodeId}: fields sent replace,
 * `null` removes, omitted stay. Each node type takes its own (push: title, body, image_url,
 * action_url, custom_data; email: subject, html, text, preheader; sms: body); another type's
 * field is refused by the rule (src/domain/campaigns.ts setNodeMessage), which knows the node.
 */
export const nodeMessage = object({ ...nullable(pushContent), ...nullable(emailContent), ...nullable(webhookCall) });

/** POST /workspaces/{workspaceId}/templates */
export const templateCreate = object(
  { name: nonEmptyString(255), channel: TEMPLATE_CHANNEL, ...pushContent, ...emailContent },
  ['name', 'channel'],
);

/** PUT /workspaces/{workspaceId}/templates/{templateId}: fields sent replace, `null` clears a content field, omitted stay. */
export const templateUpdate = object({ name: nonEmptyString(255), channel: TEMPLATE_CHANNEL, ...nullable(pushContent), ...nullable(emailContent) });

/**
 * POST /campaigns/{campaignId}/trigger (docs/ingest.md). The audience is the campaign's own, so
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

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

const campaignStatus = enumOf(...CAMPAIGN_STATUSES);
const triggerType = enumOf(...TRIGGER_TYPES);
/** A campaign; template_id only when the campaign was created with one. */
const campaignFields: Record<string, Schema> = {
    id: uuidText,
    workspace_id: uuidText,
    name: str,
    status: campaignStatus,
    trigger_type: triggerType,
    trigger_config: freeObject,
    audience_config: freeObject,
    workflow_definition: { type: 'object', properties: { nodes: { type: 'array', items: freeObject } }, required: ['nodes'], additionalProperties: true },
    template_id: uuidText,
    holdout_percent: { ...count, description: 'The share of enrolments held out (percent); only when above 0' },
    goal: { ...goal, description: 'Only on a campaign with a goal' },
    created_at: isoTime,
    updated_at: isoTime,
};
const campaignRequired = ['id', 'workspace_id', 'name', 'status', 'trigger_type', 'trigger_config', 'audience_config', 'workflow_definition', 'created_at', 'updated_at'];
export const campaign = closed(campaignFields, campaignRequired);
/** GET /campaigns: each campaign with its stats at a glance (all channels together, test sends left out). */
const listedCampaign = closed(
  {
    ...campaignFields,
    stats: closed({
      enrolled: { ...count, description: 'Entries of people into the campaign' },
      sent: { ...count, description: 'Messages that went to a provider' },
      delivered: { ...count, description: 'Email and SMS the provider reported delivered' },
      failed: count,
      last_triggered_at: { ...nullableIsoTime, description: 'The latest enrolment' },
    }),
  },
  [...campaignRequired, 'stats'],
);
/** `sent` counts every message that went to a provider; opened and clicked, messages with such an event. */
const messageCounters: Record<string, Schema> = Object.fromEntries(['sent', 'skipped', 'policy_suppressed', 'failed', 'delivered', 'bounced', 'complained', 'opened', 'clicked'].map((c) => [c, count]));
/** A campaign's stats (README, Routes). */
const campaignStatsFields: Record<string, Schema> = {
  enrolled: { ...count, description: 'Entries of people into the campaign' },
  triggered: { ...count, description: 'Distinct runs (a matching event, a webhook call, a schedule run) that enrolled someone' },
  held_out: { ...count, description: 'Enrolments held out (holdout_percent): sent nothing; only on a campaign that holds out, or did' },
  converted: { ...count, description: 'People who reached the goal, each once; only on a campaign with a goal, or that had one' },
  ...messageCounters,
  by_channel: closed(Object.fromEntries(CHANNELS.map((c) => [c, closed(messageCounters)]))),
  last_triggered_at: { ...nullableIsoTime, description: 'The latest enrolment' },
};
export const campaignStats = closed(campaignStatsFields, Object.keys(campaignStatsFields).filter((k) => k !== 'held_out' && k !== 'converted'));
/** A journey's per-node stats, by node id (docs/campaigns-runtime.md, Journeys). */
const nodeStats = {
  type: 'object',
  description: 'Only for a journey (a workflow naming next, or with a split, wait_for_event, random_split or exit): per node id, entered, completed, and for a split, wait_for_event or random_split took (per next node id)',
  additionalProperties: closed({ entered: count, completed: count, took: { type: 'object', additionalProperties: count } }, ['entered', 'completed']),
} as const;
/** A message template (docs/channels.md). */
export const messageTemplate = closed({
  id: uuidText,
  workspace_id: uuidText,
  name: str,
  channel: enumOf(...TEMPLATE_CHANNELS),
  title: nullableStr,
  body: nullableStr,
  image_url: nullableStr,
  action_url: nullableStr,
  custom_data: { ...freeObject, nullable: true },
  subject: nullableStr,
  html: nullableStr,
  text: nullableStr,
  preheader: nullableStr,
  created_at: isoTime,
  updated_at: isoTime,
});
const nodeContent = closed(
  { title: str, body: str, image_url: str, action_url: str, custom_data: freeObject, subject: str, html: str, text: str, preheader: str, url: str, template_id: uuidText },
  [],
  { description: "The node's own content (push: title, body, image_url, action_url, custom_data; email: subject, html, text, preheader; sms: body) and the template it uses; fields it does not set are absent" },
);


const TEMPLATES = '/workspaces/{workspaceId}/templates';
export const campaignNotFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: "No such campaign in the workspace (unknown, another workspace's, or not a UUID)" };
const templateNotFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: "No such template in the workspace (unknown, another workspace's, or not a UUID)" };
const templateBody = (description: string): ResponseDoc => ok(description, { data: closed({ template: messageTemplate }) });
const TEMPLATE_PARSE = 'a content field that is not a valid Liquid template (details name it)';

/** A fresh trigger, and the replay of one with the same Idempotency-Key. */
const triggerFields = {
  campaign_id: uuidText,
  triggered_at: { ...isoTime, description: 'When the trigger was made (on a replay, the first trigger\'s time)' },
  people_queued: { ...count, description: 'People enrolled by the trigger; 0 when nobody matched; the ceiling when truncated' },
  audience_truncated: { ...enumOf(true), description: 'Present when more people matched than HERALD_TRIGGER_AUDIENCE_CEILING: the others were not triggered' },
  idempotency_key: { type: 'string', description: 'The Idempotency-Key sent, echoed; absent without one' },
  message: { type: 'string', description: 'Human-readable; a truncation warning is appended when truncated' },
};
const triggerRequired = ['success', 'campaign_id', 'status', 'triggered_at', 'people_queued', 'message'];
const triggerAccepted: ResponseDoc = {
  description: 'Fresh (`processing`): the audience is enrolled and its pushes are sent asynchronously. Replay (`completed`, `duplicate`): the Idempotency-Key was used for this campaign within 24 hours with the same trigger_data, finished; nothing was sent again',
  schema: {
    anyOf: [
      closed({ success, status: enumOf('processing'), ...triggerFields }, triggerRequired),
      closed({ success, status: enumOf('completed'), duplicate: enumOf(true), ...triggerFields }, [...triggerRequired, 'duplicate']),
    ],
  },
};

export const campaignResponses: Record<string, RouteResponses> = {
  'POST /campaigns/{campaignId}/trigger': {
    success: { 202: triggerAccepted },
    errors: {
      400: { codes: [], why: 'The campaign is not a webhook campaign, or not active (the message names its status); an Idempotency-Key sent empty or twice, with a character outside printable ASCII, or over 255 bytes; a body field other than workspace_id and trigger_data' },
      403: { codes: [], why: "workspace_id in the body is not the key's workspace" },
      404: campaignNotFound,
      409: { codes: ['TRIGGER_IN_PROGRESS'], why: 'A trigger with this Idempotency-Key (same trigger_data) is still in progress; nothing was sent again' },
      422: { codes: ['IDEMPOTENCY_KEY_REUSED'], why: 'This Idempotency-Key was used for the campaign within 24 hours with different trigger_data; nothing was sent' },
      503: { codes: [], why: 'An Idempotency-Key was sent and the store of claims (NATS KV with NATS_URL, else PostgreSQL) is unavailable; nothing was sent' },
    },
  },
  'POST /campaigns': {
    success: { 201: ok('The campaign, a draft', { data: closed({ campaign, message: str, warnings: { type: 'array', items: str, description: 'An email node whose html has no {{ unsubscribe_url }} (docs/channels.md)' } }) }) },
    errors: { 400: { codes: ['INVALID_TRIGGER_CONFIG'], why: 'trigger_config.event_name (replaced by event_names); a template_id naming no template of the workspace, a node topic_id naming no topic of it, repeated node ids, a delay node without minutes (VALIDATION_ERROR)' } },
  },
  'GET /campaigns': {
    success: { 200: ok('A page of campaigns, newest first, each with its stats at a glance; total counts every match', { campaigns: { type: 'array', items: listedCampaign }, total: count, limit: count, offset: count }) },
  },
  'GET /workspaces/{workspaceId}/campaigns/{campaignId}/messages': {
    success: { 200: ok("The campaign's messages (every channel, test sends included), newest first", { messages: { type: 'array', items: pushMessage }, total: { ...count, description: 'Messages in this page' }, limit: count }) },
    errors: { 404: campaignNotFound },
  },
  'GET /campaigns/{campaignId}': {
    success: { 200: ok('The campaign and its stats', { data: closed({ campaign, stats: campaignStats, nodes: nodeStats, message: str }, ['campaign', 'stats', 'message']) }) },
    errors: { 404: campaignNotFound },
  },
  'PUT /campaigns/{campaignId}': {
    success: { 200: ok('Updated (a schedule campaign activated with a future send_at is `scheduled`)', { message: enumOf('Campaign updated'), data: closed({ campaign }), warnings: { type: 'array', items: str, description: 'Present when an email node\'s html has no {{ unsubscribe_url }} (docs/channels.md)' } }, ['message', 'data']) },
    errors: {
      400: { codes: ['ACTIVATION_FAILED', 'INVALID_TRIGGER_CONFIG'], why: 'Status scheduled or failed (VALIDATION_ERROR: the system sets them); going or staying live against the activation rules (ACTIVATION_FAILED, details list every problem); trigger_config.event_name; a node topic_id naming no topic of the workspace (VALIDATION_ERROR)' },
      404: campaignNotFound,
    },
  },
  'DELETE /campaigns/{campaignId}': {
    success: { 200: message('Deleted with its enrolments; push records stay') },
    errors: { 404: campaignNotFound, 409: { codes: ['CAMPAIGN_ACTIVE'], why: 'The campaign is active or scheduled: pause it first' } },
  },
  'PUT /workspaces/{workspaceId}/campaigns/{campaignId}/node-messages/{nodeId}': {
    success: {
      200: ok("The node's content now", {
        data: closed({ node_id: str, message: nodeContent }),
        warnings: { type: 'array', items: str, description: 'Present when an email node\'s html has no {{ unsubscribe_url }} (docs/channels.md)' },
      }, ['data']),
    },
    errors: {
      400: { codes: ['ACTIVATION_FAILED'], why: `The node is a delay node, or a field sent belongs to another node type (VALIDATION_ERROR, details name each field); ${TEMPLATE_PARSE}; a live campaign left failing the activation rules` },
      404: { codes: ['NOT_FOUND'], why: "No such campaign in the workspace, or no such node in its workflow" },
    },
  },
  [`POST ${TEMPLATES}`]: { success: { 201: templateBody('The template') }, errors: { 400: { codes: [], why: TEMPLATE_PARSE } } },
  [`GET ${TEMPLATES}`]: { success: { 200: ok('The templates, newest first', { templates: { type: 'array', items: messageTemplate }, total: count }) } },
  [`GET ${TEMPLATES}/{templateId}`]: { success: { 200: templateBody('The template') }, errors: { 404: templateNotFound } },
  [`PUT ${TEMPLATES}/{templateId}`]: { success: { 200: templateBody('The updated template') }, errors: { 400: { codes: [], why: TEMPLATE_PARSE }, 404: templateNotFound } },
  [`DELETE ${TEMPLATES}/{templateId}`]: {
    success: { 200: message('Deleted') },
    errors: { 404: templateNotFound, 409: { codes: ['TEMPLATE_IN_USE'], why: 'An active or scheduled campaign uses the template' } },
  },
};

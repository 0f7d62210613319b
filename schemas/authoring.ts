// Requests and answers of the dashboard's campaign authoring support routes (README, Dashboard):
// the audience preview, the template preview, a node's test send. Session routes on the path's
// workspace.
import { CHANNELS, MESSAGE_SKIP_REASONS, PROVIDER_STATUSES, SEND_STATUSES } from '../src/domain/messages.js';
import { object, uuid } from './common.js';
import { audienceConfig, emailContent, webhookCall } from './campaigns.js';
import { dashboardPerson } from './people.js';
import { pushContent } from './push-send.js';
import { closed, count, dashboardPersonNotFound, enumOf, freeObject, nullableStr, ok, str, uuidText, type RouteResponses } from './response-parts.js';

/** Sample size of the audience preview. */
export const AUDIENCE_SAMPLE = 10;
/** The audience preview counts up to this many people (`count_capped` beyond). */
export const AUDIENCE_COUNT_MAX = 10_000;

/** POST /workspaces/{workspaceId}/audiences/preview */
export const audiencePreview = object({ audience_config: audienceConfig }, ['audience_config']);

/** POST /workspaces/{workspaceId}/templates/preview: the content of one channel, as a node or template holds it. */
export const templatePreview = object(
  {
    channel: { type: 'string', enum: [...CHANNELS] },
    content: object({ ...pushContent, ...emailContent, ...webhookCall }, [], { description: "The channel's fields (push: title, body, image_url, action_url, custom_data; email: subject, html, text, preheader; sms: body; webhook: url, body); the other channels' are ignored" }),
    person_id: { ...uuid, description: "A person of the workspace (the dashboard's UUID) whose fields and traits the templates see; without it, `person` and `traits` are empty" },
    variables: { type: 'object', description: 'Template variables (top-level names), as a send\'s' },
  },
  ['channel', 'content'],
);

/** POST /workspaces/{workspaceId}/campaigns/{campaignId}/test-send */
export const testSend = object(
  {
    node_id: { type: 'string', minLength: 1, maxLength: 100, description: 'A push, email or sms node of the campaign' },
    person_id: { ...uuid, description: "The recipient: a person of the workspace (the dashboard's UUID)" },
  },
  ['node_id', 'person_id'],
);

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

const rendered = closed(
  {
    title: str, body: str, image_url: str, action_url: str, custom_data: freeObject,
    subject: str,
    html: { ...nullableStr, description: 'email: as sent, the preheader as its first, hidden, text; null without html' },
    text: { type: 'string', description: 'email: the text part as sent (derived from the html when the content has none)' },
    preheader: nullableStr,
    url: str,
  },
  [],
  { description: 'push: the fields the content has (title, body, image_url, action_url, custom_data); email: subject, html, text, preheader; sms: body; webhook: url, body' },
);

const testSendResult = closed(
  {
    message_id: { ...uuidText, description: 'The record, tagged `test`, in the person\'s message history and the campaign\'s message list' },
    node_id: str,
    channel: enumOf(...CHANNELS),
    status: { ...enumOf(...SEND_STATUSES, ...PROVIDER_STATUSES), description: 'As a campaign send records it (the sandbox answers delivered, bounced or complained at once); quiet hours and the caps do not apply' },
    provider: { type: 'string', description: '`sandbox`, `fcm`, `apns`, `smtp`, `twilio`, or `none` when nothing reached a provider' },
    provider_id: nullableStr,
    address: { ...nullableStr, description: 'email and sms: the address sent to; null for push and when there was none' },
    skip_reason: { type: 'string', enum: [...MESSAGE_SKIP_REASONS, null], nullable: true, description: 'Why nothing was sent (skipped): the person unsubscribed, suppressed or bounced, no device, address or number, the address suppressed' },
    error: nullableStr,
  },
);

export const authoringResponses: Record<string, RouteResponses> = {
  'POST /workspaces/{workspaceId}/audiences/preview': {
    success: {
      200: ok('How many people match, and a sample of them', {
        count: { ...count, description: `People of the workspace the audience matches, counted up to ${AUDIENCE_COUNT_MAX.toLocaleString('en-US')}` },
        count_capped: { type: 'boolean', description: `true when more than ${AUDIENCE_COUNT_MAX.toLocaleString('en-US')} match: count is then ${AUDIENCE_COUNT_MAX.toLocaleString('en-US')}` },
        sample: { type: 'array', maxItems: AUDIENCE_SAMPLE, items: dashboardPerson, description: `Up to ${AUDIENCE_SAMPLE} of them, oldest first` },
      }),
    },
    errors: { 400: { codes: ['VALIDATION_ERROR'], why: 'audience_config breaks the rules activation checks (an unknown operator, a field that is not traits.<path> or person.*, a bad value, match not all or any): details name each field' } },
  },
  'POST /workspaces/{workspaceId}/templates/preview': {
    success: { 200: ok('The content rendered', { rendered }) },
    errors: {
      400: { codes: ['VALIDATION_ERROR'], why: 'A field that does not parse or render as Liquid: details name it (`content.<field>`) and the message its line and column' },
      404: dashboardPersonNotFound,
    },
  },
  'POST /workspaces/{workspaceId}/campaigns/{campaignId}/test-send': {
    success: { 200: ok('The send of that node to that person, recorded with tags ["test"]', { data: testSendResult }) },
    errors: {
      400: { codes: ['VALIDATION_ERROR'], why: 'The node is a delay node (details name node_id)' },
      404: { codes: ['NOT_FOUND', 'PERSON_NOT_FOUND'], why: 'No such campaign in the workspace, or no such node in its workflow (NOT_FOUND); no person with this UUID in the workspace (PERSON_NOT_FOUND)' },
    },
  },
};

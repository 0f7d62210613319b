// Request schemas of the push send routes (INTERFACE 4.5, DECISIONS §3, §10, §11). Which content
// fields are templates, and how a template error is reported, is src/domain/templates.ts.
import { DEVICE_PLATFORMS } from '../src/domain/tokens.js';
import { nonEmptyString, object, pagination, timestamp, type Schema, type SchemaRefusal } from './common.js';

const text = (maxLength: number, description?: string): Schema => ({ type: 'string', maxLength, ...(description ? { description } : {}) });

/** A push's content: what a send, a campaign's push node and a message template carry. */
export const pushContent = {
  title: text(1_000, 'Liquid template'),
  body: text(4_000, 'Liquid template'),
  image_url: text(2_048),
  action_url: text(2_048),
  custom_data: { type: 'object', description: 'Carried in the provider message (reserved provider keys stripped); string values are Liquid templates' },
};

/** What one send carries, shared by the single and the batch send. */
const content = {
  ...pushContent,
  variables: { type: 'object', description: 'Template variables' },
  event_id: text(255, 'Attribution'),
  campaign_id: text(255, 'Attribution'),
  tags: { type: 'array', maxItems: 50, items: text(255) },
};

const platform: Schema = { type: 'string', enum: [...DEVICE_PLATFORMS] };

/** POST .../push/send */
export const pushSend = object(
  {
    external_id: { ...nonEmptyString(255), description: "Your own user id (the person's external id); the person UUID is not accepted" },
    ...content,
    scheduled_at: { ...timestamp, description: 'A future instant holds the send until then (202); at or before now sends at once' },
  },
  ['external_id'],
);

/** POST .../push/send/batch: one content to up to 1,000 recipients. */
export const pushBatch = object(
  {
    ...content,
    recipients: {
      type: 'array',
      minItems: 1,
      maxItems: 1_000,
      items: object(
        {
          // A non-UUID fails that recipient only (INTERFACE 4.5), so the schema takes any string.
          user_id: { ...nonEmptyString(255), description: 'The person UUID (not the external id)' },
          device_token: { type: 'string', minLength: 1, maxLength: 4096, description: "Selects one of the person's active devices" },
          platform: { ...platform, description: "Only the person's devices of this platform" },
          variables: { type: 'object', description: 'Win over the top-level variables' },
        },
        ['user_id'],
      ),
    },
  },
  ['recipients'],
);

export const pushBatchRefusals: readonly SchemaRefusal[] = [{ at: '/recipients', keyword: 'maxItems', code: 'BATCH_TOO_LARGE', message: 'At most 1,000 recipients per batch' }];

/** GET /workspaces/{workspaceId}/people/{personId}/messages */
export const messageHistory = object(pagination(50));

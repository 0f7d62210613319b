import { PUSH_PLATFORMS, SUPPRESSION_TYPES } from '../src/domain/tokens.js';
import { object, pagination, uuid, type Schema, type SchemaRefusal } from './common.js';
import { deviceToken, notASubscription } from './devices.js';

// ---------------------------------------------------------------------------------------
// Token suppression and validation (INTERFACE 2.9, 3.5, 4.5; DECISIONS §3)

const platform: Schema = { type: 'string', enum: [...PUSH_PLATFORMS] };

/** GET /workspaces/{id}/push/suppressions (dashboard). */
export const suppressionList = object(pagination(50));

export const tokenSuppress = object(
  {
    device_token: deviceToken,
    platform,
    suppression_type: { type: 'string', enum: [...SUPPRESSION_TYPES] },
    reason: { type: 'string', maxLength: 1000 },
    source_push_id: { ...uuid, description: 'A push record (message_id) of this workspace' },
    source_campaign_id: uuid,
    workspace_id: { description: 'Ignored: the workspace comes from the API key' },
  },
  ['device_token', 'platform', 'suppression_type'],
);

export const tokenSuppressRefusals: readonly SchemaRefusal[] = [
  // INTERFACE 7: an unknown type is its own documented 400, listing the types.
  { at: '/suppression_type', keyword: 'enum', code: 'INVALID_SUPPRESSION_TYPE', message: `suppression_type must be one of: ${SUPPRESSION_TYPES.join(', ')}` },
  notASubscription('/device_token'),
];

/** 1 to 1,000 tokens (DECISIONS §3); more is BATCH_TOO_LARGE (the route's refusals). */
export const tokenValidate = object(
  {
    tokens: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: object(
        {
          // Any text: a malformed token is a result (`invalid_format`), not a refused request.
          token: { type: 'string' },
          platform,
        },
        ['token', 'platform'],
      ),
    },
  },
  ['tokens'],
);

// End of token suppression and validation
// ---------------------------------------------------------------------------------------

import { PUSH_PLATFORMS, SUPPRESSION_TYPES, TOKEN_PROBLEMS } from '../src/domain/tokens.js';
import { nonEmptyString, object, pagination, uuid, type SchemaRefusal } from './common.js';
import { deviceToken, notASubscription } from './devices.js';
import { maskedToken } from './push-send.js';
import { closed, count, enumOf, isoTime, ok, PUSH, str, success, uuidText, type RouteResponses } from './response-parts.js';

// ---------------------------------------------------------------------------------------
// Token suppression and validation (README, Request bodies and Routes)

const platform = { type: 'string', enum: [...PUSH_PLATFORMS] } as const;

/** GET /workspaces/{id}/push/suppressions (dashboard). */
export const suppressionList = object({ ...pagination(50), q: { ...nonEmptyString(4096), description: 'Only the tokens starting with this (case-sensitive)' } });

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
  // An unknown type is its own documented 400, listing the types.
  { at: '/suppression_type', keyword: 'enum', code: 'INVALID_SUPPRESSION_TYPE', message: `suppression_type must be one of: ${SUPPRESSION_TYPES.join(', ')}` },
  notASubscription('/device_token'),
];

/** 1 to 1,000 tokens (README, Request bodies); more is BATCH_TOO_LARGE (the route's refusals). */
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

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

const pushPlatform = enumOf(...PUSH_PLATFORMS);
/** A token suppression record; the answer's body is the record at the top level (README, Routes). */
export const tokenSuppression = closed({
  success,
  id: { ...uuidText, description: 'Lifts it: DELETE .../push/tokens/suppress/{id}' },
  device_token: maskedToken,
  platform: pushPlatform,
  suppression_type: enumOf(...SUPPRESSION_TYPES),
  suppressed_at: isoTime,
  already_suppressed: { type: 'boolean' },
});
/** A suppression as the dashboard's list shows it. */
export const listedSuppression = closed({
  id: uuidText,
  device_token: maskedToken,
  platform: pushPlatform,
  suppression_type: enumOf(...SUPPRESSION_TYPES),
  reason: { type: 'string', nullable: true },
  suppressed_at: isoTime,
});
/** One validated token, in request order. */
export const tokenValidation = closed(
  {
    index: count,
    device_token: maskedToken,
    platform: pushPlatform,
    valid: { type: 'boolean' },
    reason: { ...enumOf(...TOKEN_PROBLEMS), description: 'Present when not valid; the first that applies, in this order' },
  },
  ['index', 'device_token', 'platform', 'valid'],
);

/** Token suppression by key and by session (the dashboard): the same handler, the same answers. */
const tokenSuppressDoc: RouteResponses = {
  success: {
    201: { description: 'A new suppression: later sends to the token are skipped (`device_token_suppressed`)', schema: { allOf: [tokenSuppression, { properties: { already_suppressed: enumOf(false) } }] } },
    200: { description: 'The token was suppressed under this type already: that suppression', schema: { allOf: [tokenSuppression, { properties: { already_suppressed: enumOf(true) } }] } },
  },
  errors: { 400: { codes: ['INVALID_SUPPRESSION_TYPE'], why: 'A `suppression_type` other than the four (the message lists them)' } },
  badRequest: 'a browser subscription object as the token, a `source_push_id` naming no push record of this workspace',
};
const tokenLiftDoc: RouteResponses = {
  success: { 200: ok('The suppression is lifted', { message: str, id: uuidText }) },
  errors: { 404: { codes: ['NOT_FOUND'], why: 'No such suppression in this workspace (unknown, another workspace\'s, or not a UUID)' } },
};

export const pushTokenResponses: Record<string, RouteResponses> = {
  [`POST ${PUSH}/tokens/validate`]: {
    success: {
      200: ok('One result per token, in request order', {
        results: { type: 'array', items: tokenValidation },
        summary: closed({ total: count, valid: count, invalid: count }),
      }),
    },
    errors: { 400: { codes: ['BATCH_TOO_LARGE'], why: 'More than 1,000 tokens' } },
  },
  [`GET ${PUSH}/suppressions`]: {
    success: { 200: ok('A page of token suppressions, newest first', { suppressions: { type: 'array', items: listedSuppression }, total: count, limit: count, offset: count }) },
  },
  [`POST ${PUSH}/tokens/suppress`]: tokenSuppressDoc,
  [`POST ${PUSH}/suppressions`]: tokenSuppressDoc,
  [`DELETE ${PUSH}/tokens/suppress/{id}`]: tokenLiftDoc,
  [`DELETE ${PUSH}/suppressions/{id}`]: tokenLiftDoc,
};

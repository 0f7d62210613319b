import { DEVICE_PLATFORMS } from '../src/domain/tokens.js';
import { object, type SchemaRefusal } from './common.js';
import { closed, count, enumOf, isoTime, message, nullableStr, ok, personNotFound, str, uuidText, type RouteResponses } from './response-parts.js';

const text = { type: 'string', maxLength: 255 } as const;

/**
 * A push token as it is registered or suppressed (README, Request bodies). A browser push subscription
 * (`{endpoint, keys}`, or that object as JSON text) is not a token.
 */
export const deviceToken = { type: 'string', minLength: 10, maxLength: 4096, pattern: '^(?!\\s*\\{)' } as const;

/** Words deviceToken's subscription refusal for the field at `at`. */
export const notASubscription = (at: string): SchemaRefusal => ({ at, keyword: 'pattern', message: 'must be the push registration token, not a browser subscription object' });

export const deviceRegister = object(
  {
    token: deviceToken,
    platform: { type: 'string', enum: [...DEVICE_PLATFORMS] },
    device_name: text,
    device_model: text,
    os_version: text,
    app_version: text,
    person_id: { not: {}, description: 'Refused: the person comes from the path' },
    workspace_id: { not: {}, description: 'Refused: the workspace comes from the API key' },
  },
  ['token', 'platform'],
);

export const deviceRegisterRefusals: readonly SchemaRefusal[] = [
  notASubscription('/token'),
  { at: '/person_id', message: 'is not accepted: the person comes from the path' },
  { at: '/workspace_id', message: 'is not accepted: the workspace comes from the API key' },
];

export const deviceUnregister = object({ token: { type: 'string', minLength: 1, maxLength: 4096 } });
export const deviceUnregisterQuery = object({ token: { type: 'string', minLength: 1, maxLength: 4096 } });

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

/** A device as the routes answer it (README, Request bodies). */
export const device = closed({
  id: uuidText,
  workspace_id: uuidText,
  person_id: uuidText,
  device_token: str,
  platform: enumOf(...DEVICE_PLATFORMS),
  device_name: nullableStr,
  device_model: nullableStr,
  os_version: nullableStr,
  app_version: nullableStr,
  is_active: { type: 'boolean' },
  is_valid: { type: 'boolean' },
  last_used_at: isoTime,
  registration_count: { type: 'integer', minimum: 1 },
  created_at: isoTime,
  updated_at: isoTime,
});

export const deviceResponses: Record<string, RouteResponses> = {
  'POST /people/{id}/devices': {
    success: {
      201: ok('A new device record', { device_id: uuidText, message: str, person_created: { ...enumOf(true), description: 'Present when this call created the person' } }, ['device_id', 'message']),
      200: ok('The token was registered already: updated, re-activated, moved to this person', { device_id: uuidText, message: str, person_created: enumOf(true) }, ['device_id', 'message']),
    },
    badRequest: '`person_id` or `workspace_id` in the body, a browser subscription object as the token, a userId over 255 characters',
  },
  'GET /people/{id}/devices': {
    success: { 200: ok("The person's devices, most recently used first", { devices: { type: 'array', items: device }, count }) },
    errors: { 404: personNotFound },
  },
  'DELETE /people/{id}/devices': {
    success: { 200: message('The device is inactive') },
    errors: { 404: { codes: ['NOT_FOUND'], why: 'This person has no such token' } },
    badRequest: 'no token, in the body or as `?token=`',
  },
};

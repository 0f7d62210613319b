import { KEY_ENVIRONMENTS, KEY_TYPES } from '../src/domain/principals.js';
import { nonEmptyString, object, timestamp, type Schema } from './common.js';
import { closed, count, enumOf, isoTime, message, nullableIsoTime, ok, str, strings, uuidText, type HandlerErrors, type RouteResponses } from './response-parts.js';

const permissions = { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 64 } as const;
const ipWhitelist = { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 100 } as const;
const expiresAt = { ...timestamp, nullable: true } as const;
const description = { type: 'string', maxLength: 1000 } as const;
const environment = { type: 'string', enum: [...KEY_ENVIRONMENTS] } as const;

export const apiKeyCreate = object(
  {
    name: nonEmptyString(255),
    permissions,
    key_type: { type: 'string', enum: [...KEY_TYPES] },
    environment,
    expires_at: expiresAt,
    description,
    ip_whitelist: ipWhitelist,
  },
  ['name'],
);

export const apiKeyUpdate = object({
  name: nonEmptyString(255),
  description,
  permissions,
  environment,
  expires_at: expiresAt,
  ip_whitelist: ipWhitelist,
});

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

const keyPrefix: Schema = { type: 'string', pattern: '^(ws|pk)_live_[0-9a-f]{8}_[0-9A-Za-z]{8}$' };
const fullKey: Schema = { type: 'string', pattern: '^(ws|pk)_live_[0-9a-f]{8}_[0-9A-Za-z]{8}\\.[0-9a-f]{64}$', description: 'The full credential `<prefix>.<secret>`, shown only here' };
const keyType = enumOf(...KEY_TYPES);
const apiKeyFields = {
  id: uuidText,
  key_prefix: keyPrefix,
  name: str,
  description: str,
  permissions: strings,
  key_type: keyType,
  environment: enumOf(...KEY_ENVIRONMENTS),
  expires_at: nullableIsoTime,
  ip_whitelist: strings,
  created_at: isoTime,
  last_used_at: nullableIsoTime,
};
/** An API key without the secret: list, get, update (README, Request bodies). */
export const apiKey = closed(apiKeyFields);
/** The create response: the key's metadata and its full credential. */
export const newApiKey = closed({ ...apiKeyFields, key: fullKey });
/** The refresh response (README, Request bodies). */
export const refreshedApiKey = closed({ id: uuidText, key_prefix: keyPrefix, key: fullKey, permissions: strings, key_type: keyType });
export const apiKeyUsage = closed({
  key_id: uuidText,
  total_requests: count,
  last_used_at: nullableIsoTime,
  by_day: { type: 'array', items: closed({ date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }, requests: count }) },
  by_route: { type: 'object', additionalProperties: count, description: 'Route id (e.g. `POST /track`) → requests' },
});

const keyNotFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: 'No such key in the workspace (unknown, revoked, or not a UUID)' };
const KEYS = '/workspaces/{workspaceId}/api-keys';

export const apiKeyResponses: Record<string, RouteResponses> = {
  [`POST ${KEYS}`]: {
    success: { 201: ok('The key with its full credential, shown once', { api_key: newApiKey, warning: str }) },
    errors: { 400: { codes: ['PUBLIC_KEY_PERMISSION'], why: 'Unknown permission names, none for a secret key, `expires_at` not in the future (VALIDATION_ERROR); a public key asking beyond its set' } },
    details400: 'permissions',
  },
  [`GET ${KEYS}`]: { success: { 200: ok('The live keys, newest first', { api_keys: { type: 'array', items: apiKey }, total: count }) } },
  [`GET ${KEYS}/{keyId}`]: { success: { 200: ok('The key', { api_key: apiKey }) }, errors: { 404: keyNotFound } },
  [`PUT ${KEYS}/{keyId}`]: {
    success: { 200: ok('The updated key', { api_key: apiKey, warning: { type: 'string', description: 'Present when ip_whitelist holds entries that never match' } }, ['api_key']) },
    errors: { 400: { codes: ['PUBLIC_KEY_PERMISSION'], why: 'Unknown permission names, `expires_at` not in the future (VALIDATION_ERROR); a public key asking beyond its set' }, 404: keyNotFound },
    details400: 'permissions',
  },
  [`DELETE ${KEYS}/{keyId}`]: { success: { 200: message('Revoked; the key stops authenticating at once') }, errors: { 404: keyNotFound } },
  [`POST ${KEYS}/{keyId}/refresh`]: {
    success: { 200: ok('The new credential; the old secret stops at once', { api_key: refreshedApiKey, warning: str }) },
    errors: { 404: keyNotFound },
  },
  [`GET ${KEYS}/{keyId}/usage`]: { success: { 200: ok('Usage of the key (lags by up to 1 s)', { usage: apiKeyUsage }) }, errors: { 404: keyNotFound } },
};

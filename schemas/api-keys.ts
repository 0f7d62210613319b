import { KEY_ENVIRONMENTS, KEY_TYPES } from '../src/domain/principals.js';
import { nonEmptyString, object, timestamp, type Schema } from './common.js';

const permissions: Schema = { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 64 };
const ipWhitelist: Schema = { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 100 };
const expiresAt: Schema = { ...timestamp, nullable: true };
const description: Schema = { type: 'string', maxLength: 1000 };
const environment: Schema = { type: 'string', enum: [...KEY_ENVIRONMENTS] };

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

import { DEVICE_PLATFORMS } from '../src/domain/tokens.js';
import { object, type Schema, type SchemaRefusal } from './common.js';

const text: Schema = { type: 'string', maxLength: 255 };

/**
 * A push token as it is registered or suppressed (INTERFACE 8.3). A browser push subscription
 * (`{endpoint, keys}`, or that object as JSON text) is not a token.
 */
export const deviceToken: Schema = { type: 'string', minLength: 10, maxLength: 4096, pattern: '^(?!\\s*\\{)' };

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

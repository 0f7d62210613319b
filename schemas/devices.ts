import type { SchemaRefusal } from '../src/routes.js';
import { object, type Schema } from './common.js';

const text: Schema = { type: 'string', maxLength: 255 };

export const deviceRegister = object(
  {
    // A browser push subscription (`{endpoint, keys}`, or that object as JSON text) is not a token.
    token: { type: 'string', minLength: 10, maxLength: 4096, pattern: '^(?!\\s*\\{)' },
    platform: { type: 'string', enum: ['ios', 'android', 'web'] },
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
  { at: '/token', keyword: 'pattern', message: 'must be the push registration token, not a browser subscription object' },
  { at: '/person_id', message: 'is not accepted: the person comes from the path' },
  { at: '/workspace_id', message: 'is not accepted: the workspace comes from the API key' },
];

export const deviceUnregister = object({ token: { type: 'string', minLength: 1, maxLength: 4096 } });
export const deviceUnregisterQuery = object({ token: { type: 'string', minLength: 1, maxLength: 4096 } });

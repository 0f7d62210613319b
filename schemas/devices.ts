import { object, type Schema } from './common.js';

const text: Schema = { type: 'string', maxLength: 255 };

export const deviceRegister = object(
  {
    token: { type: 'string', minLength: 10, maxLength: 4096 },
    platform: { type: 'string', enum: ['ios', 'android', 'web'] },
    device_name: text,
    device_model: text,
    os_version: text,
    app_version: text,
  },
  ['token', 'platform'],
);

export const deviceUnregister = object({ token: { type: 'string', minLength: 1, maxLength: 4096 } });
export const deviceUnregisterQuery = object({ token: { type: 'string', minLength: 1, maxLength: 4096 } });

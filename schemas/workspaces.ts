import { nonEmptyString, object } from './common.js';

export const workspaceCreate = object({ name: nonEmptyString(255) }, ['name']);

// send_policy's inner rules (INTERFACE 2.10) are checked by domain/send-policy.ts, which
// answers INVALID_SEND_POLICY rather than a generic validation error.
export const workspaceUpdate = object({
  name: nonEmptyString(255),
  settings: object({
    timezone: { type: 'string', maxLength: 100 },
    send_policy: { description: 'Object or null; checked against INTERFACE 2.10 (400 INVALID_SEND_POLICY)' },
  }),
});

export const memberAdd = object(
  { user_id: nonEmptyString(255), role: { type: 'string', enum: ['admin', 'member'] } },
  ['user_id', 'role'],
);

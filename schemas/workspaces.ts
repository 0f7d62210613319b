import { ASSIGNABLE_ROLES } from '../src/domain/roles.js';
import { nonEmptyString, object, type Schema, type SchemaRefusal } from './common.js';

export const workspaceCreate = object({ name: nonEmptyString(255) }, ['name']);

const timeOfDay: Schema = { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 00:00 to 23:59' };
const count: Schema = { type: 'integer', minimum: 0 };

/**
 * The workspace send policy (INTERFACE 2.10, DECISIONS §5). What relates two fields (both
 * window fields set together, start ≠ end) is checked by domain/send-policy.ts.
 */
export const sendPolicy: Schema = {
  type: 'object',
  nullable: true,
  additionalProperties: false,
  properties: {
    timezone: { type: 'string', anyOf: [{ format: 'time-zone' }, { maxLength: 0 }], description: 'IANA name; empty means UTC' },
    quiet_hours: object({ start: timeOfDay, end: timeOfDay }, ['start', 'end'], { nullable: true, additionalProperties: false }),
    max_pushes_per_day: { ...count, description: '0 or absent: no daily cap' },
    max_pushes_per_window: { ...count, description: 'Set with window_hours: both > 0 enables the rolling cap, both 0 disables it' },
    window_hours: { type: 'integer', minimum: 0, maximum: 168 },
  },
};

/** Settings Herald has are the only ones accepted: any other key is refused (README, Request bodies). */
export const workspaceUpdate = object({
  name: nonEmptyString(255),
  settings: object(
    {
      timezone: { type: 'string', maxLength: 100, format: 'time-zone' },
      send_policy: sendPolicy,
    },
    [],
    { additionalProperties: false },
  ),
});

/** Whatever is wrong inside the send policy is INVALID_SEND_POLICY (INTERFACE 2.10.4). */
export const workspaceUpdateRefusals: readonly SchemaRefusal[] = [{ at: '/settings/send_policy', code: 'INVALID_SEND_POLICY' }];

export const memberAdd = object(
  { user_id: nonEmptyString(255), role: { type: 'string', enum: [...ASSIGNABLE_ROLES] } },
  ['user_id', 'role'],
);

import { ASSIGNABLE_ROLES, ROLES } from '../src/domain/roles.js';
import { nonEmptyString, object, type Schema, type SchemaRefusal } from './common.js';
import { closed, enumOf, isoTime, message, ok, str, uuidText, type ResponseDoc, type RouteResponses } from './response-parts.js';
import { trackingSettings } from './tracking.js';

export const workspaceCreate = object({ name: nonEmptyString(255) }, ['name']);

const timeOfDay = { type: 'string', pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, 00:00 to 23:59' } as const;
const count = { type: 'integer', minimum: 0 } as const;

/**
 * The workspace send policy (docs/channels.md; README, Request bodies). What relates two fields (both
 * window fields set together, start ≠ end) is checked by domain/send-policy.ts.
 */
export const sendPolicy = {
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
} as const;

/** Settings Herald has are the only ones accepted: any other key is refused (README, Request bodies). */
export const workspaceUpdate = object({
  name: nonEmptyString(255),
  settings: object(
    {
      timezone: { type: 'string', maxLength: 100, format: 'time-zone' },
      send_policy: sendPolicy,
      tracking: trackingSettings,
    },
    [],
    { additionalProperties: false },
  ),
});

/** Whatever is wrong inside the send policy is INVALID_SEND_POLICY (README, Request bodies). */
export const workspaceUpdateRefusals: readonly SchemaRefusal[] = [{ at: '/settings/send_policy', code: 'INVALID_SEND_POLICY' }];

export const memberAdd = object(
  { user_id: nonEmptyString(255), role: { type: 'string', enum: [...ASSIGNABLE_ROLES] } },
  ['user_id', 'role'],
);

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

/** Settings merge key by key. Only these are accepted now; other keys a workspace was given before are kept and echoed. */
export const workspaceSettings: Schema = {
  type: 'object',
  properties: { timezone: str, send_policy: sendPolicy, tracking: closed({ opens: { type: 'boolean' }, clicks: { type: 'boolean' } }) },
  required: ['timezone', 'send_policy', 'tracking'],
  additionalProperties: true,
};
/** A workspace as its members see it (README, Sessions and the Default workspace). */
export const workspace = closed({ id: uuidText, name: str, settings: workspaceSettings, created_at: isoTime, updated_at: isoTime });
/** A workspace member; `created_at` is when the user joined (the owner: when the workspace was created). */
export const member = closed({ workspace_id: uuidText, user_id: str, role: enumOf(...ROLES), created_at: isoTime });

const workspaceBody = (description: string): ResponseDoc => ok(description, { data: closed({ workspace }) });

export const workspaceResponses: Record<string, RouteResponses> = {
  'POST /workspaces': { success: { 201: workspaceBody('The workspace; the caller is its owner') } },
  'GET /workspaces': { success: { 200: ok("The caller's workspaces", { workspaces: { type: 'array', items: workspace }, total: count }) } },
  'GET /workspaces/{workspaceId}': { success: { 200: workspaceBody('The workspace') } },
  'PUT /workspaces/{workspaceId}': {
    success: { 200: workspaceBody('The updated workspace') },
    errors: { 400: { codes: ['INVALID_SEND_POLICY'], why: 'A timezone that is not an IANA name (VALIDATION_ERROR), a malformed send policy' } },
  },
  'GET /workspaces/{workspaceId}/members': {
    success: { 200: ok('The members: the owner first, then in the order they were added', { members: { type: 'array', items: member }, total: count }) },
  },
  'POST /workspaces/{workspaceId}/members': {
    success: {
      201: ok('A new member', { data: closed({ member }) }),
      200: ok("An existing member's role changed", { data: closed({ member }) }),
    },
    errors: { 400: { codes: [], why: "The owner's role cannot be changed (VALIDATION_ERROR)" } },
  },
  'DELETE /workspaces/{workspaceId}/members/{userId}': {
    success: { 200: message('The member is removed') },
    errors: { 400: { codes: [], why: 'The owner cannot be removed (VALIDATION_ERROR)' }, 404: { codes: ['NOT_FOUND'], why: 'Not a member' } },
  },
};

// Segments (docs/audiences.md): request bodies and what the routes answer. The condition tree's
// rules (its shapes, depth and size) are domain/segments.ts's, answered as 400 with the path.
import { nonEmptyString, object, queryLimit, uuid } from './common.js';
import { closed, count, enumOf, freeObject, isoTime, nullableIsoTime, nullableStr, ok, str, uuidText, message, type HandlerErrors, type ResponseDoc, type RouteResponses } from './response-parts.js';
import { MAX_DEPTH, MAX_LEAVES } from '../src/domain/segments.js';

const conditions = {
  type: 'object',
  description:
    `A group {all: [...]} or {any: [...]} of conditions and groups: {field, operator, value} (traits.*, person.*), {event: {name, count: {op, value}, within}}, ` +
    `{has_channel: push|email|sms}, {in_list: list_id}; groups nest at most ${MAX_DEPTH} deep, at most ${MAX_LEAVES} conditions in all`,
} as const;

/** POST /workspaces/{workspaceId}/segments */
export const segmentCreate = object({ name: nonEmptyString(255), conditions }, ['name', 'conditions'], { additionalProperties: false });
/** PUT /workspaces/{workspaceId}/segments/{segmentId}: the fields sent replace; new conditions are computed again in the background. */
export const segmentUpdate = object({ name: nonEmptyString(255), conditions }, [], { additionalProperties: false });
/** GET /workspaces/{workspaceId}/segments/{segmentId}/people: a keyset page in person id order. */
export const segmentPeople = object({ limit: queryLimit(100), after: { ...uuid, description: 'The last person id of the previous page (its `next`)' } });

const SEGMENTS = '/workspaces/{workspaceId}/segments';

const segment = closed({
  id: uuidText,
  workspace_id: uuidText,
  name: str,
  conditions: freeObject,
  status: { ...enumOf('computing', 'ready', 'failed'), description: '`computing` while computed from scratch (created, or conditions changed), then `ready`; members change meanwhile too' },
  count: { ...count, description: 'Members now (kept as they change, not counted on read)' },
  progress: closed({ walked: count, total: count }, undefined, { description: 'People walked by the computation of the workspace\'s total (when it began)' }),
  error: nullableStr,
  computed_at: nullableIsoTime,
  created_at: isoTime,
  updated_at: isoTime,
});
const segmentBody = (what: string): ResponseDoc => ok(what, { data: closed({ segment }) });
const segmentNotFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: "No such segment in the workspace (unknown, another workspace's, or not a UUID)" };
const badTree = `a condition tree that is not one (details name the path), nested over ${MAX_DEPTH} groups, over ${MAX_LEAVES} conditions, or naming a list not of the workspace`;
const member = closed({ id: uuidText, external_id: str, email: nullableStr, entered_at: isoTime });

export const segmentResponses: Record<string, RouteResponses> = {
  [`POST ${SEGMENTS}`]: { success: { 201: segmentBody('The segment, computing') }, badRequest: badTree },
  [`GET ${SEGMENTS}`]: { success: { 200: ok('The segments, newest first, with their counts', { segments: { type: 'array', items: segment }, total: count }) } },
  [`GET ${SEGMENTS}/{segmentId}`]: { success: { 200: segmentBody('The segment with its live count and status') }, errors: { 404: segmentNotFound } },
  [`PUT ${SEGMENTS}/{segmentId}`]: { success: { 200: segmentBody('The updated segment (computing again when its conditions changed)') }, errors: { 404: segmentNotFound }, badRequest: badTree },
  [`DELETE ${SEGMENTS}/{segmentId}`]: {
    success: { 200: message('Deleted with its memberships; the people stay') },
    errors: { 404: segmentNotFound, 409: { codes: ['SEGMENT_IN_USE'], why: 'An active or scheduled campaign targets the segment (audience_config.segment_id)' } },
  },
  [`GET ${SEGMENTS}/{segmentId}/people`]: {
    success: { 200: ok("A page of the segment's members, in person id order", { people: { type: 'array', items: member }, next: { ...uuidText, nullable: true, description: 'Pass as `after` for the next page; null on the last' } }) },
    errors: { 404: segmentNotFound },
  },
};

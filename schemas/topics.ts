// Topics and the preference center (docs/audiences.md): request bodies and what the routes answer.
import { nonEmptyString, object } from './common.js';
import { closed, enumOf, isoTime, nullableStr, ok, str, uuidText, message, dashboardPersonNotFound, type HandlerErrors, type ResponseDoc, type RouteResponses } from './response-parts.js';
import { TOPIC_DEFAULTS } from '../src/domain/topics.js';

const description = { type: 'string', maxLength: 2_000, nullable: true } as const;
const dflt = { type: 'string', enum: [...TOPIC_DEFAULTS], description: 'What a person who never chose gets: sent to (opted_in) or not (opted_out)' } as const;

/** POST /workspaces/{workspaceId}/topics */
export const topicCreate = object({ name: nonEmptyString(255), description, default: dflt }, ['name', 'default'], { additionalProperties: false });
/** PUT /workspaces/{workspaceId}/topics/{topicId}: the fields sent replace. */
export const topicUpdate = object({ name: nonEmptyString(255), description, default: dflt }, [], { additionalProperties: false });
/** PUT /workspaces/{workspaceId}/people/{personId}/subscriptions: topic id → subscribed; topics not named keep their state. */
export const subscriptionsUpdate = object(
  { subscriptions: { type: 'object', maxProperties: 1_000, additionalProperties: { type: 'boolean' }, description: 'Topic id → subscribed' } },
  ['subscriptions'],
  { additionalProperties: false },
);

const TOPICS = '/workspaces/{workspaceId}/topics';
const SUBSCRIPTIONS = '/workspaces/{workspaceId}/people/{personId}/subscriptions';

const topic = closed({ id: uuidText, workspace_id: uuidText, name: str, description: nullableStr, default: enumOf(...TOPIC_DEFAULTS), created_at: isoTime, updated_at: isoTime });
const topicBody = (what: string): ResponseDoc => ok(what, { data: closed({ topic }) });
const topicNotFound: HandlerErrors[404] = { codes: ['NOT_FOUND'], why: "No such topic in the workspace (unknown, another workspace's, or not a UUID)" };
const subscriptions: ResponseDoc = ok("Topic id → whether the person is subscribed (their choice, else the topic's default), every topic of the workspace", {
  subscriptions: { type: 'object', additionalProperties: { type: 'boolean' } },
});
const html = (description: string): ResponseDoc => ({ description, schema: str, mediaType: 'text/html' });
const badLink = { codes: [], why: 'A token Herald did not make, or its person is gone: an HTML page; nothing changes', mediaType: 'text/html' };

export const topicResponses: Record<string, RouteResponses> = {
  [`POST ${TOPICS}`]: { success: { 201: topicBody('The topic') } },
  [`GET ${TOPICS}`]: { success: { 200: ok('The topics, oldest first (the preference page lists them so)', { topics: { type: 'array', items: topic }, total: { type: 'integer', minimum: 0 } }) } },
  [`GET ${TOPICS}/{topicId}`]: { success: { 200: topicBody('The topic') }, errors: { 404: topicNotFound } },
  [`PUT ${TOPICS}/{topicId}`]: { success: { 200: topicBody('The updated topic') }, errors: { 404: topicNotFound } },
  [`DELETE ${TOPICS}/{topicId}`]: { success: { 200: message("Deleted with the people's choices; nodes naming it then send to everyone") }, errors: { 404: topicNotFound } },
  [`GET ${SUBSCRIPTIONS}`]: { success: { 200: subscriptions }, errors: { 404: dashboardPersonNotFound } },
  [`PUT ${SUBSCRIPTIONS}`]: {
    success: { 200: subscriptions },
    errors: { 404: dashboardPersonNotFound },
    badRequest: 'a key that is not a topic of the workspace (details name it)',
  },
  'GET /p/{token}': { success: { 200: html('The preference page: the topics with their toggles and an unsubscribe from everything, as forms that POST; nothing changes') }, errors: { 404: badLink } },
  'POST /p/{token}': {
    success: { 200: html('Saved (the topics ticked are subscribed, the others not), or unsubscribed from everything: an HTML page, never a redirect') },
    errors: { 404: badLink },
  },
};

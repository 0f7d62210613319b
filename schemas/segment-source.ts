// The Segment-compatible source's messages (README, Segment-compatible source): Segment's
// fields as its and RudderStack's libraries send them. Other fields those libraries add
// (`integrations`, `_metadata`, `channel`, …) are accepted and ignored.
import { messageIds, nonEmptyString, object, timestamp, type Schema } from './common.js';
import { closed, count, failure, str, success, type RouteResponses } from './response-parts.js';

const id = nonEmptyString(255);
const common = {
  userId: id,
  anonymousId: id,
  timestamp: { ...timestamp, description: 'When it happened (wins over originalTimestamp)' },
  originalTimestamp: { ...timestamp, description: "The client's clock when it happened, corrected by sentAt (the event time is receipt − (sentAt − originalTimestamp))" },
  sentAt: { ...timestamp, description: "The client's clock when it sent this" },
  context: { type: 'object', description: 'Kept on the event as the parameter `context`' },
  writeKey: { type: 'string', description: 'The API key, when it is not sent as HTTP Basic user name' },
  ...messageIds,
} as const;
const properties = { type: 'object' } as const;

export const identify = object({ ...common, traits: { type: 'object' } });
export const track = object({ ...common, event: id, properties }, ['event']);
const viewed = () => object({ ...common, name: { type: 'string' }, category: { type: 'string' }, properties });
export const page = viewed();
export const screen = viewed();
export const group = object({ ...common, groupId: id, traits: { type: 'object' } }, ['groupId']);
export const alias = object({ ...common, previousId: id }, ['previousId', 'userId']);

/** The types a batch may hold, and each one's schema. */
export const MESSAGE_TYPES = { identify, track, page, screen, group, alias } as const;
export type MessageType = keyof typeof MESSAGE_TYPES;

// Messages are checked one by one (a bad one fails alone); the body's 500 KB bounds their number.
export const batch = object(
  {
    batch: { type: 'array', items: {}, description: `Messages, each with \`type\`: ${Object.keys(MESSAGE_TYPES).join(', ')}` },
    context: { type: 'object', description: "Merged under each message's own context" },
    sentAt: common.sentAt,
    writeKey: common.writeKey,
  },
  ['batch'],
);

// ---------------------------------------------------------------------------------------
// Responses (published by schemas/responses.ts)

/** Segment's error body: `errors` names the refused messages of a batch (by index). */
export const sourceError: Schema = closed(
  {
    success: failure,
    error: str,
    code: str,
    details: {},
    errors: { type: 'array', items: closed({ index: count, error: str }) },
  },
  ['success', 'error'],
);

/** The 200 every source route answers. */
export const sourceAccepted: Schema = closed({ success });
const accepted = (what: string) => ({ 200: { description: `${what} durable (or a repeat of a messageId already accepted, which changed nothing)`, schema: sourceAccepted } });
const single = (what: string, why: string): RouteResponses => ({ success: accepted(what), badRequest: why });
const identifying = (what: string, why: string): RouteResponses => ({ ...single(what, why), errors: { 403: { codes: [], why: 'identify, group and alias also need people:identify or people:write' } } });
/** What the source refuses of any body: a coding it does not take, or bytes that do not decode. */
const ENCODING_400 = 'a Content-Encoding other than gzip or deflate, or a body that does not decode';
const MESSAGE_400 = `no userId and no anonymousId, a field of the wrong type, a timestamp out of range, traits or properties Herald refuses; ${ENCODING_400}`;

export const sourceResponses: Record<string, RouteResponses> = {
  'POST /v1/identify': identifying('The person is written', MESSAGE_400),
  'POST /v1/track': single('The event is', MESSAGE_400),
  'POST /v1/page': single('The event is', MESSAGE_400),
  'POST /v1/screen': single('The event is', MESSAGE_400),
  'POST /v1/group': identifying('The person is written', MESSAGE_400),
  'POST /v1/alias': identifying('The merge is recorded', `${MESSAGE_400}; no previousId`),
  'POST /v1/batch': {
    success: accepted('Every message is'),
    badRequest: `some messages refused (an unknown \`type\`, a message over 32 KB, one the key may not send, or as for the single routes): \`errors\` names them by index and every other message is durable; ${ENCODING_400}`,
  },
};

// Every route Herald serves under /api/v1, declared once: the front routes, authenticates and
// limits from this table, the actors validate against its schemas and find the handler by its
// typed id (a served route without a handler does not compile), and the OpenAPI document is
// built from it.
import type { Scope } from './domain/rate-limit-scopes.js';
import type { FromSchema, Schema, SchemaRefusal } from '../schemas/common.js';
import * as ws from '../schemas/workspaces.js';
import * as keys from '../schemas/api-keys.js';
import * as people from '../schemas/people.js';
import * as devices from '../schemas/devices.js';
import * as events from '../schemas/events.js';
import * as pushSend from '../schemas/push-send.js';
import * as push from '../schemas/push.js';
import * as channels from '../schemas/channels.js';
import * as campaigns from '../schemas/campaigns.js';
import * as messageChannels from '../schemas/message-channels.js';
import * as authoring from '../schemas/authoring.js';
import * as source from '../schemas/segment-source.js';
import * as webhooks from '../schemas/webhooks.js';
import * as audiences from '../schemas/audiences.js';
import * as topics from '../schemas/topics.js';
import * as segments from '../schemas/segments.js';
import * as campaignAnalytics from '../schemas/campaign-analytics.js';
import * as analytics from '../schemas/analytics.js';

/** Where the routes below are served. */
export const API_PREFIX = '/api/v1';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Which error bodies a route answers with (README, Errors); `source`: Segment's `{success: false, error}`. */
export type ErrorShape = 'key' | 'session' | 'flat' | 'source';

interface Common {
  method: Method;
  path: string;
  summary: string;
  body?: Schema;
  query?: Schema;
  /** Path parameters, as strings. */
  params?: Schema;
  refusals?: readonly SchemaRefusal[];
  /** Largest accepted body in bytes; default HERALD_MAX_BODY_BYTES. */
  maxBody?: number;
  /**
   * The body is streamed to a file (src/http/upload.ts), at most HERALD_IMPORT_MAX_BYTES, and
   * the handler gets its path (`ctx.upload`), never the bytes: a list's CSV import.
   */
  upload?: true;
  /** Answered 501 after authentication: the interface defines the route, Herald does not serve it. */
  notImplemented?: string;
  /** Request headers the handler reads (name → what it means): the front forwards them to the actor. */
  headers?: Readonly<Record<string, string>>;
}

interface KeyRoute extends Common {
  auth: 'key';
  /** Any one of these opens the route (`*` opens every route). */
  permissions: readonly string[];
  scope: Extract<Scope, 'ws-ingest' | 'ws-devices' | 'ws-reads'>;
  /** Callable from browsers with a public key. */
  cors?: boolean;
  /**
   * Also takes a public key as `?key=`: navigator.sendBeacon (a page's last send as it is
   * hidden) cannot set an Authorization header. Never a secret key, which a URL would leak.
   */
  beacon?: boolean;
  errors?: Extract<ErrorShape, 'key' | 'flat'>;
  /**
   * The Segment-compatible source (README, Segment-compatible source): served at the root, so
   * that a Segment or RudderStack client switches by its host alone; the key comes as Segment's
   * write key (HTTP Basic user name, or the body's `writeKey`), a gzip body is accepted, and
   * errors are Segment's `{success: false, error}`.
   */
  source?: true;
}

interface SessionRoute extends Common {
  auth: 'session';
  /** Where the workspace comes from: the `workspaceId` path segment, X-Workspace-ID, or none. */
  workspace: 'path' | 'header' | 'none';
  /**
   * Also opens to an API key of the path's workspace holding one of these permissions, which
   * then spends that workspace's `scope` budget as a key route does (the analytics reads).
   */
  keys?: { permissions: readonly string[]; scope: Extract<Scope, 'ws-reads'> };
}

interface PublicRoute extends Common {
  auth: 'public';
}

/**
 * Served at the root, outside /api/v1, with no credential (docs/channels.md): one-click
 * unsubscribe links and provider callbacks. Limited per IP on `scope`; the handler gets the raw
 * body (a callback's signature is over its bytes) and verifies what the request carries.
 */
interface OutsideRoute extends Common {
  auth: 'none';
  scope: Extract<Scope, 'ip-public' | 'ip-webhooks'>;
}

type RouteDef = KeyRoute | SessionRoute | PublicRoute | OutsideRoute;

const PUSH = '/workspaces/{workspaceId}/push';
const KEYS = '/workspaces/{workspaceId}/api-keys';
const TEMPLATES = '/workspaces/{workspaceId}/templates';
const HOOKS = '/workspaces/{workspaceId}/webhooks';
const LISTS = '/workspaces/{workspaceId}/lists';
const TOPICS = '/workspaces/{workspaceId}/topics';
const SEGMENTS = '/workspaces/{workspaceId}/segments';
const CAMPAIGN_ANALYTICS = '/workspaces/{workspaceId}/campaigns/{campaignId}/analytics';
const ANALYTICS = '/workspaces/{workspaceId}/analytics';
const ANALYTICS_KEYS = { permissions: ['events:read'], scope: 'ws-reads' } as const;
const IDEMPOTENCY_KEY =
  'Optional, 1 to 255 bytes of printable ASCII: a repeat with the same key (this workspace and campaign, within 24 hours) sends nothing again and answers the first trigger (`duplicate: true`)';
const TWILIO_HEADERS = { 'X-Twilio-Signature': "Twilio's HMAC-SHA1 of the callback URL and the sorted form fields, keyed with the auth token" };
const EMAIL_CALLBACK_HEADERS = {
  'X-Twilio-Email-Event-Webhook-Signature': "SendGrid: ECDSA signature of the timestamp and the raw body",
  'X-Twilio-Email-Event-Webhook-Timestamp': 'SendGrid: the signed timestamp',
  Authorization: 'Postmark: Basic auth with the webhook username and password',
};
const TRACKING_HEADERS = { 'User-Agent': 'Tells a prefetching proxy or a link scanner (recorded `machine: true`) from a person' };
/** Segment's limits: 32 KB a message, 500 KB a batch. */
const SOURCE_MESSAGE_BYTES = 32 * 1024;
const SOURCE_BATCH_BYTES = 500 * 1024;
const SOURCE_HEADERS = { 'Content-Encoding': '`gzip` or `deflate` (RudderStack gzips its batches): the limits apply to the decoded body' };
// Every source route needs events:write; identify, group and alias (alone or in a batch) also
// need people:identify or people:write, which the handler checks.
const sourceRoute = <const B, const S extends string>(path: S, body: B, summary: string) =>
  ({ method: 'POST', path, auth: 'key', source: true, permissions: ['events:write'], scope: 'ws-ingest', body, maxBody: path === '/v1/batch' ? SOURCE_BATCH_BYTES : SOURCE_MESSAGE_BYTES, headers: SOURCE_HEADERS, summary }) as const;
const BATCH_TOO_LARGE = (at: string, most: string): SchemaRefusal => ({ at, keyword: 'maxItems', code: 'BATCH_TOO_LARGE', message: `At most ${most} per batch` });

const defs = [
  { method: 'GET', path: '/openapi.json', auth: 'public', summary: 'This OpenAPI description' },

  // Ingestion and people (key).
  { method: 'POST', path: '/identify', auth: 'key', permissions: ['people:write', 'people:identify'], scope: 'ws-ingest', cors: true, beacon: true, body: people.identify, refusals: people.identifyRefusals, summary: 'Identify a person' },
  { method: 'POST', path: '/track', auth: 'key', permissions: ['events:write'], scope: 'ws-ingest', cors: true, beacon: true, body: events.track, summary: 'Track an event' },
  { method: 'POST', path: '/track/batch', auth: 'key', permissions: ['events:write'], scope: 'ws-ingest', cors: true, beacon: true, body: events.trackBatch, refusals: [BATCH_TOO_LARGE('/events', '100 events')], summary: 'Track up to 100 events' },
  { method: 'POST', path: '/people', auth: 'key', permissions: ['people:write'], scope: 'ws-ingest', body: people.identify, refusals: people.identifyRefusals, summary: 'Create a person' },
  { method: 'POST', path: '/people/upsert', auth: 'key', permissions: ['people:write'], scope: 'ws-ingest', body: people.identify, refusals: people.identifyRefusals, summary: 'Create or update a person' },
  { method: 'POST', path: '/people/batch', auth: 'key', permissions: ['people:write'], scope: 'ws-ingest', body: people.peopleBatch, refusals: [BATCH_TOO_LARGE('/identify', '1,000 operations'), ...people.peopleBatchRefusals], summary: 'Identify up to 1,000 people' },
  { method: 'GET', path: '/people', auth: 'key', permissions: ['people:read'], scope: 'ws-reads', query: people.peopleList, summary: 'List people' },
  { method: 'GET', path: '/people/search', auth: 'key', permissions: ['people:read'], scope: 'ws-reads', query: people.peopleSearch, summary: 'Search people' },
  { method: 'GET', path: '/people/{id}', auth: 'key', permissions: ['people:read'], scope: 'ws-reads', summary: 'Get a person by userId' },
  { method: 'PUT', path: '/people/{id}', auth: 'key', permissions: ['people:write'], scope: 'ws-ingest', body: people.personUpdate, summary: "Merge a person's traits" },
  { method: 'DELETE', path: '/people/{id}', auth: 'key', permissions: ['people:delete'], scope: 'ws-reads', summary: 'Delete a person, their events and devices' },
  { method: 'GET', path: '/people/{id}/events', auth: 'key', permissions: ['events:read'], scope: 'ws-reads', query: events.personEvents, summary: "A person's events" },
  { method: 'GET', path: '/events/search', auth: 'key', permissions: ['events:read'], scope: 'ws-reads', query: events.eventSearch, summary: 'Events by name' },

  // Devices (key).
  { method: 'POST', path: '/people/{id}/devices', auth: 'key', permissions: ['devices:register', 'devices:write'], scope: 'ws-devices', cors: true, params: people.userIdPath, body: devices.deviceRegister, refusals: devices.deviceRegisterRefusals, summary: 'Register a device token' },
  { method: 'GET', path: '/people/{id}/devices', auth: 'key', permissions: ['devices:read', 'devices:write'], scope: 'ws-reads', summary: "A person's devices" },
  { method: 'DELETE', path: '/people/{id}/devices', auth: 'key', permissions: ['devices:register', 'devices:write'], scope: 'ws-devices', cors: true, body: devices.deviceUnregister, query: devices.deviceUnregisterQuery, summary: 'Unregister a device token' },

  // Push (key, workspace in the path must be the key's).
  { method: 'POST', path: `${PUSH}/send`, auth: 'key', permissions: ['push:send'], scope: 'ws-ingest', body: pushSend.pushSend, summary: 'Send a push to one person' },
  { method: 'POST', path: `${PUSH}/send/batch`, auth: 'key', permissions: ['push:send'], scope: 'ws-ingest', body: pushSend.pushBatch, refusals: pushSend.pushBatchRefusals, summary: 'Send one push to up to 1,000 recipients' },
  { method: 'GET', path: `${PUSH}/status/{messageId}`, auth: 'key', permissions: ['push:read'], scope: 'ws-reads', summary: 'Delivery status of a push' },
  { method: 'POST', path: `${PUSH}/tokens/validate`, auth: 'key', permissions: ['push:send'], scope: 'ws-ingest', body: push.tokenValidate, refusals: [BATCH_TOO_LARGE('/tokens', '1,000 tokens')], summary: 'Validate up to 1,000 device tokens' },
  { method: 'POST', path: `${PUSH}/tokens/suppress`, auth: 'key', permissions: ['push:send'], scope: 'ws-ingest', body: push.tokenSuppress, refusals: push.tokenSuppressRefusals, summary: 'Suppress a device token' },
  { method: 'DELETE', path: `${PUSH}/tokens/suppress/{id}`, auth: 'key', permissions: ['push:send'], scope: 'ws-ingest', summary: 'Lift a token suppression' },
  { method: 'GET', path: `${PUSH}/suppressions`, auth: 'session', workspace: 'path', query: push.suppressionList, summary: 'Token suppressions, newest first (dashboard)' },
  { method: 'POST', path: `${PUSH}/suppressions`, auth: 'session', workspace: 'path', body: push.tokenSuppress, refusals: push.tokenSuppressRefusals, summary: 'Suppress a device token (dashboard)' },
  { method: 'DELETE', path: `${PUSH}/suppressions/{id}`, auth: 'session', workspace: 'path', summary: 'Lift a token suppression (dashboard)' },
  { method: 'GET', path: `${PUSH}/history`, auth: 'key', permissions: ['push:read'], scope: 'ws-reads', summary: 'Push delivery history (not provided)', notImplemented: 'Push delivery history is not available' },
  { method: 'GET', path: `${PUSH}/analytics`, auth: 'key', permissions: ['push:read'], scope: 'ws-reads', summary: 'Push analytics (not provided)', notImplemented: 'Push analytics are not available' },

  // Campaign trigger (key, flat error bodies).
  { method: 'POST', path: '/campaigns/{campaignId}/trigger', auth: 'key', permissions: ['campaigns:trigger'], scope: 'ws-reads', errors: 'flat', body: campaigns.campaignTrigger, refusals: campaigns.campaignTriggerRefusals, headers: { 'Idempotency-Key': IDEMPOTENCY_KEY }, summary: 'Trigger a webhook campaign' },

  // Workspaces and membership (session).
  { method: 'POST', path: '/workspaces', auth: 'session', workspace: 'none', body: ws.workspaceCreate, summary: 'Create a workspace' },
  { method: 'GET', path: '/workspaces', auth: 'session', workspace: 'none', summary: "The caller's workspaces" },
  { method: 'GET', path: '/workspaces/{workspaceId}', auth: 'session', workspace: 'path', summary: 'Get a workspace' },
  { method: 'PUT', path: '/workspaces/{workspaceId}', auth: 'session', workspace: 'path', body: ws.workspaceUpdate, refusals: ws.workspaceUpdateRefusals, summary: 'Update name and settings (send policy)' },
  { method: 'GET', path: '/workspaces/{workspaceId}/members', auth: 'session', workspace: 'path', summary: "The workspace's members (any member reads)" },
  { method: 'POST', path: '/workspaces/{workspaceId}/members', auth: 'session', workspace: 'path', body: ws.memberAdd, summary: 'Add a member' },
  { method: 'DELETE', path: '/workspaces/{workspaceId}/members/{userId}', auth: 'session', workspace: 'path', summary: 'Remove a member' },

  // Push provider credentials (session), never echoed back.
  { method: 'PUT', path: '/workspaces/{workspaceId}/channels/push', auth: 'session', workspace: 'path', body: channels.pushChannelsUpdate, refusals: channels.pushChannelsUpdateRefusals, summary: 'Set or remove push provider credentials (FCM, APNs)' },
  { method: 'GET', path: '/workspaces/{workspaceId}/channels/push', auth: 'session', workspace: 'path', summary: 'Which push providers are configured' },
  // Email and SMS channels (session; docs/channels.md), secrets never echoed.
  { method: 'PUT', path: '/workspaces/{workspaceId}/channels/email', auth: 'session', workspace: 'path', body: messageChannels.emailChannelUpdate, summary: 'Set, change or remove the email channel (SMTP relay, sender, callback verification)' },
  { method: 'PUT', path: '/workspaces/{workspaceId}/channels/sms', auth: 'session', workspace: 'path', body: messageChannels.smsChannelUpdate, summary: 'Set, change or remove the SMS channel (Twilio)' },
  { method: 'GET', path: '/workspaces/{workspaceId}/suppressions', auth: 'session', workspace: 'path', query: messageChannels.suppressionList, summary: 'Suppressed email addresses and phone numbers, newest first' },
  { method: 'POST', path: '/workspaces/{workspaceId}/suppressions', auth: 'session', workspace: 'path', body: messageChannels.suppressionCreate, summary: 'Suppress an email address or phone number by hand' },
  { method: 'DELETE', path: '/workspaces/{workspaceId}/suppressions/{suppressionId}', auth: 'session', workspace: 'path', summary: 'Lift an address suppression' },
  { method: 'GET', path: '/workspaces/{workspaceId}/channels', auth: 'session', workspace: 'path', summary: 'Every channel: push, email, SMS, with the callback URLs to paste into the providers' },

  // API keys (session).
  { method: 'POST', path: KEYS, auth: 'session', workspace: 'path', body: keys.apiKeyCreate, summary: 'Create an API key' },
  { method: 'GET', path: KEYS, auth: 'session', workspace: 'path', summary: 'List API keys' },
  { method: 'GET', path: `${KEYS}/{keyId}`, auth: 'session', workspace: 'path', summary: "One key's metadata" },
  { method: 'PUT', path: `${KEYS}/{keyId}`, auth: 'session', workspace: 'path', body: keys.apiKeyUpdate, summary: 'Update an API key' },
  { method: 'DELETE', path: `${KEYS}/{keyId}`, auth: 'session', workspace: 'path', summary: 'Revoke an API key' },
  { method: 'POST', path: `${KEYS}/{keyId}/refresh`, auth: 'session', workspace: 'path', summary: 'Replace the secret of an API key' },
  { method: 'GET', path: `${KEYS}/{keyId}/usage`, auth: 'session', workspace: 'path', summary: 'Usage statistics of an API key' },

  // Dashboard people (session).
  { method: 'GET', path: '/workspaces/{workspaceId}/people', auth: 'session', workspace: 'path', query: people.dashboardPeopleList, summary: 'Dashboard people list' },
  { method: 'GET', path: '/workspaces/{workspaceId}/people/stats', auth: 'session', workspace: 'path', summary: 'People statistics' },
  { method: 'GET', path: '/workspaces/{workspaceId}/people/{personId}/events', auth: 'session', workspace: 'path', query: events.dashboardPersonEvents, summary: "A person's events" },
  { method: 'GET', path: '/workspaces/{workspaceId}/event-names', auth: 'session', workspace: 'path', query: events.eventNamesQuery, summary: 'The event names the workspace has seen, with when each was last seen (the campaign builder\'s event picker)' },
  { method: 'GET', path: '/workspaces/{workspaceId}/events', auth: 'session', workspace: 'path', query: events.workspaceEvents, summary: "The workspace's latest events, newest first (the event debugger)" },
  { method: 'GET', path: '/workspaces/{workspaceId}/people/{personId}/messages', auth: 'session', workspace: 'path', query: pushSend.messageHistory, summary: "A person's push messages, newest first" },
  { method: 'GET', path: '/workspaces/{workspaceId}/people/{personId}', auth: 'session', workspace: 'path', summary: 'A person and their devices' },
  { method: 'PATCH', path: '/workspaces/{workspaceId}/people/{personId}', auth: 'session', workspace: 'path', body: people.consent, summary: "Set a person's consent status" },

  // Campaign authoring and message templates (session).
  { method: 'POST', path: '/campaigns', auth: 'session', workspace: 'header', body: campaigns.campaignCreate, refusals: campaigns.campaignCreateRefusals, summary: 'Create a campaign (draft)' },
  { method: 'GET', path: '/campaigns', auth: 'session', workspace: 'header', query: campaigns.campaignList, summary: 'List campaigns' },
  { method: 'GET', path: '/campaigns/{campaignId}', auth: 'session', workspace: 'header', summary: 'Get a campaign with its stats' },
  { method: 'PUT', path: '/campaigns/{campaignId}', auth: 'session', workspace: 'header', body: campaigns.campaignUpdate, refusals: campaigns.campaignUpdateRefusals, summary: 'Update a campaign, or move its status' },
  { method: 'DELETE', path: '/campaigns/{campaignId}', auth: 'session', workspace: 'header', summary: 'Delete a campaign that is not live' },
  { method: 'PUT', path: '/workspaces/{workspaceId}/campaigns/{campaignId}/node-messages/{nodeId}', auth: 'session', workspace: 'path', body: campaigns.nodeMessage, summary: "Set a push, email or SMS node's content" },
  // Authoring support for the dashboard (session; README, Dashboard).
  { method: 'POST', path: '/workspaces/{workspaceId}/audiences/preview', auth: 'session', workspace: 'path', body: authoring.audiencePreview, summary: 'How many people an audience_config matches, with a sample' },
  { method: 'POST', path: `${TEMPLATES}/preview`, auth: 'session', workspace: 'path', body: authoring.templatePreview, summary: "Render a channel's content for a person (the template preview)" },
  { method: 'POST', path: '/workspaces/{workspaceId}/campaigns/{campaignId}/test-send', auth: 'session', workspace: 'path', body: authoring.testSend, summary: "Send one node of a campaign to one person, outside the send policy's caps and quiet hours" },
  { method: 'GET', path: '/workspaces/{workspaceId}/campaigns/{campaignId}/messages', auth: 'session', workspace: 'path', query: campaigns.campaignMessages, summary: "A campaign's messages, newest first (live progress)" },
  // A campaign's analytics page (session; docs/campaign-analytics.md).
  { method: 'GET', path: `${CAMPAIGN_ANALYTICS}/timeseries`, auth: 'session', workspace: 'path', query: campaignAnalytics.timeseriesQuery, summary: "A campaign's sends, opens and clicks per hour or day" },
  { method: 'GET', path: `${CAMPAIGN_ANALYTICS}/links`, auth: 'session', workspace: 'path', query: campaignAnalytics.linksQuery, summary: "A campaign's most clicked links" },
  { method: 'GET', path: `${CAMPAIGN_ANALYTICS}/export`, auth: 'session', workspace: 'path', query: campaignAnalytics.exportQuery, summary: "A page of a campaign's messages as CSV" },
  { method: 'POST', path: TEMPLATES, auth: 'session', workspace: 'path', body: campaigns.templateCreate, summary: 'Create a message template' },
  { method: 'GET', path: TEMPLATES, auth: 'session', workspace: 'path', summary: 'List message templates' },
  { method: 'GET', path: `${TEMPLATES}/{templateId}`, auth: 'session', workspace: 'path', summary: 'Get a message template' },
  { method: 'PUT', path: `${TEMPLATES}/{templateId}`, auth: 'session', workspace: 'path', body: campaigns.templateUpdate, summary: 'Update a message template' },
  { method: 'DELETE', path: `${TEMPLATES}/{templateId}`, auth: 'session', workspace: 'path', summary: 'Delete a message template no live campaign uses' },

  // The Segment-compatible source, at the root (README, Segment-compatible source; docs/ingest.md).
  sourceRoute('/v1/identify', source.identify, 'Segment identify: the person and their traits'),
  sourceRoute('/v1/track', source.track, 'Segment track: an event'),
  sourceRoute('/v1/page', source.page, 'Segment page: the event page_viewed'),
  sourceRoute('/v1/screen', source.screen, 'Segment screen: the event screen_viewed'),
  sourceRoute('/v1/group', source.group, 'Segment group: the traits group_id and group'),
  sourceRoute('/v1/alias', source.alias, 'Segment alias: previousId merged into userId'),
  sourceRoute('/v1/batch', source.batch, 'Segment batch: messages of every type, valid ones kept'),
  // Outbound webhook endpoints (session; docs/webhooks.md): owners and admins write, members read.
  { method: 'POST', path: HOOKS, auth: 'session', workspace: 'path', body: webhooks.endpointCreate, summary: 'Create a webhook endpoint; its signing secret is answered once' },
  { method: 'GET', path: HOOKS, auth: 'session', workspace: 'path', summary: "The workspace's webhook endpoints" },
  { method: 'GET', path: `${HOOKS}/{endpointId}`, auth: 'session', workspace: 'path', summary: 'A webhook endpoint' },
  { method: 'PUT', path: `${HOOKS}/{endpointId}`, auth: 'session', workspace: 'path', body: webhooks.endpointUpdate, summary: 'Change a webhook endpoint (URL, event types, description, enabled)' },
  { method: 'DELETE', path: `${HOOKS}/{endpointId}`, auth: 'session', workspace: 'path', summary: 'Delete a webhook endpoint and its pending deliveries' },
  { method: 'POST', path: `${HOOKS}/{endpointId}/rotate-secret`, auth: 'session', workspace: 'path', summary: "Replace an endpoint's signing secret (the previous one also signs for 24 hours)" },
  { method: 'GET', path: `${HOOKS}/{endpointId}/attempts`, auth: 'session', workspace: 'path', query: webhooks.attemptList, summary: "An endpoint's delivery attempts, newest first" },
  { method: 'POST', path: `${HOOKS}/{endpointId}/test`, auth: 'session', workspace: 'path', summary: 'Send a webhook.test event to the endpoint' },
  { method: 'POST', path: `${HOOKS}/{endpointId}/attempts/{attemptId}/resend`, auth: 'session', workspace: 'path', summary: "Send an attempt's event again (same webhook-id)" },
  { method: 'GET', path: `${HOOKS}/node-secret`, auth: 'session', workspace: 'path', summary: "The secret the workflow's webhook nodes sign their calls with (made on first use)" },
  // Lists and their CSV imports (session; docs/audiences.md).
  { method: 'POST', path: LISTS, auth: 'session', workspace: 'path', body: audiences.listCreate, summary: 'Create a list' },
  { method: 'GET', path: LISTS, auth: 'session', workspace: 'path', summary: 'The lists, newest first, with their member counts' },
  { method: 'GET', path: `${LISTS}/{listId}`, auth: 'session', workspace: 'path', summary: 'Get a list' },
  { method: 'PUT', path: `${LISTS}/{listId}`, auth: 'session', workspace: 'path', body: audiences.listUpdate, summary: "Change a list's name or description" },
  { method: 'DELETE', path: `${LISTS}/{listId}`, auth: 'session', workspace: 'path', summary: 'Delete a list (its people stay)' },
  { method: 'POST', path: `${LISTS}/{listId}/import`, auth: 'session', workspace: 'path', upload: true, headers: { 'Content-Type': 'Must be text/csv' }, summary: 'Import a CSV (header row with external_id or email; other columns are traits) into the list, in the background: 202 with its import_id' },
  { method: 'GET', path: `${LISTS}/{listId}/imports`, auth: 'session', workspace: 'path', summary: "The list's imports, newest first (its import history)" },
  { method: 'GET', path: `${LISTS}/{listId}/people`, auth: 'session', workspace: 'path', query: audiences.listPeople, summary: "A page of the list's members" },
  { method: 'GET', path: '/workspaces/{workspaceId}/imports/{importId}', auth: 'session', workspace: 'path', summary: "An import's progress and first 100 row errors, readable while it runs" },

  // Segments kept live (session; docs/audiences.md).
  { method: 'POST', path: SEGMENTS, auth: 'session', workspace: 'path', body: segments.segmentCreate, summary: 'Create a segment: its members are computed in the background, then kept as people change' },
  { method: 'GET', path: SEGMENTS, auth: 'session', workspace: 'path', summary: 'The segments, newest first, with their counts and status' },
  { method: 'GET', path: `${SEGMENTS}/{segmentId}`, auth: 'session', workspace: 'path', summary: 'Get a segment with its live count, status and progress' },
  { method: 'PUT', path: `${SEGMENTS}/{segmentId}`, auth: 'session', workspace: 'path', body: segments.segmentUpdate, summary: "Change a segment's name or conditions (computed again in the background)" },
  { method: 'DELETE', path: `${SEGMENTS}/{segmentId}`, auth: 'session', workspace: 'path', summary: 'Delete a segment (its people stay)' },
  { method: 'GET', path: `${SEGMENTS}/{segmentId}/people`, auth: 'session', workspace: 'path', query: segments.segmentPeople, summary: "A page of the segment's members" },

  // Topics and people's subscriptions (session; docs/audiences.md).
  { method: 'POST', path: TOPICS, auth: 'session', workspace: 'path', body: topics.topicCreate, summary: 'Create a topic' },
  { method: 'GET', path: TOPICS, auth: 'session', workspace: 'path', summary: 'The topics' },
  { method: 'GET', path: `${TOPICS}/{topicId}`, auth: 'session', workspace: 'path', summary: 'Get a topic' },
  { method: 'PUT', path: `${TOPICS}/{topicId}`, auth: 'session', workspace: 'path', body: topics.topicUpdate, summary: "Change a topic's name, description or default" },
  { method: 'DELETE', path: `${TOPICS}/{topicId}`, auth: 'session', workspace: 'path', summary: 'Delete a topic' },
  { method: 'GET', path: '/workspaces/{workspaceId}/people/{personId}/subscriptions', auth: 'session', workspace: 'path', summary: "A person's subscriptions: topic id → subscribed" },
  { method: 'PUT', path: '/workspaces/{workspaceId}/people/{personId}/subscriptions', auth: 'session', workspace: 'path', body: topics.subscriptionsUpdate, summary: "Change a person's subscriptions (the topics named)" },

  // Workspace analytics (session, or a key with events:read; docs/analytics.md).
  { method: 'GET', path: `${ANALYTICS}/events`, auth: 'session', workspace: 'path', keys: ANALYTICS_KEYS, query: analytics.dailyQuery, summary: 'Daily counts and distinct people of one event over a range of UTC days' },
  { method: 'POST', path: `${ANALYTICS}/funnel`, auth: 'session', workspace: 'path', keys: ANALYTICS_KEYS, body: analytics.funnelBody, summary: 'A funnel of 2 to 5 events in order within a window: people per step (a read; POST for its list of steps)' },

  // Outside /api/v1, no credential (docs/channels.md): unsubscribe links, provider callbacks.
  { method: 'GET', path: '/u/{token}', auth: 'none', scope: 'ip-public', summary: 'Unsubscribe page (changes nothing; its button POSTs)' },
  { method: 'POST', path: '/u/{token}', auth: 'none', scope: 'ip-public', summary: 'One-click unsubscribe (RFC 8058): 200, never a redirect' },
  { method: 'GET', path: '/p/{token}', auth: 'none', scope: 'ip-public', summary: 'Preference page: topics with toggles and unsubscribe from everything (changes nothing; its forms POST)' },
  { method: 'POST', path: '/p/{token}', auth: 'none', scope: 'ip-public', summary: 'Save the preference page (form fields: topic=<id> per topic ticked, or action=unsubscribe_all): 200, never a redirect' },
  // Herald's own opens and clicks (docs/tracking.md).
  { method: 'GET', path: '/t/c/{token}', auth: 'none', scope: 'ip-public', headers: TRACKING_HEADERS, summary: "A tracked link: 302 to its target as stored with the message, the click recorded" },
  { method: 'GET', path: '/t/o/{token}', auth: 'none', scope: 'ip-public', headers: TRACKING_HEADERS, summary: "An email's open pixel: a 1×1 GIF, the open recorded" },
  { method: 'POST', path: '/webhooks/email/{workspaceId}', auth: 'none', scope: 'ip-webhooks', headers: EMAIL_CALLBACK_HEADERS, summary: "Email delivery callbacks of the channel's provider (SendGrid, Mailgun, Postmark)" },
  { method: 'POST', path: '/webhooks/sms/{workspaceId}/status', auth: 'none', scope: 'ip-webhooks', headers: TWILIO_HEADERS, summary: 'Twilio message status callbacks' },
  { method: 'POST', path: '/webhooks/sms/{workspaceId}/inbound', auth: 'none', scope: 'ip-webhooks', headers: TWILIO_HEADERS, summary: 'Twilio incoming messages (STOP, START, anything else)' },
] as const satisfies readonly RouteDef[];

type Def = (typeof defs)[number];
type IdOf<D> = D extends { method: infer M extends string; path: infer P extends string } ? `${M} ${P}` : never;

/** `"<METHOD> <path>"` of every route. */
export type RouteId = IdOf<Def>;
/** The routes an actor answers with a handler (not the public ones the front answers, nor the 501s). */
export type HandledRouteId = IdOf<Exclude<Def, { notImplemented: string } | { auth: 'public' }>>;
/** The routes that act on no workspace; every other handled route has one (the key's, or the path's or header's). */
export type WorkspacelessRouteId = IdOf<Extract<Def, { workspace: 'none' }>>;

type DefOf<Id extends RouteId, D = Def> = D extends unknown ? (IdOf<D> extends Id ? D : never) : never;
/** The body a route's handler gets, validated against its schema (undefined where it has none). */
export type BodyOf<Id extends RouteId> = DefOf<Id> extends { body: infer S } ? FromSchema<S> : undefined;
/** The query a route's handler gets, validated against its schema. */
export type QueryOf<Id extends RouteId> = DefOf<Id> extends { query: infer S } ? FromSchema<S> : Record<string, unknown>;

/** The names of a path template's `{…}` segments. */
type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? N | ParamNames<Rest> : never;
/** A route's path parameters by the names its path template gives them: the router fills every one. */
export type ParamsOf<Id extends RouteId> = { readonly [N in ParamNames<Id>]: string };

export type Route = RouteDef & { id: RouteId };

export const ROUTES: readonly Route[] = defs.map((d) => ({ ...(d as RouteDef), id: `${d.method} ${d.path}` as RouteId }));

/** Routes served at the root with no credential. */
export const isOutside = (route: Route): route is Route & OutsideRoute => route.auth === 'none';
/** The Segment-compatible source's routes. */
export const isSource = (route: Route): route is Route & KeyRoute & { source: true } => route.auth === 'key' && route.source === true;
/** Routes served at the root rather than under API_PREFIX. */
export const atRoot = (route: Route): boolean => isOutside(route) || isSource(route);

export function errorShapeOf(route: Route): ErrorShape {
  if (route.auth === 'session') return 'session';
  if (route.auth === 'none') return 'flat';
  if (route.auth === 'key') return route.source ? 'source' : (route.errors ?? 'key');
  return 'key';
}

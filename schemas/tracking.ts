// Herald's own tracking routes (docs/tracking.md): outside /api/v1, no credential.
import { object } from './common.js';
import { str, type RouteResponses } from './response-parts.js';

/** `settings.tracking` of a workspace: each omitted key keeps its value (both on by default). */
export const trackingSettings = object(
  { opens: { type: 'boolean', description: 'The open pixel in emails' }, clicks: { type: 'boolean', description: "Links wrapped in emails' html and SMS bodies" } },
  [],
  { additionalProperties: false },
);

const BAD_LINK = { codes: [], why: 'A token Herald did not make (forged, altered), or its message is gone: an HTML page, nothing recorded, no redirect', mediaType: 'text/html' };

export const trackingResponses: Record<string, RouteResponses> = {
  'GET /t/c/{token}': {
    success: { 302: { description: "To the link's target as stored with the message at send time (never read from the request); the click recorded", headers: { Location: "The link's stored target" } } },
    errors: { 404: BAD_LINK },
  },
  'GET /t/o/{token}': {
    success: { 200: { description: 'A 1×1 transparent GIF; the open recorded', schema: str, mediaType: 'image/gif' } },
    errors: { 404: BAD_LINK },
  },
};

// The Segment-compatible source's credential (README, Segment-compatible source): Segment's
// clients send their write key as the HTTP Basic user name with an empty password, or as the
// body's `writeKey`. Here the write key is a Herald API key.
import { decodeBody } from '../actors/body-encoding.js';
import { nestsDeeperThan } from '../actors/json-depth.js';

/** The key of an `Authorization: Basic` header: its user name (or, with none, its password); null without one. */
export function writeKey(header: string): string | null {
  if (header.length <= 6 || header.slice(0, 6).toLowerCase() !== 'basic ') return null;
  const pair = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  const user = colon < 0 ? pair : pair.slice(0, colon);
  return (user || (colon < 0 ? '' : pair.slice(colon + 1))).trim() || null;
}

/**
 * The body's `writeKey`, or '' when it has none. Read only when no Basic credential came: the
 * key names the workspace, hence the actor, so the front has to look before dispatching. The
 * body is decoded and parsed again by the actor; this costs a parse only on this fallback.
 */
export function bodyWriteKey(body: Uint8Array | null, contentEncoding: readonly string[] | undefined, limit: number): string {
  if (!body || body.length === 0) return '';
  const decoded = decodeBody(body, contentEncoding, limit);
  if (!decoded.ok) return '';
  const text = Buffer.from(decoded.body).toString('utf8');
  if (nestsDeeperThan(text)) return '';
  try {
    const parsed: unknown = JSON.parse(text);
    const key = parsed !== null && typeof parsed === 'object' ? (parsed as { writeKey?: unknown }).writeKey : undefined;
    return typeof key === 'string' ? key.trim() : '';
  } catch {
    return '';
  }
}

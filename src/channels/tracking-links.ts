// The tracked links of a message (docs/tracking.md): `/t/c/{token}` for its nth wrapped link and
// `/t/o/{token}` for its open pixel. A token is the workspace's and the message's ids (the
// workspace first: the front shards by it), for a click the link's index, and an HMAC-SHA256
// over them (128 bits) under a key of its own derived from the unsubscribe key, so no other
// link's token opens here. The target is the message's stored link, never the request's.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { TrackingSettings, Wrap } from '../domain/tracking.js';
import type { AddressedChannel } from './channel.js';

const MAC_BYTES = 16;
/** Links a message may have wrapped (the index is two bytes). */
const MAX_TRACKED_LINKS = 1_000;

const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidOf = (b: Buffer) => b.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

const keys = new WeakMap<Buffer, { click: Buffer; open: Buffer }>();
function keysOf(unsubscribeKey: Buffer) {
  let k = keys.get(unsubscribeKey);
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', unsubscribeKey, Buffer.alloc(0), `herald ${purpose} tracking`, 32));
  if (!k) keys.set(unsubscribeKey, (k = { click: derive('click'), open: derive('open') }));
  return k;
}

const mac = (key: Buffer, raw: Buffer) => createHmac('sha256', key).update(raw).digest().subarray(0, MAC_BYTES);

function seal(key: Buffer, raw: Buffer): string {
  return Buffer.concat([raw, mac(key, raw)]).toString('base64url');
}

/** The ids of a genuine token of `key` with `extra` bytes after them; undefined for anything else. */
function open(key: Buffer, token: string, extra: number): { workspaceId: string; messageId: string; rest: Buffer } | undefined {
  const bytes = 32 + extra + MAC_BYTES;
  if (token.length !== Math.ceil((bytes * 8) / 6) || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  // One spelling per token: the spare bits of the last character must be zero.
  if (raw.length !== bytes || raw.toString('base64url') !== token) return undefined;
  const ids = raw.subarray(0, bytes - MAC_BYTES);
  if (!timingSafeEqual(raw.subarray(bytes - MAC_BYTES), mac(key, ids))) return undefined;
  return { workspaceId: uuidOf(ids.subarray(0, 16)), messageId: uuidOf(ids.subarray(16, 32)), rest: ids.subarray(32) };
}

export interface TrackedLink {
  workspaceId: string;
  messageId: string;
}

export const clickToken = (unsubscribeKey: Buffer, m: TrackedLink, index: number): string => {
  const at = Buffer.alloc(2);
  at.writeUInt16BE(index);
  return seal(keysOf(unsubscribeKey).click, Buffer.concat([uuidBytes(m.workspaceId), uuidBytes(m.messageId), at]));
};

export const openToken = (unsubscribeKey: Buffer, m: TrackedLink): string => seal(keysOf(unsubscribeKey).open, Buffer.concat([uuidBytes(m.workspaceId), uuidBytes(m.messageId)]));

export function readClickToken(unsubscribeKey: Buffer, token: string): (TrackedLink & { index: number }) | undefined {
  const o = open(keysOf(unsubscribeKey).click, token, 2);
  return o && { workspaceId: o.workspaceId, messageId: o.messageId, index: o.rest.readUInt16BE(0) };
}

export function readOpenToken(unsubscribeKey: Buffer, token: string): TrackedLink | undefined {
  const o = open(keysOf(unsubscribeKey).open, token, 0);
  return o && { workspaceId: o.workspaceId, messageId: o.messageId };
}

/** Where tracked links point and the key their tokens derive from (the channels' messaging settings). */
export interface TrackingLinks {
  publicUrl: string;
  unsubscribeKey: Buffer;
}

/**
 * One message's tracking at send time: `wrap` numbers each link it takes (up to
 * MAX_TRACKED_LINKS; the rest, and Herald's own unsubscribe and preference links, are left as
 * they are) and `links` is what the message stores; `pixel` is its open pixel's URL.
 */
export function messageTracker(s: TrackingLinks, m: TrackedLink): { wrap: Wrap; links: string[]; pixel: () => string } {
  const links: string[] = [];
  const own = [`${s.publicUrl}/u/`, `${s.publicUrl}/p/`, `${s.publicUrl}/t/`];
  const wrap: Wrap = (url) => {
    if (own.some((p) => url.startsWith(p)) || links.length >= MAX_TRACKED_LINKS) return undefined;
    // Stored as a URL parser writes it: what the redirect's Location carries is then plain ASCII,
    // with no line break (an attribute's `&#10;`) to split the response with.
    const target = URL.canParse(url) ? new URL(url) : undefined;
    if (!target || (target.protocol !== 'https:' && target.protocol !== 'http:')) return undefined;
    links.push(target.href);
    return `${s.publicUrl}/t/c/${clickToken(s.unsubscribeKey, m, links.length - 1)}`;
  };
  return { wrap, links, pixel: () => `${s.publicUrl}/t/o/${openToken(s.unsubscribeKey, m)}` };
}

/**
 * A message's composed fields as sent under the workspace's tracking (null: the channel tracks
 * nothing, or both are off), and the targets its record keeps (null: none wrapped).
 */
export function trackedFields(
  channel: Pick<AddressedChannel, 'track'>,
  s: TrackingLinks,
  tracking: TrackingSettings | null,
  m: TrackedLink,
  fields: Readonly<Record<string, string>>,
): { fields: Readonly<Record<string, string>>; links: string[] | null } {
  if (!channel.track || !tracking || (!tracking.clicks && !tracking.opens)) return { fields, links: null };
  const t = messageTracker(s, m);
  const sent = channel.track(fields, { ...(tracking.clicks ? { wrap: t.wrap } : {}), ...(tracking.opens ? { pixel: t.pixel() } : {}) });
  return { fields: sent, links: t.links.length > 0 ? t.links : null };
}

// One-click unsubscribe tokens (docs/channels.md, RFC 8058): workspace, person and message ids with
// an HMAC-SHA256 over them (truncated to 128 bits), keyed by a key derived from
// HERALD_SECRETS_KEY. It cannot be forged, nor moved to another person; it does not expire.
// The preference page's and a topic's unsubscribe links (docs/audiences.md) are the same kind of
// token under keys of their own (`linkKey`), so no link can be used as another.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

const MAC_BYTES = 16;
const uuidBytes = (id: string) => Buffer.from(id.replace(/-/g, ''), 'hex');
const uuidOf = (b: Buffer) => b.toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5');

export interface UnsubscribeSubject {
  workspaceId: string;
  personId: string;
  messageId: string;
}

/** The token key: HKDF of the secrets key, so the sealing key itself never signs anything else. */
export const unsubscribeKey = (secretsKey: Buffer): Buffer => Buffer.from(hkdfSync('sha256', secretsKey, Buffer.alloc(0), 'herald unsubscribe token', 32));

/** The key of another kind of link (`preferences`, `topic`), derived from the unsubscribe key. */
export const linkKey = (key: Buffer, purpose: 'preferences' | 'topic'): Buffer => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `herald ${purpose} link`, 32));

const mac = (key: Buffer, ids: Buffer) => createHmac('sha256', key).update(ids).digest().subarray(0, MAC_BYTES);

/** Three UUIDs (the workspace's first: the front shards by it) and their MAC, in base64url. */
export function sealIds(key: Buffer, ids: readonly [string, string, string]): string {
  const raw = Buffer.concat(ids.map(uuidBytes));
  return Buffer.concat([raw, mac(key, raw)]).toString('base64url');
}

/** The three UUIDs of a genuine token of `key`; undefined for anything else. */
export function openIds(key: Buffer, token: string): [string, string, string] | undefined {
  if (!/^[A-Za-z0-9_-]{86}$/.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  // 86 characters carry 516 bits for 64 bytes: the last one's 4 spare bits must be zero, so a token has one spelling.
  if (raw.toString('base64url') !== token) return undefined;
  const ids = raw.subarray(0, 48);
  if (!timingSafeEqual(raw.subarray(48), mac(key, ids))) return undefined;
  return [uuidOf(ids.subarray(0, 16)), uuidOf(ids.subarray(16, 32)), uuidOf(ids.subarray(32, 48))];
}

export function unsubscribeToken(key: Buffer, s: UnsubscribeSubject): string {
  return sealIds(key, [s.workspaceId, s.personId, s.messageId]);
}

/** The subject of a genuine token; undefined for anything else. */
export function readUnsubscribeToken(key: Buffer, token: string): UnsubscribeSubject | undefined {
  const ids = openIds(key, token);
  return ids && { workspaceId: ids[0], personId: ids[1], messageId: ids[2] };
}

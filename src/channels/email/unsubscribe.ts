// One-click unsubscribe tokens (docs/channels.md, RFC 8058): workspace, person and message ids with
// an HMAC-SHA256 over them (truncated to 128 bits), keyed by a key derived from
// HERALD_SECRETS_KEY. It cannot be forged, nor moved to another person; it does not expire.
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

const mac = (key: Buffer, ids: Buffer) => createHmac('sha256', key).update(ids).digest().subarray(0, MAC_BYTES);

export function unsubscribeToken(key: Buffer, s: UnsubscribeSubject): string {
  const ids = Buffer.concat([uuidBytes(s.workspaceId), uuidBytes(s.personId), uuidBytes(s.messageId)]);
  return Buffer.concat([ids, mac(key, ids)]).toString('base64url');
}

/** The subject of a genuine token; undefined for anything else. */
export function readUnsubscribeToken(key: Buffer, token: string): UnsubscribeSubject | undefined {
  if (!/^[A-Za-z0-9_-]{86}$/.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  // 86 characters carry 516 bits for 64 bytes: the last one's 4 spare bits must be zero, so a token has one spelling.
  if (raw.toString('base64url') !== token) return undefined;
  const ids = raw.subarray(0, 48);
  if (!timingSafeEqual(raw.subarray(48), mac(key, ids))) return undefined;
  return { workspaceId: uuidOf(ids.subarray(0, 16)), personId: uuidOf(ids.subarray(16, 32)), messageId: uuidOf(ids.subarray(32, 48)) };
}

// API key credentials: `<prefix>.<secret>`, prefix `{ws|pk}_live_<8 hex of workspace>_<8 base62>`,
// secret 64 hex. Only the prefix is stored readable; the secret as SHA-256 (it carries 256
// bits of entropy, so a slow hash buys nothing).
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { KeyType } from '../domain/principals.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_RE = /^((?:ws|pk)_live_[0-9a-f]{8}_[0-9A-Za-z]{8})\.([0-9a-f]{64})$/;

export function newPrefix(workspaceId: string, keyType: KeyType): string {
  let random = '';
  for (let i = 0; i < 8; i++) random += BASE62[randomInt(62)];
  const short = workspaceId.replace(/-/g, '').slice(0, 8);
  return `${keyType === 'public' ? 'pk' : 'ws'}_live_${short}_${random}`;
}

export function newSecret(): string {
  return randomBytes(32).toString('hex');
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function parseKey(credential: string): { prefix: string; secret: string } | null {
  const m = KEY_RE.exec(credential);
  return m ? { prefix: m[1]!, secret: m[2]! } : null;
}

/** A credential in API-key form, well formed or not (refused with 403 on session routes: README, Errors). */
export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith('ws_live_') || credential.startsWith('pk_live_');
}

/** A public key's credential (`pk_live_…`): meant to be seen in pages and apps. */
export function isPublicKey(credential: string): boolean {
  return credential.startsWith('pk_live_');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

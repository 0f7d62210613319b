// The permission names and the rules for granting them (README, Permissions).
import type { KeyType } from '../domain/principals.js';

/** Names that gate at least one key route. */
export const ROUTE_PERMISSIONS = [
  'events:read', 'events:write', 'people:read', 'people:write', 'people:identify', 'people:delete',
  'campaigns:trigger', 'devices:register', 'devices:read', 'devices:write', 'push:send', 'push:read',
] as const;

/** Accepted at key creation, gate nothing. `admin` is not a synonym for `*`. */
export const INERT_PERMISSIONS = [
  'events:list', 'people:list', 'campaigns:read', 'campaigns:write', 'analytics:read', 'analytics:write',
  'segments:read', 'segments:write', 'webhooks:read', 'webhooks:write', 'workspace:read', 'workspace:write', 'admin',
] as const;

const WILDCARD = '*';

/** The only permissions a public (`pk_live_`) key may hold; also what an app key gets by default. */
export const PUBLIC_KEY_PERMISSIONS = ['events:write', 'devices:register', 'people:identify'] as const;

export const GRANTABLE_PERMISSIONS: readonly string[] = [...ROUTE_PERMISSIONS, WILDCARD, ...INERT_PERMISSIONS];

/** True when `held` opens a route that accepts any of `anyOf`. */
export function grants(held: readonly string[], anyOf: readonly string[]): boolean {
  if (held.includes(WILDCARD)) return true;
  for (const p of anyOf) if (held.includes(p)) return true;
  return false;
}

export type PermissionCheck =
  | { ok: true; permissions: string[] }
  | { ok: false; code: 'VALIDATION_ERROR' | 'PUBLIC_KEY_PERMISSION'; message: string; details: Record<string, unknown> };

/**
 * Validates the permissions asked for a key of `keyType`. A public key asking for nothing
 * gets the public set; a secret key must ask for at least one name.
 */
export function checkKeyPermissions(keyType: KeyType, asked: readonly string[] | undefined): PermissionCheck {
  const unknown = (asked ?? []).filter((p) => !GRANTABLE_PERMISSIONS.includes(p));
  if (unknown.length > 0) {
    return { ok: false, code: 'VALIDATION_ERROR', message: `Unknown permission: ${unknown.join(', ')}`, details: { unknown, allowed: GRANTABLE_PERMISSIONS } };
  }
  if (keyType === 'public') {
    if (!asked || asked.length === 0) return { ok: true, permissions: [...PUBLIC_KEY_PERMISSIONS] };
    const disallowed = asked.filter((p) => !(PUBLIC_KEY_PERMISSIONS as readonly string[]).includes(p));
    if (disallowed.length > 0) {
      return {
        ok: false,
        code: 'PUBLIC_KEY_PERMISSION',
        message: `A public key may hold only ${PUBLIC_KEY_PERMISSIONS.join(', ')}; not allowed: ${disallowed.join(', ')}`,
        details: { disallowed, allowed: PUBLIC_KEY_PERMISSIONS },
      };
    }
    return { ok: true, permissions: [...new Set(asked)] };
  }
  if (!asked || asked.length === 0) {
    return { ok: false, code: 'VALIDATION_ERROR', message: 'permissions is required for a secret key', details: { allowed: GRANTABLE_PERMISSIONS } };
  }
  return { ok: true, permissions: [...new Set(asked)] };
}

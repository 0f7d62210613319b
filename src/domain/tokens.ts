// Push tokens as the push routes see them (docs/channels.md; README, Request bodies and Routes): the platforms
// and suppression types they name, how a token is shown back (masked: the raw token is never
// echoed), and the format rules of token validation.

/** Platforms a device registers under (README, Request bodies), and a push is sent to. */
export const DEVICE_PLATFORMS = ['ios', 'android', 'web'] as const;
export type DevicePlatform = (typeof DEVICE_PLATFORMS)[number];

/** Platforms a suppression or a validated token may name (README, Request bodies). */
export const PUSH_PLATFORMS = [...DEVICE_PLATFORMS, 'huawei'] as const;
export type PushPlatform = (typeof PUSH_PLATFORMS)[number];

/** The kinds of token suppression (README, Request bodies). */
export const SUPPRESSION_TYPES = ['uninstalled', 'disabled', 'invalid_token', 'opt_out'] as const;
export type SuppressionType = (typeof SUPPRESSION_TYPES)[number];

/** Tokens at least this long show their first and last MASK_KEEP characters (docs/channels.md). */
const MASK_MIN_LENGTH = 12;
const MASK_KEEP = 4;

/**
 * `abcd***wxyz` for a token of 12 characters or more, `***` for a shorter one (docs/channels.md).
 * Counted in code points, so a mask never splits a surrogate pair.
 */
export function maskToken(token: string): string {
  const chars = Array.from(token);
  return chars.length >= MASK_MIN_LENGTH ? `${chars.slice(0, MASK_KEEP).join('')}***${chars.slice(-MASK_KEEP).join('')}` : '***';
}

// Token validation (README, Request bodies): an APNs token is hex bytes (32 today; up to 100 allowed for growth), the others
// opaque text of the device-token length bounds without whitespace.
const APNS_TOKEN = /^(?:[0-9a-fA-F]{2}){32,100}$/;
const OPAQUE_TOKEN = /^\S{10,4096}$/u;

/** Whether `token` has the format of a `platform` push token (README, Request bodies). */
export function tokenFormatValid(token: string, platform: PushPlatform): boolean {
  if (platform === 'ios') return APNS_TOKEN.test(token);
  // Length in characters (code points), as the schemas count it.
  return OPAQUE_TOKEN.test(token);
}

/** Why a token fails validation (README, Request bodies), in the order they are checked. */
export const TOKEN_PROBLEMS = ['invalid_format', 'suppressed', 'not_registered', 'inactive'] as const;
export type TokenProblem = (typeof TOKEN_PROBLEMS)[number];

/** What the workspace knows of the well-formed tokens of one validation request. */
export interface KnownTokens {
  /** Suppressed under any type. */
  suppressed: ReadonlySet<string>;
  /** The workspace's devices by token. */
  devices: ReadonlyMap<string, { is_active: boolean; is_valid: boolean }>;
}

/** The first problem of the token, checked in the documented order (README, Request bodies); undefined when it is valid. */
export function tokenProblem(token: string, platform: PushPlatform, known: KnownTokens): TokenProblem | undefined {
  if (!tokenFormatValid(token, platform)) return 'invalid_format';
  if (known.suppressed.has(token)) return 'suppressed';
  const device = known.devices.get(token);
  if (!device) return 'not_registered';
  if (!device.is_active || !device.is_valid) return 'inactive';
  return undefined;
}

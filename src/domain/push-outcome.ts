// What a push provider's answer means for one device (docs/channels.md; provider facts in
// the services notes). Pure: the provider modules in src/channels/push do the I/O and hand the status, the
// error body and the Retry-After header here.

/** The suppression a dead token records (README, Request bodies). */
type DeadTokenType = 'uninstalled' | 'invalid_token';

/**
 * One device's outcome:
 * - `delivered`: handed to the provider (not proof of delivery), with the provider's message id;
 * - `dead_token`: the token is gone; the device is invalidated and a suppression of `suppression` recorded;
 * - `retryable`: try again later (429, 500, 503, a lost connection); `retryAfterMs` when the provider said;
 * - `config_error`: the workspace's credentials are missing, wrong or expired, or the topic is wrong;
 *   retrying will not help, and the device is left as it is;
 * - `rejected`: the provider refused this message for a reason that is neither the token nor the
 *   credentials (payload too large, a bad field, the sandbox's `fail-` tokens); not retried.
 */
export type PushOutcome =
  | { kind: 'delivered'; providerMessageId: string }
  | { kind: 'dead_token'; suppression: DeadTokenType; error: string }
  | { kind: 'retryable'; error: string; retryAfterMs?: number }
  | { kind: 'config_error'; error: string }
  | { kind: 'rejected'; error: string };

/** Statuses every provider asks to be retried. */
const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);

/**
 * A Retry-After header in milliseconds: delay-seconds or an HTTP date (relative to `nowMs`).
 * Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - nowMs);
}

// ---------------------------------------------------------------------------------------------
// FCM HTTP v1

interface FcmErrorDetail {
  '@type'?: string;
  errorCode?: string;
  fieldViolations?: { field?: string; description?: string }[];
}

interface FcmErrorBody {
  error?: { code?: number; message?: string; status?: string; details?: FcmErrorDetail[] };
}

/** The FCM `errorCode` of an error body (the FcmError detail), else the google.rpc status. */
function fcmErrorCode(body: FcmErrorBody): string | undefined {
  const fcm = body.error?.details?.find((d) => typeof d.errorCode === 'string');
  return fcm?.errorCode ?? body.error?.status;
}

/** Whether an INVALID_ARGUMENT is about the registration token (rather than another field of the message). */
function isAboutToken(body: FcmErrorBody): boolean {
  const violations = (body.error?.details ?? []).flatMap((d) => d.fieldViolations ?? []);
  if (violations.some((v) => v.field === 'message.token')) return true;
  return /registration token/i.test(body.error?.message ?? '');
}

/**
 * One FCM `messages:send` answer. `body` is the parsed JSON (or undefined when it was not JSON);
 * `retryAfterMs` is the parsed Retry-After header.
 */
export function classifyFcm(status: number, body: unknown, retryAfterMs?: number): PushOutcome {
  const b = (typeof body === 'object' && body !== null ? body : {}) as FcmErrorBody & { name?: unknown };
  if (status === 200) {
    if (typeof b.name === 'string') return { kind: 'delivered', providerMessageId: b.name };
    return { kind: 'retryable', error: 'FCM answered 200 without a message name' };
  }
  const code = fcmErrorCode(b);
  const said = `FCM ${status}${code ? ` ${code}` : ''}${b.error?.message ? `: ${b.error.message}` : ''}`;
  if (code === 'UNREGISTERED') return { kind: 'dead_token', suppression: 'uninstalled', error: `${said} (the app was uninstalled or the token expired)` };
  if (code === 'INVALID_ARGUMENT' || status === 400) {
    if (isAboutToken(b)) return { kind: 'dead_token', suppression: 'invalid_token', error: said };
    return { kind: 'rejected', error: said };
  }
  if (RETRYABLE_STATUS.has(status) || code === 'QUOTA_EXCEEDED' || code === 'UNAVAILABLE' || code === 'INTERNAL') {
    return retryAfterMs === undefined ? { kind: 'retryable', error: said } : { kind: 'retryable', error: said, retryAfterMs };
  }
  // 401 UNAUTHENTICATED (bad or expired access token), 403 PERMISSION_DENIED / SENDER_ID_MISMATCH
  // (credentials of another project), THIRD_PARTY_AUTH_ERROR (the APNs or web push credentials
  // uploaded to Firebase), 404 on the project path (wrong project id).
  if (status === 401 || status === 403 || status === 404 || code === 'THIRD_PARTY_AUTH_ERROR' || code === 'SENDER_ID_MISMATCH') {
    return { kind: 'config_error', error: `${said} (check the FCM service account)` };
  }
  return { kind: 'rejected', error: said };
}

/** The error codes RFC 6749 (5.2) defines for a token endpoint: the only part of its answer a tenant is shown. */
const OAUTH_ERRORS = new Set(['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope']);

/**
 * An OAuth token endpoint's refusal (`{error, error_description}`): the service account is
 * wrong, disabled or deleted, so every device of the send is a configuration error. A 5xx or
 * 429 there is retryable. Only a documented `error` code is repeated: the rest of the body is
 * the endpoint's own text, which could be an internal service's (docs/isolation.md).
 */
export function classifyTokenEndpoint(status: number, body: unknown, retryAfterMs?: number): Extract<PushOutcome, { kind: 'retryable' | 'config_error' }> {
  const code = (typeof body === 'object' && body !== null ? body : {}) as { error?: unknown };
  const said = `FCM token endpoint answered ${status}${typeof code.error === 'string' && OAUTH_ERRORS.has(code.error) ? ` (${code.error})` : ''}`;
  if (RETRYABLE_STATUS.has(status)) return retryAfterMs === undefined ? { kind: 'retryable', error: said } : { kind: 'retryable', error: said, retryAfterMs };
  return { kind: 'config_error', error: `${said}: check the FCM service account` };
}

/**
 * How a call to a provider or a token endpoint failed without an answer to classify: nothing
 * could be connected to, the total deadline passed, the answer outgrew its cap, or the
 * destination is one a tenant may not reach (docs/isolation.md).
 */
export type TransportFailure = 'unreachable' | 'timed_out' | 'too_large' | 'refused';

const TRANSPORT_TEXT: Record<TransportFailure, string> = {
  unreachable: 'unreachable',
  timed_out: 'timed out',
  too_large: 'answer too large',
  refused: 'refused: private address',
};

/**
 * The outcome of a transport failure of `service` ("FCM", "FCM token endpoint", "APNs"): the
 * class only, never the socket's error text (a tenant must not learn which ports of which hosts
 * answer). A lost connection or a passed deadline may pass; a refused destination or an
 * oversized answer will not, so those are configuration errors.
 */
export function transportOutcome(service: string, failure: TransportFailure): Extract<PushOutcome, { kind: 'retryable' | 'config_error' }> {
  const error = `${service} ${TRANSPORT_TEXT[failure]}`;
  return failure === 'unreachable' || failure === 'timed_out' ? { kind: 'retryable', error } : { kind: 'config_error', error };
}

/** Keys FCM reserves in `data`: `from`, `notification`, `message_type`, and keys starting `google.` or `gcm.`. */
function isReservedFcmKey(key: string): boolean {
  return key === 'from' || key === 'notification' || key === 'message_type' || key.startsWith('google.') || key.startsWith('gcm.');
}

/** Custom data as FCM takes it: reserved keys dropped, every value a string (non-strings as JSON). */
export function fcmData(custom: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(custom ?? {})) {
    if (isReservedFcmKey(key) || value === undefined) continue;
    out[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// APNs

/** Reasons that say the topic (bundle id) or the provider token is wrong: the workspace's APNs settings. */
const APNS_CONFIG_REASONS = new Set([
  'BadCertificate',
  'BadCertificateEnvironment',
  'Forbidden',
  'InvalidProviderToken',
  'MissingProviderToken',
  'MissingTopic',
  'BadTopic',
  'TopicDisallowed',
  'DeviceTokenNotForTopic',
  'TooManyProviderTokenUpdates',
]);

/**
 * One APNs answer: HTTP status and the `reason` of its JSON body (an Apple reason code; anything
 * else the answer carried is not repeated). No answer at all is a transportOutcome.
 */
export function classifyApns(status: number, reason: string | undefined, apnsId?: string, retryAfterMs?: number): PushOutcome {
  if (status === 200) return { kind: 'delivered', providerMessageId: apnsId ?? '' };
  const code = reason !== undefined && /^[A-Za-z]{1,64}$/.test(reason) ? reason : undefined;
  const said = `APNs ${status}${code ? ` ${code}` : ''}`;
  if (status === 410 && (code === 'Unregistered' || code === 'ExpiredToken' || code === undefined)) {
    return { kind: 'dead_token', suppression: 'uninstalled', error: `${said} (the app was uninstalled)` };
  }
  if (status === 400 && code === 'BadDeviceToken') return { kind: 'dead_token', suppression: 'invalid_token', error: said };
  // node-apn regenerates its provider token on ExpiredProviderToken: the next attempt carries a fresh one.
  if (RETRYABLE_STATUS.has(status) || code === 'ExpiredProviderToken') {
    return retryAfterMs === undefined ? { kind: 'retryable', error: said } : { kind: 'retryable', error: said, retryAfterMs };
  }
  if (status === 403 || (code !== undefined && APNS_CONFIG_REASONS.has(code))) {
    return { kind: 'config_error', error: `${said} (check the APNs key, key id, team id and bundle id)` };
  }
  return { kind: 'rejected', error: said };
}

/** Custom data as an APNs payload takes it: `aps` is Apple's, so it is dropped. */
export function apnsData(custom: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(custom ?? {})) if (key !== 'aps' && value !== undefined) out[key] = value;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Retries

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** The first back-off; doubled on each further attempt. */
  baseDelayMs: number;
  /** Largest computed back-off. */
  maxDelayMs: number;
  /** Largest wait a Retry-After may impose; a longer one is capped to this. */
  maxRetryAfterMs: number;
  /**
   * No attempt starts later than this after the first one did: with each attempt bounded by the
   * providers' 10 s deadline, a send (retries included) ends within 25 s, inside the request
   * timeout, however slowly a provider or a token endpoint answers.
   */
  maxElapsedMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 250, maxDelayMs: 5_000, maxRetryAfterMs: 30_000, maxElapsedMs: 15_000 };

/**
 * How long to wait before attempt `attempt + 1` (attempt counts from 1): the provider's
 * Retry-After when it gave one (capped), else exponential back-off with jitter
 * (`random` in [0, 1)) over [base·2^(attempt-1) / 2, base·2^(attempt-1)], capped.
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | undefined, policy: RetryPolicy, random: number): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}

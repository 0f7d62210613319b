// The front's authenticate step: who a request acts as (an API key, a session user) and on
// which actor it runs, or the reply that refuses it. Failed credentials draw on the caller's
// unauthenticated budget (ip-public), which bounds guessing.
import type { Config } from '../config.js';
import { errorShapeOf, type Route } from '../routes.js';
import { errorReply, forbidden, rateLimited, unauthorized, type Reply } from '../handlers/reply.js';
import type { KeyPrincipal, NoPrincipal, SessionPrincipal } from '../domain/principals.js';
import { inRanges } from '../domain/ip-ranges.js';
import type { Buckets, Refusal } from '../ratelimit/buckets.js';
import type { KeyCache, KeyRecord } from '../auth/key-cache.js';
import type { UsageRecorder } from '../auth/usage.js';
import type { SessionVerifier } from '../auth/sessions.js';
import { isPublicKey, looksLikeApiKey, parseKey, secretMatches } from '../auth/key-format.js';
import { bodyWriteKey, writeKey } from './write-key.js';
import { grants } from '../auth/permissions.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';

const MISSING_KEY = 'Missing Authorization: Bearer <API_KEY> header';
const MISSING_WRITE_KEY = 'Missing write key: send it as the HTTP Basic user name (empty password) or as writeKey in the body';

/** What authentication reads of a request. */
export interface Asking {
  authorization: string;
  /** The headers the route reads, by lower-case name (the source's Content-Encoding: its body may carry the write key). */
  headers: Record<string, string[]>;
  workspaceHeader: string;
  query: string;
  ip: string;
}

/** Who a request acts as, and on which actor it runs. */
export interface Caller {
  principal: KeyPrincipal | SessionPrincipal | NoPrincipal;
  workspaceId: string | null;
  shard: string;
}

/** `paid`: the failure was charged to the caller's unauthenticated budget already. */
type KeyAuth = { ok: true; key: KeyRecord } | { ok: false; details: string; paid: boolean } | { ok: false; refused: Refusal };

/** What the authenticate step uses (the front's dependencies include these). */
export interface AuthDeps {
  cfg: Config;
  keys: KeyCache;
  usage: UsageRecorder;
  verifySession: SessionVerifier;
}

export function createAuthentication(deps: AuthDeps, buckets: Buckets) {
  const { cfg } = deps;
  const allowlistEnforced = cfg.enforceIpAllowlist || cfg.trustedProxies.length > 0;
  const warnedAt = new Map<string, number>();

  /**
   * authenticate the key → allowlist → workspace match → permission. The Segment-compatible
   * source's key is its write key: the Basic user name, else the body's `writeKey`.
   */
  async function keyCaller(inc: Asking, route: Extract<Route, { auth: 'key' }>, params: Record<string, string>, body: Uint8Array | null = null): Promise<Caller | Reply> {
    const shape = errorShapeOf(route);
    // A beacon (the browser SDK's flush on page hide) cannot send a header: a public key may come in ?key=.
    const header = route.source ? (writeKey(inc.authorization) ?? bodyWriteKey(body, inc.headers['content-encoding'], route.maxBody ?? cfg.maxBodyBytes)) : bearer(inc.authorization);
    const inQuery = !header && route.beacon ? keyInQuery(inc.query) : '';
    if (inQuery && !isPublicKey(inQuery)) return failedAuth(inc, unauthorized(shape, 'Only a public key (pk_live_…) is read from ?key='));
    const auth = await authenticateKey(inc, header || inQuery, route.source ? MISSING_WRITE_KEY : MISSING_KEY);
    if ('refused' in auth) return rateLimited(auth.refused);
    if (!auth.ok) return auth.paid ? unauthorized(shape, auth.details) : failedAuth(inc, unauthorized(shape, auth.details));
    const key = auth.key;
    deps.usage.record(key.id, route.id);
    if (key.allowlist.length > 0 && !inRanges(inc.ip, key.ranges)) {
      if (allowlistEnforced) return forbidden(shape, 'Client IP is not in the key allowlist');
      warnAllowlist(key, inc.ip);
    }
    if (params.workspaceId !== undefined && params.workspaceId !== key.workspaceId) return forbidden(shape, 'Workspace does not match the API key');
    if (!grants(key.permissions, route.permissions)) return forbidden(shape, route.source ? `The key lacks ${route.permissions.join(' or ')}` : undefined);
    return { principal: { kind: 'key', keyId: key.id, workspaceId: key.workspaceId, permissions: key.permissions }, workspaceId: key.workspaceId, shard: key.workspaceId };
  }

  /** verify the session token → user budget → the workspace it acts on (membership is the actor's step). */
  async function sessionCaller(inc: Asking, route: Extract<Route, { auth: 'session' }>, params: Record<string, string>): Promise<Caller | Reply> {
    const shape = errorShapeOf(route);
    const token = bearer(inc.authorization);
    // A route a key may open (the analytics reads) takes one of the path's workspace as a key route would.
    if (token && looksLikeApiKey(token)) return route.keys ? keyCaller(inc, { ...route, auth: 'key', ...route.keys }, params) : forbidden(shape);
    const user = token ? await deps.verifySession(token) : null;
    if (!user) return failedAuth(inc, unauthorized(shape, token ? 'Session token failed verification' : 'Missing Authorization: Bearer <SESSION_TOKEN> header'));
    const refused = buckets.take('user-dashboard', user.sub);
    if (refused) return rateLimited(refused);
    let workspaceId: string | null = null;
    if (route.workspace === 'path') workspaceId = params.workspaceId!;
    if (route.workspace === 'header') {
      workspaceId = inc.workspaceHeader || new URLSearchParams(inc.query).get('workspace_id') || '';
      if (!workspaceId) return errorReply(shape, 'VALIDATION_ERROR', 'The X-Workspace-ID header (or a workspace_id query parameter) is required');
      if (isUuid(workspaceId)) workspaceId = workspaceId.toLowerCase();
    }
    return { principal: { kind: 'session', user }, workspaceId, shard: workspaceId ?? user.sub };
  }

  /**
   * A key the cache does not hold costs a store lookup, paid for beforehand with a token of
   * the caller's unauthenticated budget (`paid`: that token is the failed authentication's
   * charge) and given back if the key authenticates. So the lookups an IP can cause with keys
   * that do not exist are bounded by that budget, however many it sends, and at once. A
   * request that joins a lookup already under way costs none and pays nothing beforehand: a
   * busy client's requests arriving while its key is read again do not drain the budget.
   */
  async function authenticateKey(inc: Asking, token: string, missing: string): Promise<KeyAuth> {
    if (!token) return { ok: false, details: missing, paid: false };
    const parsed = parseKey(token);
    if (!parsed) return { ok: false, details: 'The credential is not an API key', paid: false };
    let key = deps.keys.peek(parsed.prefix);
    const paid = !key && !deps.keys.reading(parsed.prefix);
    if (paid) {
      const refused = buckets.take('ip-public', inc.ip);
      if (refused) return { ok: false, refused };
    }
    key ??= await deps.keys.fetch(parsed.prefix);
    if (!key || !secretMatches(parsed.secret, key.secretHash)) return { ok: false, details: 'Unknown, revoked or refreshed API key', paid };
    if (key.expiresAt !== null && key.expiresAt <= Date.now()) return { ok: false, details: 'API key expired', paid };
    if (paid) buckets.refund('ip-public', inc.ip);
    return { ok: true, key };
  }

  /** Failed credentials also draw on the caller's unauthenticated budget, which bounds guessing. */
  function failedAuth(inc: Asking, reply: Reply): Reply {
    const refused = buckets.take('ip-public', inc.ip);
    return refused ? rateLimited(refused) : reply;
  }

  function warnAllowlist(key: KeyRecord, ip: string): void {
    const now = Date.now();
    if ((warnedAt.get(key.id) ?? 0) > now - 60_000) return;
    if (warnedAt.size > 10_000) warnedAt.clear();
    warnedAt.set(key.id, now);
    logger.warn('client IP is outside the key allowlist; not enforced without a trusted client IP (set HERALD_TRUSTED_PROXIES or HERALD_ENFORCE_IP_ALLOWLIST)', { key: key.prefix, ip });
  }

  return { keyCaller, sessionCaller };
}

/**
 * `?key=` of a beacon route: navigator.sendBeacon, a page's last send as it is hidden, cannot
 * set an Authorization header. Only a public key is read there (a secret key in a URL would
 * reach every log the URL does).
 */
function keyInQuery(query: string): string {
  return query ? (new URLSearchParams(query).get('key') ?? '') : '';
}

/** The credential of an `Authorization: Bearer <credential>` header (scheme case-insensitive). */
function bearer(header: string): string {
  return header.length > 7 && header.slice(0, 7).toLowerCase() === 'bearer ' ? header.slice(7).trim() : '';
}

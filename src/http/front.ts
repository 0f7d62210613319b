// The front, on the main thread. Every request goes through these named steps, in order;
// a step that answers ends the request:
//   edge budget → health → dashboard files → route → body size → read body → authenticate (key: allowlist,
//   workspace match, permission; session: user budget, workspace) → room at the actors →
//   dispatch to the actor.
// It never parses request bodies; actors do.
import type { HttpRequest, HttpResponse } from './uws.js';
import type { Config } from '../config.js';
import { Router } from './router.js';
import { preflight, write } from './write-reply.js';
import { createDashboard, dashboardOidc } from './dashboard.js';
import { API_PREFIX, ROUTES, errorShapeOf, isOutside, type Route } from '../routes.js';
import { errorReply, forbidden, invalidRequest, rateLimited, unauthorized, type Reply } from '../handlers/reply.js';
import type { KeyPrincipal, NoPrincipal, SessionPrincipal } from '../domain/principals.js';
import type { FieldError } from '../domain/errors.js';
import { Buckets, type Refusal } from '../ratelimit/buckets.js';
import type { SharedBuckets } from '../ratelimit/shared.js';
import type { Limits } from '../ratelimit/limits.js';
import type { KeyCache, KeyRecord } from '../auth/key-cache.js';
import type { KeyChanges } from '../auth/key-changes.js';
import type { UsageRecorder } from '../auth/usage.js';
import type { SessionVerifier } from '../auth/sessions.js';
import { looksLikeApiKey, parseKey, secretMatches } from '../auth/key-format.js';
import { grants } from '../auth/permissions.js';
import { clientIp } from '../auth/ip-allowlist.js';
import { inRanges, parseRange } from '../domain/ip-ranges.js';
import type { ActorHost } from '../actors/host.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import { countRequest } from '../metrics/index.js';

export interface FrontDeps {
  cfg: Config;
  limits: Limits;
  /** The cross-replica buckets (with NATS) behind the front's IP and user buckets. */
  sharedBuckets: SharedBuckets | null;
  keys: KeyCache;
  /** Tells the other replicas which keys changed. */
  keyChanges: KeyChanges;
  usage: UsageRecorder;
  verifySession: SessionVerifier;
  actors: ActorHost;
  /** Answered by the front itself: `/healthz` and the public routes of the table (OpenAPI). */
  health: () => Promise<Reply>;
  publicRoutes: Partial<Record<Route['id'], () => Reply>>;
}

interface Incoming {
  method: string;
  url: string;
  query: string;
  authorization: string;
  workspaceHeader: string;
  /** The headers the route reads (routes.ts `headers`), by lower-case name, every value sent. */
  headers: Record<string, string[]>;
  ip: string;
  aborted: boolean;
  /** Still counted in `inFlight`. */
  counted: boolean;
  /** Waiting for the rest of its body: nothing but the client can end it. */
  reading: boolean;
  /** The socket is paused until the answer is written (see `start`). */
  paused: boolean;
  /** For the metrics: the route template once matched (else `none`), and when the request was read. */
  route: string;
  started: number;
}

/** Who a request acts as, and on which actor it runs. */
interface Caller {
  principal: KeyPrincipal | SessionPrincipal | NoPrincipal;
  workspaceId: string | null;
  shard: string;
}

/** `paid`: the failure was charged to the caller's unauthenticated budget already. */
type KeyAuth = { ok: true; key: KeyRecord } | { ok: false; details: string; paid: boolean } | { ok: false; refused: Refusal };

/** Never written: `finish` drops replies to aborted requests. */
const CLIENT_GONE: Reply = { status: 499, body: '' };

export function createFront(deps: FrontDeps) {
  const { cfg } = deps;
  const router = new Router(ROUTES.filter((r) => !isOutside(r)), API_PREFIX);
  /** Unsubscribe links and provider callbacks, at the root (docs/channels.md). */
  const outside = new Router(ROUTES.filter(isOutside), '');
  const buckets = new Buckets(deps.limits, deps.sharedBuckets);
  const trusted = cfg.trustedProxies.map(parseRange);
  const allowlistEnforced = cfg.enforceIpAllowlist || cfg.trustedProxies.length > 0;
  const warnedAt = new Map<string, number>();
  const dashboard = createDashboard(dashboardOidc(cfg));
  let inFlight = 0;

  function release(inc: Incoming): void {
    if (!inc.counted) return;
    inc.counted = false;
    inFlight--;
  }

  /** Writes the answer (unless the client has gone); `close` ends the connection after it. */
  function finish(res: HttpResponse, inc: Incoming, reply: Reply, cors: boolean, corked: boolean, close = false): void {
    if (inc.counted) countRequest(inc.route, reply.status, inc.started);
    release(inc);
    inc.reading = false;
    if (inc.aborted) return;
    const send = () => {
      if (inc.paused) res.resume();
      write(res, reply, cors, close);
    };
    if (corked) send();
    else res.cork(send);
  }

  /**
   * A complete request goes on from the next turn of the event loop, with its socket paused
   * until it is answered. uWS closes a connection when a request arrives on it while the
   * previous one is unanswered (it has no queue for pipelined requests): pausing keeps a
   * request sent after this one was read in the kernel until this one is answered, so it is
   * then read and answered in order. Requests that came in the same read as this one close
   * the connection while uWS parses them, before the next turn: this one then sees it was
   * aborted and is not run, so none of them was executed and all are safe to send again.
   */
  function start(res: HttpResponse, inc: Incoming, route: Route, params: Record<string, string>, body: Uint8Array | null, cors: boolean): void {
    inc.reading = false;
    inc.paused = true;
    res.pause();
    setImmediate(() => {
      if (inc.aborted) return finish(res, inc, CLIENT_GONE, cors, false);
      void process(inc, route, params, body).then((r) => finish(res, inc, r, cors, false));
    });
  }

  /**
   * Answers a request whose framing is refused, then closes the connection. Not from the
   * handler itself: uWS goes on parsing what else it read (whatever the refused request's
   * body would have been framed as) and would dispatch a request found there even after an
   * answer with `Connection: close`. Answering on the next turn, with the socket paused,
   * leaves the request unanswered while uWS parses the rest, and uWS closes the connection
   * when it finds a request there: then nothing is answered, and nothing past the refused
   * request's headers is ever served.
   */
  function refuseFraming(res: HttpResponse, inc: Incoming, reply: Reply): void {
    inc.paused = true;
    res.pause();
    setImmediate(() => finish(res, inc, reply, false, false, true));
  }

  /** The uWS handler for every request: the synchronous steps, then `process`. */
  function onRequest(res: HttpResponse, req: HttpRequest): void {
    inFlight++;
    const inc: Incoming = {
      method: req.getMethod().toUpperCase(),
      url: req.getUrl(),
      query: req.getQuery() ?? '',
      authorization: req.getHeader('authorization'),
      workspaceHeader: req.getHeader('x-workspace-id'),
      headers: {},
      ip: clientIp(Buffer.from(res.getRemoteAddressAsText()).toString(), req.getHeader('x-forwarded-for'), trusted),
      aborted: false,
      counted: true,
      reading: false,
      paused: false,
      route: 'none',
      started: performance.now(),
    };
    res.onAborted(() => {
      inc.aborted = true;
      // A client gone mid-body leaves nothing else to end its request.
      if (inc.reading) release(inc);
    });

    // framing: refused before anything else, and the connection closed, so that no byte of
    // an ambiguous body is ever read as a request of its own
    const framing = badFraming(req);
    if (framing) {
      const m = router.match(inc.method, inc.url);
      const shape = m.kind === 'none' ? 'key' : errorShapeOf(m.route);
      return refuseFraming(res, inc, invalidRequest(shape, `Malformed request framing: ${framing.message}`, [framing]));
    }
    const contentLength = Number(req.getHeader('content-length') || 0);
    const bodyless = contentLength === 0 && req.getHeader('transfer-encoding') === '';

    // edge budget
    const edge = buckets.take('edge', inc.ip);
    if (edge) return finish(res, inc, rateLimited(edge), false, true);
    // health
    if (inc.url === '/healthz' && inc.method === 'GET') {
      inc.route = 'GET /healthz';
      if (bodyless) {
        inc.paused = true;
        res.pause();
      }
      void deps.health().then((r) => finish(res, inc, r, false, false));
      return;
    }
    // the web dashboard's static files (dashboard.ts)
    if (dashboard(res, inc.method, inc.url, req.getHeader('accept-encoding'))) return release(inc);
    // route
    const api = router.match(inc.method, inc.url);
    const m = api.kind === 'none' ? outside.match(inc.method, inc.url) : api;
    if (m.kind === 'none') return finish(res, inc, errorReply('key', 'NOT_FOUND', `No route for ${inc.method} ${inc.url}`), false, true);
    if (m.kind === 'method') {
      const cors = isCors(m.route);
      if (inc.method === 'OPTIONS' && cors) return finish(res, inc, preflight(m.allowed), false, true);
      const r = errorReply(errorShapeOf(m.route), 'METHOD_NOT_ALLOWED', `${inc.method} is not allowed on ${inc.url}; use ${m.allowed.join(', ')}`);
      return finish(res, inc, { ...r, headers: { Allow: m.allowed.join(', ') } }, cors, true);
    }
    const { route } = m;
    inc.route = route.id;
    if (route.headers) inc.headers = readHeaders(req, route.headers);
    const params = lowerCaseUuids(m.params);
    const cors = isCors(route);
    // body size, then read body
    const limit = route.maxBody ?? cfg.maxBodyBytes;
    if (contentLength > limit) return finish(res, inc, tooLarge(route, limit), cors, true);
    if (bodyless) return start(res, inc, route, params, null, cors);
    inc.reading = true;
    readBody(res, limit, (body) => {
      if (!body) return finish(res, inc, tooLarge(route, limit), cors, false);
      start(res, inc, route, params, body, cors);
    });
  }

  /** authenticate → dispatch. */
  async function process(inc: Incoming, route: Route, params: Record<string, string>, body: Uint8Array | null): Promise<Reply> {
    try {
      if (route.auth === 'public') return publicRoute(inc, route);
      if (isOutside(route)) return await outsideRoute(inc, route, params, body);
      const caller = route.auth === 'key' ? await keyCaller(inc, route, params) : await sessionCaller(inc, route, params);
      if ('status' in caller) return caller;
      return await dispatch(inc, route, params, body, caller);
    } catch (err) {
      logger.error('front failed', { route: route.id, err });
      return errorReply(errorShapeOf(route), 'INTERNAL_ERROR', 'Internal error');
    }
  }

  function publicRoute(inc: Incoming, route: Route): Reply {
    const refused = buckets.take('ip-public', inc.ip);
    return refused ? rateLimited(refused) : deps.publicRoutes[route.id]!();
  }

  /**
   * No credential: the per-IP budget, then the actor of the workspace the request names (a
   * callback's path, an unsubscribe token's first bytes), which verifies the signature or token.
   */
  async function outsideRoute(inc: Incoming, route: Route & { auth: 'none'; scope: 'ip-public' | 'ip-webhooks' }, params: Record<string, string>, body: Uint8Array | null): Promise<Reply> {
    const refused = buckets.take(route.scope, inc.ip);
    if (refused) return rateLimited(refused);
    const shard = params.workspaceId ?? tokenWorkspace(params.token ?? '');
    return dispatch(inc, route, params, body, { principal: { kind: 'none' }, workspaceId: isUuid(shard) ? shard : null, shard });
  }

  /** authenticate the key → allowlist → workspace match → permission. */
  async function keyCaller(inc: Incoming, route: Extract<Route, { auth: 'key' }>, params: Record<string, string>): Promise<Caller | Reply> {
    const shape = errorShapeOf(route);
    const auth = await authenticateKey(inc, bearer(inc.authorization));
    if ('refused' in auth) return rateLimited(auth.refused);
    if (!auth.ok) return auth.paid ? unauthorized(shape, auth.details) : failedAuth(inc, unauthorized(shape, auth.details));
    const key = auth.key;
    deps.usage.record(key.id, route.id);
    if (key.allowlist.length > 0 && !inRanges(inc.ip, key.ranges)) {
      if (allowlistEnforced) return forbidden(shape, 'Client IP is not in the key allowlist');
      warnAllowlist(key, inc.ip);
    }
    if (params.workspaceId !== undefined && params.workspaceId !== key.workspaceId) return forbidden(shape, 'Workspace does not match the API key');
    if (!grants(key.permissions, route.permissions)) return forbidden(shape);
    return { principal: { kind: 'key', keyId: key.id, workspaceId: key.workspaceId, permissions: key.permissions }, workspaceId: key.workspaceId, shard: key.workspaceId };
  }

  /** verify the session token → user budget → the workspace it acts on (membership is the actor's step). */
  async function sessionCaller(inc: Incoming, route: Extract<Route, { auth: 'session' }>, params: Record<string, string>): Promise<Caller | Reply> {
    const shape = errorShapeOf(route);
    const token = bearer(inc.authorization);
    if (token && looksLikeApiKey(token)) return forbidden(shape);
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

  async function dispatch(inc: Incoming, route: Route, params: Record<string, string>, body: Uint8Array | null, caller: Caller): Promise<Reply> {
    // The client has gone (e.g. timed out under overload): nobody will read the answer, so
    // the actor is spared the work. Nothing was acknowledged, so nothing is lost.
    if (inc.aborted) return CLIENT_GONE;
    // Room at the actors: when the store (or the Log) is slower than what arrives, requests
    // wait there, each holding its body; past the limit they are refused before they grow Herald.
    if (deps.actors.inFlight >= cfg.maxInFlight) return errorReply(errorShapeOf(route), 'SERVICE_UNAVAILABLE', `Herald has ${cfg.maxInFlight} requests in progress (HERALD_MAX_IN_FLIGHT); nothing was recorded. Retry shortly.`);
    const reply = await deps.actors.dispatch(caller.shard, { route: route.id, params, query: inc.query, headers: inc.headers, body, ip: inc.ip, workspaceId: caller.workspaceId, principal: caller.principal });
    if (reply.invalidateKeys) {
      // This replica stops the old credential at once, the others on receipt of the
      // announcement, which leaves before the response does.
      deps.keys.invalidate(reply.invalidateKeys);
      await deps.keyChanges.publish(reply.invalidateKeys);
    }
    return reply;
  }

  /**
   * A key the cache does not hold costs a store lookup, paid for beforehand with a token of
   * the caller's unauthenticated budget (`paid`: that token is the failed authentication's
   * charge) and given back if the key authenticates. So the lookups an IP can cause with keys
   * that do not exist are bounded by that budget, however many it sends, and at once. A
   * request that joins a lookup already under way costs none and pays nothing beforehand: a
   * busy client's requests arriving while its key is read again do not drain the budget.
   */
  async function authenticateKey(inc: Incoming, token: string): Promise<KeyAuth> {
    if (!token) return { ok: false, details: 'Missing Authorization: Bearer <API_KEY> header', paid: false };
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
  function failedAuth(inc: Incoming, reply: Reply): Reply {
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

  return { onRequest, inFlight: () => inFlight };
}

const isCors = (route: Route): boolean => route.auth === 'key' && route.cors === true;

/** Path parameters naming Herald's UUIDs. Herald writes UUIDs in lower case; one sent in upper (or mixed) case names the same thing. */
const UUID_PARAMS = ['workspaceId', 'keyId', 'personId', 'campaignId', 'templateId', 'messageId'] as const;

/**
 * UUIDs in paths compare case-insensitively: each of UUID_PARAMS that is a UUID is lower-cased
 * here, before authentication, sharding or any handler sees it (a workspace id in upper case
 * would otherwise name another actor, fail the key's workspace match, or reach a key prefix).
 */
function lowerCaseUuids(params: Record<string, string>): Record<string, string> {
  for (const name of UUID_PARAMS) {
    const v = params[name];
    if (v !== undefined && isUuid(v)) params[name] = v.toLowerCase();
  }
  return params;
}

/**
 * The values of the headers `wanted` names (in any case), each as sent: an empty one is kept
 * and so is a repeated one, for the handler to refuse (getHeader tells neither).
 */
function readHeaders(req: HttpRequest, wanted: Readonly<Record<string, string>>): Record<string, string[]> {
  const names = new Set(Object.keys(wanted).map((n) => n.toLowerCase()));
  const out: Record<string, string[]> = {};
  req.forEach((name, value) => {
    if (names.has(name)) (out[name] ??= []).push(value);
  });
  return out;
}

/** The credential of an `Authorization: Bearer <credential>` header (scheme case-insensitive). */
function bearer(header: string): string {
  return header.length > 7 && header.slice(0, 7).toLowerCase() === 'bearer ' ? header.slice(7).trim() : '';
}

/**
 * Why the request's framing is refused, or null. uWS frames a body by the first
 * Content-Length it finds; a proxy in front may take another, or Transfer-Encoding, and read
 * a different body: whatever one of them takes for the next request would be smuggled past
 * the other (RFC 9112 §6.3, §11.2). So: at most one Content-Length, of digits only; at most
 * one Transfer-Encoding, exactly `chunked` (Herald decodes no other coding); never both.
 */
function badFraming(req: HttpRequest): FieldError | null {
  let lengths = 0;
  let length = '';
  let codings = 0;
  let coding = '';
  req.forEach((name, value) => {
    if (name === 'content-length') {
      lengths++;
      length = value;
    } else if (name === 'transfer-encoding') {
      codings++;
      coding = value;
    }
  });
  if (lengths > 1) return { field: 'Content-Length', message: 'more than one Content-Length header' };
  if (lengths === 1 && codings > 0) return { field: 'Transfer-Encoding', message: 'Transfer-Encoding together with Content-Length' };
  if (lengths === 1 && !/^[0-9]+$/.test(length)) return { field: 'Content-Length', message: 'Content-Length must be decimal digits' };
  if (codings > 1) return { field: 'Transfer-Encoding', message: 'more than one Transfer-Encoding header' };
  if (codings === 1 && coding.trim().toLowerCase() !== 'chunked') return { field: 'Transfer-Encoding', message: 'the only transfer coding accepted is chunked' };
  return null;
}

function tooLarge(route: Route, limit: number): Reply {
  return errorReply(errorShapeOf(route), 'PAYLOAD_TOO_LARGE', `Request body exceeds ${limit} bytes`);
}

/** Collects the body into one buffer it owns (transferable); null once it exceeds `limit`. */
function readBody(res: HttpResponse, limit: number, done: (body: Uint8Array | null) => void): void {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  res.onData((chunk, isLast) => {
    if (over) return;
    total += chunk.byteLength;
    if (total > limit) {
      over = true;
      return done(null);
    }
    // uWS reuses the chunk's memory after this callback: copy it.
    chunks.push(new Uint8Array(chunk.slice(0)));
    if (!isLast) return;
    if (chunks.length === 1) return done(chunks[0]!);
    const body = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      body.set(c, at);
      at += c.byteLength;
    }
    done(body);
  });
}

/** The workspace an unsubscribe token names (unverified: only where it is answered; the actor verifies it). */
function tokenWorkspace(token: string): string {
  const hex = Buffer.from(token.slice(0, 24), 'base64url').toString('hex').slice(0, 32);
  return hex.length === 32 ? hex.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5') : token;
}

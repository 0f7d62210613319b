// The front, on the main thread. Every request goes through these named steps, in order;
// a step that answers ends the request:
//   edge budget → health → dashboard files → route → body size → read body → authenticate (key: allowlist,
//   workspace match, permission; session: user budget, workspace) → room at the actors →
//   dispatch to the actor.
// An upload route (a list's CSV) authenticates before its body is read, and the body is
// streamed to a file (upload.ts) rather than held. It never parses request bodies; actors do.
// Its parts: the steps up to reading the body (`requestSteps`, synchronous in uWS's handler),
// authenticate → dispatch (`processing`, with front-auth.ts), and a request's life on its
// socket (`answering`: counted, paused, answered once).
import type { HttpRequest, HttpResponse } from './uws.js';
import { Router } from './router.js';
import { preflight, write } from './write-reply.js';
import { createDashboard, dashboardOidc } from './dashboard.js';
import { createAuthentication, type AuthDeps, type Caller } from './front-auth.js';
import { API_PREFIX, ROUTES, atRoot, errorShapeOf, isOutside, type Route } from '../routes.js';
import { errorReply, invalidRequest, rateLimited, type Reply } from '../handlers/reply.js';
import type { FieldError } from '../domain/errors.js';
import { parseRange } from '../domain/ip-ranges.js';
import { Buckets } from '../ratelimit/buckets.js';
import type { SharedBuckets } from '../ratelimit/shared.js';
import type { Limits } from '../ratelimit/limits.js';
import type { KeyChanges } from '../auth/key-changes.js';
import { clientIp } from '../auth/ip-allowlist.js';
import type { ActorHost } from '../actors/host.js';
import { isUuid } from '../ids.js';
import { logger } from '../logger.js';
import { countRequest } from '../metrics/index.js';
import { dropUpload, streamBodyToFile, uploadDir } from './upload.js';

export interface FrontDeps extends AuthDeps {
  limits: Limits;
  /** The cross-replica buckets (with NATS) behind the front's IP and user buckets. */
  sharedBuckets: SharedBuckets | null;
  /** Tells the other replicas which keys changed. */
  keyChanges: KeyChanges;
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
  /** An upload route's body, staged in this file (upload.ts); the actor takes it over by answering 202. */
  upload: string | null;
  /** Stops staging an upload still being read. */
  cancelUpload?: () => void;
  /** An upload route's caller, authenticated before its body is staged. */
  caller?: Promise<Caller | Reply>;
}

/** Authenticate → dispatch, for a request whose route is known and whose body is read. */
type Process = (inc: Incoming, route: Route, params: Record<string, string>, body: Uint8Array | null) => Promise<Reply>;

/** Never written: `finish` drops replies to aborted requests. */
const CLIENT_GONE: Reply = { status: 499, body: '' };

export function createFront(deps: FrontDeps) {
  const buckets = new Buckets(deps.limits, deps.sharedBuckets);
  const auth = createAuthentication(deps, buckets);
  const answers = answering(processing(deps, buckets, auth));
  return { onRequest: requestSteps(deps, buckets, answers, auth), inFlight: () => answers.inFlight() };
}

type Authentication = ReturnType<typeof createAuthentication>;

/** The caller of a key or session route, or the reply refusing it. */
function callerOf(auth: Authentication, inc: Incoming, route: Route, params: Record<string, string>, body: Uint8Array | null = null): Promise<Caller | Reply> {
  if (route.auth === 'key') return auth.keyCaller(inc, route, params, body);
  if (route.auth === 'session') return auth.sessionCaller(inc, route, params);
  throw new Error(`${route.id} has no caller to authenticate`);
}

/** A request's life on its socket: counted while in flight, paused while it is worked on, answered once. */
function answering(process: Process) {
  let inFlight = 0;

  function begin(): void {
    inFlight++;
  }

  function release(inc: Incoming): void {
    if (!inc.counted) return;
    inc.counted = false;
    inFlight--;
  }

  /** Writes the answer (unless the client has gone); `close` ends the connection after it. */
  function finish(res: HttpResponse, inc: Incoming, reply: Reply, cors: boolean, corked: boolean, close = false): void {
    if (inc.upload !== null && reply.status !== 202) dropUpload(inc.upload);
    inc.upload = null;
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

  return { begin, release, finish, start, refuseFraming, inFlight: () => inFlight };
}

/** The uWS handler for every request: the synchronous steps, up to reading the body, then `start`. */
function requestSteps(deps: FrontDeps, buckets: Buckets, answers: ReturnType<typeof answering>, auth: Authentication) {
  const { cfg } = deps;
  const { release, finish, start, refuseFraming } = answers;
  const router = new Router(ROUTES.filter((r) => !atRoot(r)), API_PREFIX);
  /** Unsubscribe links and provider callbacks (docs/channels.md), and the Segment-compatible source, at the root. */
  const outside = new Router(ROUTES.filter(atRoot), '');
  const trusted = cfg.trustedProxies.map(parseRange);
  const dashboard = createDashboard(dashboardOidc(cfg));
  const uploads = ROUTES.some((r) => r.upload) ? uploadDir(cfg.dataDir) : '';

  return function onRequest(res: HttpResponse, req: HttpRequest): void {
    answers.begin();
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
      upload: null,
    };
    res.onAborted(() => {
      inc.aborted = true;
      // A client gone mid-body leaves nothing else to end its request.
      if (inc.reading) {
        inc.cancelUpload?.();
        release(inc);
      }
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
    const limit = route.upload ? cfg.importMaxBytes : (route.maxBody ?? cfg.maxBodyBytes);
    if (contentLength > limit) return finish(res, inc, tooLarge(route, limit), cors, true);
    if (bodyless) return start(res, inc, route, params, null, cors);
    inc.reading = true;
    if (route.upload) {
      // Authenticated first: a body is staged on disk for a known caller only, and a refusal
      // is answered at once (the connection closed, its body unread).
      const caller = callerOf(auth, inc, route, params).catch((err: unknown): Reply => {
        logger.error('front failed', { route: route.id, err });
        return errorReply(errorShapeOf(route), 'INTERNAL_ERROR', 'Internal error');
      });
      inc.caller = caller;
      const admitted = caller.then((c) => !('status' in c));
      inc.cancelUpload = streamBodyToFile(res, uploads, limit, () => inc.aborted, admitted, (u) => {
        if ('tooLarge' in u) return finish(res, inc, tooLarge(route, limit), cors, false);
        if ('failed' in u) return finish(res, inc, errorReply(errorShapeOf(route), 'INTERNAL_ERROR', 'The body could not be staged on disk'), cors, false);
        inc.upload = u.file;
        start(res, inc, route, params, null, cors);
      }).cancel;
      // After the upload's own look at `admitted` (which resumes the socket it paused).
      void caller.then((c) => {
        if ('status' in c) void admitted.then(() => finish(res, inc, c, cors, false, true));
      });
      return;
    }
    readBody(res, limit, (body) => {
      if (!body) return finish(res, inc, tooLarge(route, limit), cors, false);
      start(res, inc, route, params, body, cors);
    });
  };
}

/** authenticate → dispatch. */
function processing(deps: FrontDeps, buckets: Buckets, auth: Authentication): Process {
  const { cfg } = deps;

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

  async function dispatch(inc: Incoming, route: Route, params: Record<string, string>, body: Uint8Array | null, caller: Caller): Promise<Reply> {
    // The client has gone (e.g. timed out under overload): nobody will read the answer, so
    // the actor is spared the work. Nothing was acknowledged, so nothing is lost.
    if (inc.aborted) return CLIENT_GONE;
    // Room at the actors: when the store (or the Log) is slower than what arrives, requests
    // wait there, each holding its body; past the limit they are refused before they grow Herald.
    if (deps.actors.inFlight >= cfg.maxInFlight) return errorReply(errorShapeOf(route), 'SERVICE_UNAVAILABLE', `Herald has ${cfg.maxInFlight} requests in progress (HERALD_MAX_IN_FLIGHT); nothing was recorded. Retry shortly.`);
    const reply = await deps.actors.dispatch(caller.shard, { route: route.id, params, query: inc.query, headers: inc.headers, body, upload: inc.upload, ip: inc.ip, workspaceId: caller.workspaceId, principal: caller.principal });
    if (reply.invalidateKeys) {
      // This replica stops the old credential at once, the others on receipt of the
      // announcement, which leaves before the response does.
      deps.keys.invalidate(reply.invalidateKeys);
      await deps.keyChanges.publish(reply.invalidateKeys);
    }
    return reply;
  }

  return async function process(inc, route, params, body) {
    try {
      if (route.auth === 'public') return publicRoute(inc, route);
      if (isOutside(route)) return await outsideRoute(inc, route, params, body);
      const caller = await (inc.caller ?? callerOf(auth, inc, route, params, body));
      if ('status' in caller) return caller;
      return await dispatch(inc, route, params, body, caller);
    } catch (err) {
      logger.error('front failed', { route: route.id, err });
      return errorReply(errorShapeOf(route), 'INTERNAL_ERROR', 'Internal error');
    }
  };
}

const isCors = (route: Route): boolean => route.auth === 'key' && route.cors === true;

/** Path parameters naming Herald's UUIDs. Herald writes UUIDs in lower case; one sent in upper (or mixed) case names the same thing. */
const UUID_PARAMS = ['workspaceId', 'keyId', 'personId', 'campaignId', 'templateId', 'messageId', 'listId', 'importId', 'topicId'] as const;

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

// A fake FCM for tests: HTTP/2 over TLS (and HTTP/1.1 for the token endpoint), serving
// - `POST /token`: the service account's OAuth token endpoint. It checks the JWT-bearer grant's
//   RS256 assertion with the account's public key (issuer, audience = this token_uri, scope) and
//   answers `{access_token, expires_in, token_type}`, or 400 `invalid_grant` as Google does;
// - `POST /v1/projects/<id>/messages:send`: checks the bearer token (one this fake issued) and
//   answers by the message's token prefix with FCM's own bodies:
//   `dead-` 404 UNREGISTERED, `badarg-` 400 INVALID_ARGUMENT about the token, `retry-` 503 with
//   Retry-After: 1 the first time then success, `quota-` the same with 429 QUOTA_EXCEEDED, `auth-`
//   401 UNAUTHENTICATED, `slow-` answered after `slowMs`, `drip-` a 200 dripped a byte every
//   `dripMs` for `dripForMs`, `huge-` a 200 of `hugeBytes`; anything else 200 `{name}`;
// - hostile token endpoints, for a tenant's token_uri pointed at a server that means harm:
//   `POST /token/huge` answers 200 and streams a JSON body of up to `hugeBytes` (1 GiB) for as
//   long as the client reads; `POST /token/drip` answers 200 and then one byte every `dripMs`
//   for `dripForMs` (a byte at a time never lets an idle timeout trip), then a valid token.
// It records what it receives (the first `keep` sends; the bench keeps a sample only), counts
// sends and sessions (and, with `countRepeats`, the sends to a token it had received before),
// and can send GOAWAY or drop the connection when a given number of sends has arrived.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { jwtVerify } from 'jose';
import { makeTlsCert } from './tls.js';

interface ReceivedSend {
  path: string;
  authorization: string | undefined;
  body: { message: { token: string; [k: string]: unknown } };
}

export interface FakeFcm {
  /** Base URL: the FCM endpoint. */
  url: string;
  ca: string;
  projectId: string;
  /** A service account whose token_uri is this fake. */
  account: { type: string; project_id: string; client_email: string; private_key: string; private_key_id: string; token_uri: string };
  /** The sends received, up to `keep` of them (the first ones). */
  received: ReceivedSend[];
  /** Every send received, kept or not. */
  requests: number;
  /** With `countRepeats`: sends to a token already received (a duplicate delivery); else 0. */
  repeated: number;
  tokenFetches: number;
  /** Sessions (connections) the server accepted. */
  sessions: number;
  /** HTTP/2 sessions open now (clients that closed theirs are not counted). */
  readonly openSessions: number;
  /** The most streams open at once on one session. */
  maxConcurrentStreams: number;
  tokenLifetimeSeconds: number;
  slowMs: number;
  hugeBytes: number;
  /** Bytes of huge answers written, over all requests (what a client read before it hung up, plus buffers). */
  hugeBytesSent: number;
  dripMs: number;
  dripForMs: number;
  /** Drips the client hung up on before they were over. */
  dripsCut: number;
  /** After `after` more sends have arrived, send GOAWAY naming the last of them (later streams are refused). */
  goawayAfter(after: number): void;
  /** After `after` more sends have arrived, destroy every connection (no GOAWAY). */
  dropAfter(after: number): void;
  close(): Promise<void>;
}

const err = (code: number, status: string, message: string, details?: unknown[]) => ({ error: { code, message, status, ...(details ? { details } : {}) } });
const fcmError = (errorCode: string) => ({ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode });

export async function startFakeFcm(opts: { projectId?: string; keep?: number; countRepeats?: boolean } = {}): Promise<FakeFcm> {
  const tls = makeTlsCert();
  const projectId = opts.projectId ?? 'herald-test';
  const keep = opts.keep ?? Infinity;
  const tokensSeen = opts.countRepeats ? new Set<string>() : null;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const issued = new Set<string>();
  const retried = new Set<string>();
  const sockets = new Set<TLSSocket>();
  const streamsOpen = new Map<http2.Http2Session, number>();
  const live = new Set<http2.Http2Session>();
  let trigger: { kind: 'goaway' | 'drop'; after: number } | undefined;

  const server = http2.createSecureServer({ key: tls.key, cert: tls.cert, allowHTTP1: true });
  server.on('secureConnection', (s: TLSSocket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('session', (session) => {
    fake.sessions++;
    live.add(session);
    session.on('close', () => live.delete(session));
    session.on('error', () => {});
  });

  const fake: FakeFcm = {
    url: '',
    ca: tls.cert,
    projectId,
    account: {
      type: 'service_account',
      project_id: projectId,
      client_email: `herald@${projectId}.iam.gserviceaccount.com`,
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      private_key_id: randomUUID().replaceAll('-', ''),
      token_uri: '',
    },
    received: [],
    requests: 0,
    repeated: 0,
    tokenFetches: 0,
    sessions: 0,
    get openSessions() {
      return live.size;
    },
    maxConcurrentStreams: 0,
    tokenLifetimeSeconds: 3600,
    slowMs: 300,
    hugeBytes: 1024 ** 3,
    hugeBytesSent: 0,
    dripMs: 1000,
    dripForMs: 120_000,
    dripsCut: 0,
    goawayAfter: (after) => (trigger = { kind: 'goaway', after }),
    dropAfter: (after) => (trigger = { kind: 'drop', after }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };

  const send = (res: http2.Http2ServerResponse | import('node:http').ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    if (res.writableEnded || (res as http2.Http2ServerResponse).stream?.destroyed) return;
    try {
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
      res.end(JSON.stringify(body));
    } catch {
      // the stream was refused or reset meanwhile
    }
  };

  server.on('request', (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      void handle(req, res, raw);
    });
  });

  /** A 200 whose body is written by `next` (a chunk, or undefined when done) as fast as the client reads, or every `everyMs`. */
  function stream(res: http2.Http2ServerResponse, next: () => Buffer | string | undefined, everyMs = 0, onCut?: () => void): void {
    let closed = false;
    res.on('close', () => {
      if (!closed && !res.writableEnded) onCut?.();
      closed = true;
    });
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    const pump = (): void => {
      while (!closed) {
        const chunk = next();
        if (chunk === undefined) return void res.end();
        if (everyMs > 0) return void (res.write(chunk), setTimeout(pump, everyMs));
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
    };
    pump();
  }

  /** A 200 of up to `hugeBytes`, written as fast as the client reads. */
  function huge(res: http2.Http2ServerResponse, start = '{"name":"'): void {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = -1;
    stream(res, () => {
      if (sent < 0) return (sent = 0), start;
      if (sent >= fake.hugeBytes) return undefined;
      sent += chunk.length;
      fake.hugeBytesSent += chunk.length;
      return sent > fake.hugeBytes ? '"}' : chunk;
    });
  }

  /** A 200 of spaces, one every `dripMs` for `dripForMs`, then `end`. */
  function drip(res: http2.Http2ServerResponse, end = JSON.stringify({ name: `projects/${projectId}/messages/drip` })): void {
    const until = Date.now() + fake.dripForMs;
    let done = false;
    stream(
      res,
      () => {
        if (done) return undefined;
        if (Date.now() < until) return ' ';
        done = true;
        return end;
      },
      fake.dripMs,
      () => fake.dripsCut++,
    );
  }

  async function handle(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse, raw: string): Promise<void> {
    const url = req.url ?? '';
    if (req.method === 'POST' && url === '/token/huge') {
      fake.tokenFetches++;
      return huge(res, '{"access_token":"');
    }
    if (req.method === 'POST' && url === '/token/drip') {
      fake.tokenFetches++;
      const token = `ya29.fake-${randomUUID()}`;
      issued.add(token);
      return drip(res, JSON.stringify({ access_token: token, expires_in: fake.tokenLifetimeSeconds, token_type: 'Bearer' }));
    }
    if (req.method === 'POST' && url === '/token') {
      fake.tokenFetches++;
      const form = new URLSearchParams(raw);
      try {
        if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') throw new Error('grant_type');
        const { payload, protectedHeader } = await jwtVerify(form.get('assertion') ?? '', publicKey, {
          algorithms: ['RS256'],
          issuer: fake.account.client_email,
          audience: fake.account.token_uri,
        });
        if (payload.scope !== 'https://www.googleapis.com/auth/firebase.messaging') throw new Error('scope');
        if (protectedHeader.kid !== fake.account.private_key_id) throw new Error('kid');
      } catch {
        return send(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
      }
      const token = `ya29.fake-${randomUUID()}`;
      issued.add(token);
      return send(res, 200, { access_token: token, expires_in: fake.tokenLifetimeSeconds, token_type: 'Bearer' });
    }
    const m = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(url);
    if (req.method !== 'POST' || !m) return send(res, 404, err(404, 'NOT_FOUND', 'Not Found'));
    const session = req.stream.session!;
    const open = (streamsOpen.get(session) ?? 0) + 1;
    streamsOpen.set(session, open);
    fake.maxConcurrentStreams = Math.max(fake.maxConcurrentStreams, open);
    res.on('close', () => streamsOpen.set(session, (streamsOpen.get(session) ?? 1) - 1));
    let body: ReceivedSend['body'];
    try {
      body = JSON.parse(raw) as ReceivedSend['body'];
    } catch {
      return send(res, 400, err(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.'));
    }
    fake.requests++;
    if (fake.received.length < keep) fake.received.push({ path: url, authorization: req.headers.authorization, body });
    if (tokensSeen) {
      const token = String(body.message?.token);
      if (tokensSeen.has(token)) fake.repeated++;
      else tokensSeen.add(token);
    }

    if (trigger && --trigger.after <= 0) {
      const t = trigger;
      trigger = undefined;
      if (t.kind === 'drop') {
        for (const s of sockets) s.destroy();
        return;
      }
      session.goaway(http2.constants.NGHTTP2_NO_ERROR, req.stream.id);
    }

    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer || !issued.has(bearer)) {
      return send(res, 401, err(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.'));
    }
    if (m[1] !== projectId) return send(res, 403, err(403, 'PERMISSION_DENIED', `Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/${m[1]}' (or it may not exist).`));
    const token = body.message?.token ?? '';
    if (token.startsWith('dead-')) return send(res, 404, err(404, 'NOT_FOUND', 'Requested entity was not found.', [fcmError('UNREGISTERED')]));
    if (token.startsWith('badarg-')) {
      return send(res, 400, err(400, 'INVALID_ARGUMENT', 'The registration token is not a valid FCM registration token', [
        fcmError('INVALID_ARGUMENT'),
        { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: 'message.token', description: 'The registration token is not a valid FCM registration token' }] },
      ]));
    }
    if (token.startsWith('auth-')) return send(res, 401, err(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.', [fcmError('THIRD_PARTY_AUTH_ERROR')]));
    if ((token.startsWith('retry-') || token.startsWith('quota-')) && !retried.has(token)) {
      retried.add(token);
      if (token.startsWith('quota-')) {
        return send(res, 429, err(429, 'RESOURCE_EXHAUSTED', "Quota exceeded for quota metric 'Send requests'.", [fcmError('QUOTA_EXCEEDED')]), { 'retry-after': '1' });
      }
      return send(res, 503, err(503, 'UNAVAILABLE', 'The service is currently unavailable.', [fcmError('UNAVAILABLE')]), { 'retry-after': '1' });
    }
    if (token.startsWith('drip-')) return drip(res);
    if (token.startsWith('huge-')) return huge(res);
    if (token.startsWith('slow-')) await new Promise((r) => setTimeout(r, fake.slowMs));
    return send(res, 200, { name: `projects/${projectId}/messages/0:${Date.now()}%${randomUUID().slice(0, 8)}` });
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `https://127.0.0.1:${port}`;
  fake.account.token_uri = `${fake.url}/token`;
  return fake;
}

// A fake APNs for tests: HTTP/2 over TLS. It checks what Apple checks and answers with Apple's
// bodies: the path `/3/device/<token>` and method POST (404 BadPath / 405 MethodNotAllowed), the
// provider token `authorization: bearer <jwt>` (ES256, verified with the .p8's public key, `kid`
// the key id, `iss` the team id; 403 MissingProviderToken / InvalidProviderToken), the
// `apns-topic` (400 MissingTopic / DeviceTokenNotForTopic). Then by token prefix: `dead-` 410
// Unregistered, `badtoken-` 400 BadDeviceToken, `retry-` 503 ServiceUnavailable with Retry-After
// the first time, `busy-` 429 TooManyRequests the first time, `stall-` never answered (the
// stream is left open); else 200 with an `apns-id`.
// A provider token that verified once is not verified again (a client reuses one for up to an
// hour; verifying ES256 per request would make the fake, not the client, the bench's bottleneck).
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { makeTlsCert } from './tls.js';

interface ReceivedPush {
  path: string;
  headers: http2.IncomingHttpHeaders;
  body: { aps?: Record<string, unknown>; [k: string]: unknown };
}

export interface FakeApns {
  url: string;
  ca: string;
  /** Credentials this fake accepts. */
  keyP8: string;
  keyId: string;
  teamId: string;
  bundleId: string;
  /** The pushes received, up to `keep` of them (the first ones). */
  received: ReceivedPush[];
  /** Every push received, kept or not. */
  requests: number;
  /** Sessions (connections) the server accepted. */
  sessions: number;
  /** Sessions open now. */
  readonly openSessions: number;
  close(): Promise<void>;
}

/** A fresh .p8 (PKCS#8 P-256) key, as Apple's developer site hands out. */
export function makeP8(): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

export async function startFakeApns(opts: { keep?: number } = {}): Promise<FakeApns> {
  const tls = makeTlsCert();
  const keep = opts.keep ?? Infinity;
  const verified = new Set<string>();
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const retried = new Set<string>();
  const server = http2.createSecureServer({ key: tls.key, cert: tls.cert });
  const sessions = new Set<http2.ServerHttp2Session>();
  const fake: FakeApns = {
    url: '',
    ca: tls.cert,
    keyP8: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    keyId: 'ABC123DEFG',
    teamId: 'DEF123GHIJ',
    bundleId: 'com.example.herald',
    received: [],
    requests: 0,
    sessions: 0,
    get openSessions() {
      return sessions.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.destroy();
        server.close(() => resolve());
      }),
  };
  server.on('session', (s) => {
    fake.sessions++;
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => {});
  });

  server.on('stream', (stream, headers) => {
    let raw = '';
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => (raw += c));
    stream.on('error', () => {});
    stream.on('end', () => {
      void handle(stream, headers, raw);
    });
  });

  const apnsId = () => randomUUID().toUpperCase();
  function answer(stream: http2.ServerHttp2Stream, status: number, reason?: string, extra: Record<string, string> = {}): void {
    if (stream.destroyed || stream.closed) return;
    stream.respond({ ':status': status, 'apns-id': apnsId(), ...(reason ? { 'content-type': 'application/json' } : {}), ...extra });
    stream.end(reason ? JSON.stringify(status === 410 ? { reason, timestamp: Date.now() } : { reason }) : undefined);
  }

  async function handle(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, raw: string): Promise<void> {
    const path = String(headers[':path'] ?? '');
    let body: ReceivedPush['body'];
    try {
      body = JSON.parse(raw) as ReceivedPush['body'];
    } catch {
      return answer(stream, 400, 'PayloadEmpty');
    }
    fake.requests++;
    if (fake.received.length < keep) fake.received.push({ path, headers, body });
    const m = /^\/3\/device\/([^/]+)$/.exec(path);
    if (!m) return answer(stream, 404, 'BadPath');
    if (headers[':method'] !== 'POST') return answer(stream, 405, 'MethodNotAllowed');
    const auth = /^bearer (.+)$/.exec(String(headers.authorization ?? ''))?.[1];
    if (!auth) return answer(stream, 403, 'MissingProviderToken');
    if (!verified.has(auth)) {
      try {
        if (decodeProtectedHeader(auth).kid !== fake.keyId) throw new Error('kid');
        const { payload } = await jwtVerify(auth, publicKey, { algorithms: ['ES256'], issuer: fake.teamId });
        if (typeof payload.iat !== 'number') throw new Error('iat');
      } catch {
        return answer(stream, 403, 'InvalidProviderToken');
      }
      verified.add(auth);
    }
    const topic = headers['apns-topic'];
    if (!topic) return answer(stream, 400, 'MissingTopic');
    if (topic !== fake.bundleId) return answer(stream, 400, 'DeviceTokenNotForTopic');
    const token = m[1]!;
    if (token.startsWith('dead-')) return answer(stream, 410, 'Unregistered');
    if (token.startsWith('badtoken-')) return answer(stream, 400, 'BadDeviceToken');
    if ((token.startsWith('retry-') || token.startsWith('busy-')) && !retried.has(token)) {
      retried.add(token);
      return token.startsWith('retry-') ? answer(stream, 503, 'ServiceUnavailable', { 'retry-after': '1' }) : answer(stream, 429, 'TooManyRequests', { 'retry-after': '1' });
    }
    if (token.startsWith('stall-')) return;
    return answer(stream, 200);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

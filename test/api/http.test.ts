// HTTP edges through a real server: routing errors, malformed bodies, size limits, the
// OpenAPI document, and clean shutdown (README, Running it, Errors, Request bodies and Routes).
import t, { type Test } from 'tap';
import http from 'node:http';
import net from 'node:net';
import pg from 'pg';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { embeddedDatabaseUrl, newKey, newWorkspace, startServer, uniqueUser, workspaceWithKeys, TEST_SECRET, type Res, type TestServer } from '../helpers/server.js';
import { NO_LIMITS, keyError } from '../helpers/assert.js';
import { checkResponse } from '../helpers/contract.js';
import { ROUTES } from '../../src/routes.js';

const MB = 1024 * 1024;

interface RawRes {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  text: string;
}

/**
 * A request through node:http, for what fetch does not do: a chunked body written piece by
 * piece, or a body sent only after the server has seen the headers (Expect: 100-continue).
 */
function rawRequest(
  s: TestServer,
  method: string,
  path: string,
  opts: {
    headers?: Record<string, string>;
    chunks?: (string | Buffer)[];
    /** Called once the server answered 100 Continue; the body is written after it resolves. */
    onContinue?: () => Promise<void>;
  } = {},
): Promise<RawRes> {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port: s.port, method, path: `/api/v1${path}`, headers: opts.headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        // Held to the OpenAPI document like every response of s.req().
        checkResponse(method, `/api/v1${path}`, res.statusCode!, text).then(() => resolve({ status: res.statusCode!, headers: res.headers, body, text }), reject);
      });
      res.on('error', reject);
    });
    r.on('error', reject);
    const writeBody = () => {
      for (const c of opts.chunks ?? []) r.write(c);
      r.end();
    };
    if (opts.onContinue) {
      r.on('continue', () => {
        opts.onContinue!().then(writeBody, reject);
      });
      r.flushHeaders();
    } else writeBody();
  });
}

/** One response read off a raw connection. */
interface WireRes {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Splits what a connection received into responses (1xx skipped; bodies framed by Content-Length, as uWS sends them). */
function parseResponses(raw: Buffer): WireRes[] {
  const out: WireRes[] = [];
  let at = 0;
  for (;;) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end < 0) return out;
    const [statusLine, ...lines] = raw.subarray(at, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const l of lines) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine!)?.[1]);
    const length = status < 200 ? 0 : Number(headers['content-length'] ?? 0);
    if (raw.length < end + 4 + length) return out;
    const text = raw.subarray(end + 4, end + 4 + length).toString('utf8');
    at = end + 4 + length;
    if (status < 200) continue;
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    out.push({ status, headers, text, body });
  }
}

/**
 * Talks HTTP/1.1 over one raw TCP connection, for what no client library sends: conflicting
 * framing headers, pipelined requests. `steps` are written in order, each with a write of its
 * own (a number waits that many milliseconds, a RegExp until what was received matches it, a
 * function is awaited). Collects what the server
 * sends until it closes the connection or nothing has come for `quietMs` after the last step.
 * Each response is held to the OpenAPI document as the answer to `requests[i]` ([method, path]).
 */
async function wire(port: number, steps: (string | number | RegExp | (() => Promise<unknown>))[], requests: [string, string][], quietMs = 1000): Promise<{ responses: WireRes[]; closedByServer: boolean; raw: string }> {
  const sock = net.connect(port, '127.0.0.1');
  sock.setNoDelay(true);
  const chunks: Buffer[] = [];
  let closedByServer = false;
  let last = Date.now();
  sock.on('data', (d: Buffer) => {
    chunks.push(d);
    last = Date.now();
  });
  const closed = new Promise<void>((r) =>
    sock.on('close', () => {
      closedByServer = true;
      r();
    }),
  );
  sock.on('error', () => {});
  await new Promise((r, j) => sock.once('connect', r).once('error', j));
  for (const step of steps) {
    if (typeof step === 'number') await new Promise((r) => setTimeout(r, step));
    else if (step instanceof RegExp) {
      // Waits (up to 5 s) until what was received matches.
      const until = Date.now() + 5000;
      while (!step.test(Buffer.concat(chunks).toString('latin1')) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    } else if (typeof step === 'function') await step();
    else sock.write(step);
  }
  last = Date.now();
  await Promise.race([
    closed,
    (async () => {
      while (!closedByServer && Date.now() - last < quietMs) await new Promise((r) => setTimeout(r, 50));
    })(),
  ]);
  const byServer = closedByServer;
  sock.destroy();
  const responses = parseResponses(Buffer.concat(chunks));
  for (const [i, r] of responses.entries()) {
    const [method, path] = requests[i] ?? ['?', '?'];
    await checkResponse(method, path, r.status, r.text);
  }
  return { responses, closedByServer: byServer, raw: Buffer.concat(chunks).toString('latin1') };
}

/** An HTTP/1.1 request as bytes on the wire; `head` holds header lines ("Name: value"). */
function wireRequest(method: string, path: string, head: string[], body = ''): string {
  return [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...head, '', body].join('\r\n');
}

const s = await startServer();
t.teardown(() => s.stop());
const token = await s.session(uniqueUser('http'));

t.test('unknown route: 404 NOT_FOUND', async (t) => {
  for (const [method, path] of [['GET', '/nope'], ['POST', '/people/a/b/c/d'], ['GET', '/api/v1/people'], ['DELETE', '/workspaces/x/unknown']] as const) {
    const r = await s.req(method, path, { token });
    t.equal(r.status, 404, `${method} ${path}`);
    t.equal(r.body?.success, false);
    t.type(r.body?.error, 'string');
    t.equal(r.body?.code, 'NOT_FOUND');
  }
  const outside = await s.req('GET', `${s.base}/api/v2/people`);
  t.equal(outside.status, 404, 'another API version');
  t.equal(outside.body?.code, 'NOT_FOUND');
  // `/` redirects to the dashboard (README, Dashboard): test/dashboard/serving.test.ts.
});

t.test('wrong method: 405 with Allow', async (t) => {
  const a = await s.req('DELETE', '/workspaces', { token });
  t.equal(a.status, 405);
  t.same(a.headers.get('allow')?.split(/,\s*/).sort(), ['GET', 'POST']);
  t.equal(a.body?.success, false, 'session route: session error shape');
  t.equal(a.body?.error?.code, 'METHOD_NOT_ALLOWED');

  const b = await s.req('GET', '/track');
  t.equal(b.status, 405);
  t.equal(b.headers.get('allow'), 'POST');
  t.equal(b.body?.success, false, 'key route: key error shape');
  t.equal(b.body?.code, 'METHOD_NOT_ALLOWED');

  const c = await s.req('PATCH', '/people/someone');
  t.equal(c.status, 405);
  t.same(c.headers.get('allow')?.split(/,\s*/).sort(), ['DELETE', 'GET', 'PUT']);

  const d = await s.req('POST', '/openapi.json');
  t.equal(d.status, 405);
  t.equal(d.headers.get('allow'), 'GET');
});

t.test('no answer names the server software (no uWebSockets header)', async (t) => {
  const answers: [string, Headers | Record<string, string>][] = [
    ['an API answer', (await s.req('GET', '/workspaces', { token })).headers],
    ['a 404', (await s.req('GET', '/nope')).headers],
    ['a preflight', (await s.req('OPTIONS', '/people/someone/devices', { headers: { origin: 'https://app.example.com', 'access-control-request-method': 'DELETE' } })).headers],
    ['/healthz', (await s.req('GET', '/healthz')).headers],
    ['a dashboard file', (await fetch(`${s.base}/dashboard/`)).headers],
  ];
  const refused = await wire(s.port, [wireRequest('POST', '/api/v1/track', ['Content-Length: 1', 'Content-Length: 1'], '{')], [['POST', '/api/v1/track']]);
  answers.push(['a framing refusal', refused.responses[0]?.headers ?? {}]);
  for (const [what, headers] of answers) {
    const names = headers instanceof Headers ? [...headers.keys()] : Object.keys(headers);
    t.ok(names.includes('date'), `${what}: headers read`);
    t.notOk(names.includes('uwebsockets'), `${what}: no uWebSockets header`);
  }
});

t.test('malformed JSON on a session route: 400 VALIDATION_ERROR, never 500', async (t) => {
  for (const raw of ['{', '{"name": }', 'name=x', '{"name":"x"} trailing', "{'name':'x'}", '\u0000']) {
    const r = await s.req('POST', '/workspaces', { token, raw, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, JSON.stringify(raw));
    t.equal(r.body?.success, false);
    t.equal(r.body?.error?.code, 'VALIDATION_ERROR');
    t.type(r.body?.error?.message, 'string');
  }
  // On a path-scoped session route, as a member of the workspace.
  const ws = await s.req('POST', '/workspaces', { token, body: { name: 'Malformed' } });
  t.equal(ws.status, 201);
  const id = ws.body.data.workspace.id;
  for (const path of [`/workspaces/${id}`, `/workspaces/${id}/api-keys`, `/workspaces/${id}/members`]) {
    const method = path === `/workspaces/${id}` ? 'PUT' : 'POST';
    const r = await s.req(method, path, { token, raw: '{"name": "x",', headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, `${method} ${path}`);
    t.equal(r.body?.error?.code, 'VALIDATION_ERROR', `${method} ${path}`);
  }
});

t.test('a body that is not valid UTF-8: 400 in the route\'s input-error shape, nothing stored', async (t) => {
  const { k } = await workspaceWithKeys(s, { k: ['events:write', 'people:read'] }, 'UTF-8');
  const json = { 'content-type': 'application/json' };
  const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))));
  // A lone continuation byte, a truncated sequence, an overlong '/', an encoded surrogate, a byte never in UTF-8.
  const bad = [[0x80], [0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff, 0xfe]];
  for (const seq of bad) {
    const user = uniqueUser('utf8');
    const r = await s.req('POST', '/track', { token: k, raw: bytes('{"event":"utf8-', seq, `","external_id":"${user}"}`), headers: json });
    t.equal(r.status, 400, `${Buffer.from(seq).toString('hex')}: ${r.text}`);
    t.equal(r.body?.error, 'Bad Request', "the key routes' input-error shape");
    t.same(r.body?.details, [{ field: 'body', message: 'is not valid UTF-8' }]);
    const person = await s.req('GET', `/people/${user}`, { token: k });
    t.equal(person.status, 404, 'nothing recorded: the person the track names was not created');
  }
  const named = await s.req('POST', '/workspaces', { token, raw: bytes('{"name":"utf8-', [0xc3, 0x28], '"}'), headers: json });
  t.equal(named.status, 400, named.text);
  t.equal(named.body?.error?.code, 'VALIDATION_ERROR', "the session routes' input-error shape");
  t.same(named.body?.error?.details, [{ field: 'body', message: 'is not valid UTF-8' }]);
  const list = await s.req('GET', '/workspaces', { token });
  t.notOk(JSON.stringify(list.body).includes('utf8-'), 'no workspace was created');
  // Valid multi-byte text is served as before.
  const fine = await s.req('POST', '/track', { token: k, raw: bytes('{"event":"utf8-é🎉","external_id":"u-fine"}'), headers: json });
  t.equal(fine.status, 201, fine.text);
});

t.test('schema errors on a session route: 400 VALIDATION_ERROR with field details', async (t) => {
  const cases: [unknown, string][] = [
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 5 }, 'name'],
    [{ name: 'x'.repeat(256) }, 'name'],
  ];
  for (const [body, field] of cases) {
    const r = await s.req('POST', '/workspaces', { token, body });
    t.equal(r.status, 400, JSON.stringify(body).slice(0, 40));
    t.equal(r.body?.success, false);
    t.equal(r.body?.error?.code, 'VALIDATION_ERROR');
    t.ok(Array.isArray(r.body?.error?.details), 'details lists the problems');
    t.ok((r.body?.error?.details ?? []).some((d: { field: string }) => d.field === field), `a problem names ${field}: ${JSON.stringify(r.body?.error?.details)}`);
  }
  for (const raw of ['[]', '"x"', '5', 'null', 'true']) {
    const r = await s.req('POST', '/workspaces', { token, raw, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 400, `body ${raw}`);
    t.equal(r.body?.error?.code, 'VALIDATION_ERROR');
  }
  const none = await s.req('POST', '/workspaces', { token });
  t.equal(none.status, 400, 'no body at all');
  t.equal(none.body?.error?.code, 'VALIDATION_ERROR');
});

t.test('a body over 1 MB: 413 PAYLOAD_TOO_LARGE before it is parsed', async (t) => {
  // The declared length alone is refused: the body is never sent (sending it raced the
  // server's answer and close, so the client could see a reset instead of the 413).
  const declared = String(MB + 1);
  const r = await rawRequest(s, 'POST', '/workspaces', {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': declared },
    chunks: [],
  }).catch((err: Error) => ({ status: -1, text: err.message, headers: {}, body: undefined }));
  t.equal(r.status, 413, r.text.slice(0, 200));
  t.equal(r.body?.success, false);
  t.equal(r.body?.error?.code, 'PAYLOAD_TOO_LARGE', 'session route, session shape');

  const k = await rawRequest(s, 'POST', '/track', {
    headers: { 'content-type': 'application/json', 'content-length': declared },
    chunks: [],
  }).catch((err: Error) => ({ status: -1, text: err.message, headers: {}, body: undefined }));
  t.equal(k.status, 413, 'key route, before authentication');
  t.equal(k.body?.code, 'PAYLOAD_TOO_LARGE', 'key route, key shape');

  // Exactly 1 MB is within the limit (and then parsed: malformed JSON → 400).
  const edge = '{' + 'x'.repeat(MB - 1);
  const e = await rawRequest(s, 'POST', '/workspaces', {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(edge.length) },
    chunks: [edge],
  });
  t.equal(e.status, 400, 'exactly 1 MB is read and parsed');
  t.equal(e.body?.error?.code, 'VALIDATION_ERROR');
});

t.test('a chunked body over 1 MB: 413', async (t) => {
  const chunk = 'x'.repeat(64 * 1024);
  const chunks = ['{"name":"', ...Array.from({ length: 17 }, () => chunk), '"}'];
  const r = await rawRequest(s, 'POST', '/workspaces', {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    chunks,
  }).catch((err: Error) => ({ status: -1, text: err.message, headers: {}, body: undefined }));
  t.equal(r.status, 413, r.text.slice(0, 200));
  t.equal(r.body?.error?.code, 'PAYLOAD_TOO_LARGE');

  // A streamed fetch body (no Content-Length) too.
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < 20; i++) c.enqueue(new TextEncoder().encode(chunk));
      c.close();
    },
  });
  const f = await fetch(`${s.base}/api/v1/workspaces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: stream,
    duplex: 'half',
  } as RequestInit & { duplex: 'half' }).then(
    async (res) => {
      const text = await res.text();
      await checkResponse('POST', '/api/v1/workspaces', res.status, text);
      return { status: res.status, body: JSON.parse(text) };
    },
    (err: Error) => ({ status: -1, body: err.message }),
  );
  t.equal(f.status, 413, JSON.stringify(f.body));
  t.equal(f.body?.error?.code, 'PAYLOAD_TOO_LARGE');
});

t.test('a small chunked body is read and served', async (t) => {
  const r = await rawRequest(s, 'POST', '/workspaces', {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    chunks: ['{"na', 'me":"Chu', 'nked"}'],
  });
  t.equal(r.status, 201);
  t.equal(r.body?.data?.workspace?.name, 'Chunked');
});

t.test('HERALD_MAX_BODY_BYTES=1000', async (t) => {
  const small = await startServer({ HERALD_MAX_BODY_BYTES: '1000' });
  t.teardown(() => small.stop());
  const tok = await small.session(uniqueUser('limit'));
  const padded = (n: number) => {
    const base = '{"name":"Padded"}';
    return base.slice(0, -1) + ' '.repeat(n - base.length) + '}';
  };
  for (const n of [999, 1000]) {
    const body = padded(n);
    t.equal(Buffer.byteLength(body), n);
    const r = await small.req('POST', '/workspaces', { token: tok, raw: body, headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 201, `${n} bytes is served`);
    t.equal(r.body?.data?.workspace?.name, 'Padded');
  }
  const over = padded(1001);
  const r = await small.req('POST', '/workspaces', { token: tok, raw: over, headers: { 'content-type': 'application/json' } });
  t.equal(r.status, 413, '1001 bytes');
  t.equal(r.body?.error?.code, 'PAYLOAD_TOO_LARGE');

  const chunkedOver = await rawRequest(small, 'POST', '/workspaces', {
    headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    chunks: [over.slice(0, 500), over.slice(500)],
  }).catch((err: Error) => ({ status: -1, text: err.message, headers: {}, body: undefined }));
  t.equal(chunkedOver.status, 413, '1001 bytes chunked');
  t.equal(chunkedOver.body?.error?.code, 'PAYLOAD_TOO_LARGE');

  const chunkedOk = padded(999);
  const c = await rawRequest(small, 'POST', '/workspaces', {
    headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    chunks: [chunkedOk.slice(0, 500), chunkedOk.slice(500)],
  });
  t.equal(c.status, 201, '999 bytes chunked');
});

t.test('HERALD_MAX_IN_FLIGHT=2: a request past the limit is 503 with Retry-After and records nothing; the rest are served', async (t) => {
  const one = await startServer({ ...NO_LIMITS, HERALD_MAX_IN_FLIGHT: '2' });
  t.teardown(() => one.stop());
  // Two keys made at once: within the limit.
  const k = await workspaceWithKeys(one, { write: ['events:write'], read: ['people:read'] });
  const users = Array.from({ length: 40 }, (_, i) => uniqueUser(`in-flight-${i}`));
  // Sent at once: the front takes them while the first is still at its actor (a store round trip).
  const rs = await Promise.all(users.map((u) => one.req('POST', '/track', { token: k.write, body: { event: 'crowd', external_id: u } })));
  const refused = rs.filter((r) => r.status === 503);
  t.same(rs.filter((r) => r.status !== 201 && r.status !== 503).map((r) => r.status), [], 'every answer is 201 or 503');
  t.ok(refused.length > 0, `some refused (${refused.length} of 40)`);
  t.ok(rs.some((r) => r.status === 201), 'some served');
  for (const r of refused.slice(0, 3)) {
    keyError(t, r, 503, 'SERVICE_UNAVAILABLE');
    t.equal(r.headers.get('retry-after'), '1', 'Retry-After: 1');
    t.match(r.body?.error, /HERALD_MAX_IN_FLIGHT/);
  }
  const people: Res[] = [];
  for (const u of users) people.push(await one.req('GET', `/people/${encodeURIComponent(u)}`, { token: k.read }));
  t.same(
    rs.map((r, i) => [r.status, people[i]!.status]).filter(([track, person]) => (track === 201 ? person !== 200 : person !== 404)),
    [],
    'a served track created its person; a refused one created nobody',
  );
  const later = await one.req('POST', '/track', { token: k.write, body: { event: 'alone', external_id: uniqueUser('later') } });
  t.equal(later.status, 201, 'once they are answered, there is room again');
});

t.test('GET /openapi.json: a valid OpenAPI 3.0 document covering every route', async (t) => {
  const r = await s.req('GET', '/openapi.json');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type') ?? '', /application\/json/);
  const doc = r.body;
  t.match(doc.openapi, /^3\.0\.\d+$/);
  const v = new Validator();
  const res = await v.validate(doc);
  t.ok(res.valid, JSON.stringify(res.errors));
  t.equal(v.version, '3.0', 'validated as OpenAPI 3.0');

  for (const route of ROUTES) {
    const op = doc.paths?.[route.path]?.[route.method.toLowerCase()];
    t.ok(op, `${route.id} is documented`);
    if (!op) continue;
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const documented = (op.parameters ?? []).filter((p: { in: string }) => p.in === 'path').map((p: { name: string }) => p.name);
    t.same(documented.sort(), [...pathParams].sort(), `${route.id} documents its path parameters`);
  }
  const ids = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((p) => Object.values(p).map((o) => o.operationId));
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique');

  // Every operation documents its real statuses, each with its body schema; nothing hides
  // behind a `default` or an "any object" body (test/helpers/contract.ts holds every
  // response of the suite to these).
  type Resp = { description: string; content?: Record<string, { schema?: Record<string, unknown> }> };
  const schemas = doc.components?.schemas ?? {};
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, Resp> }>>)) {
    for (const [method, op] of Object.entries(item)) {
      const label = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses);
      t.notOk(statuses.includes('default'), `${label}: no default response`);
      t.ok(statuses.every((s) => /^[1-5]\d\d$/.test(s)), `${label}: explicit status codes`);
      for (const [status, resp] of Object.entries(op.responses)) {
        // No content, or a redirect (the tracked link's 302 carries only its Location).
        if (status === '204' || status === '302') {
          t.notOk(resp.content, `${label} ${status}: no body`);
          continue;
        }
        // An HTML or TwiML answer (the routes outside /api/v1), a CSV export or the tracking pixel names its media type instead.
        const other = Object.keys(resp.content ?? {}).find((m) => m !== 'application/json');
        if (other) {
          t.ok(/^(text\/(html|xml|csv)|image\/gif)$/.test(other) && resp.content![other]!.schema, `${label} ${status}: a ${other} body`);
          continue;
        }
        const schema = resp.content?.['application/json']?.schema;
        t.ok(schema, `${label} ${status}: a JSON body schema`);
        const resolved = (typeof schema?.$ref === 'string' ? schemas[(schema.$ref).split('/').pop()!] : schema) as Record<string, unknown> | undefined;
        if (path === '/openapi.json') continue;
        t.ok(resolved && (resolved.properties || resolved.anyOf || resolved.allOf), `${label} ${status}: the body's properties are described`);
      }
    }
  }
  const statusesOf = (id: string) => {
    const [method, path] = id.split(' ') as [string, string];
    return Object.keys(doc.paths[path][method.toLowerCase()].responses).sort();
  };
  const success = (id: string) => statusesOf(id).filter((s) => /^2/.test(s));
  t.same(success('POST /identify'), ['200'], 'identify answers 200');
  t.same(success('POST /track'), ['201']);
  t.same(success('POST /track/batch'), ['201', '207']);
  t.same(success('POST /people'), ['201']);
  t.same(success('POST /people/batch'), ['200']);
  t.same(success('POST /people/{id}/devices'), ['200', '201'], 'device registration: 201 new, 200 known token');
  t.same(success('POST /workspaces/{workspaceId}/members'), ['200', '201'], 'member add: 201 new, 200 role changed');
  t.same(success('PUT /workspaces/{workspaceId}'), ['200']);
  t.same(success('POST /workspaces/{workspaceId}/api-keys/{keyId}/refresh'), ['200'], 'key refresh answers 200');
  t.same(success('POST /workspaces'), ['201']);
  for (const route of ROUTES) {
    const statuses = statusesOf(route.id);
    if (route.notImplemented) {
      t.same(success(route.id), [], `${route.id}: no success documented`);
      t.ok(statuses.includes('501'), `${route.id}: 501`);
    } else t.notOk(statuses.includes('501'), `${route.id}: served, no 501`);
    if (route.auth === 'key' || route.auth === 'session') for (const s of ['401', '403', '429', '503']) t.ok(statuses.includes(s), `${route.id}: ${s}`);
    // Outside /api/v1 no credential is asked; a provider callback refuses a bad signature with 401.
    if (route.auth === 'none') for (const s of ['429', '503', ...(route.path.startsWith('/webhooks/') ? ['401'] : [])]) t.ok(statuses.includes(s), `${route.id}: ${s}`);
  }
  t.ok(doc.components?.responses?.UnknownRoute && doc.components?.responses?.MethodNotAllowed, 'the rules for unknown paths and methods');
  t.ok(doc.components?.responses?.BadFraming, 'the rule for malformed framing, whatever the path');
  t.same(Object.keys(doc.paths['/healthz'].get.responses).sort(), ['200', '400', '429', '503'], '/healthz: 200, 503 (and the edge 429, the framing 400)');

  const anon = await s.req('GET', '/openapi.json', { token: 'whatever' });
  t.equal(anon.status, 200, 'public: no credential needed, a bad one ignored');
});

// Framing (docs/architecture.md, "HTTP framing"): uWS frames a body by the first Content-Length it finds, so
// Herald refuses anything a proxy could frame differently, and closes the connection. Nothing
// past the refused request's headers is ever served: when the bytes after them hold a request
// (here one for the OpenAPI document), the connection closes without an answer.
t.test('framing: conflicting or malformed Content-Length / Transfer-Encoding', async (t) => {
  const auth = `Authorization: Bearer ${token}`;
  const json = 'Content-Type: application/json';
  const smuggled = wireRequest('GET', '/api/v1/openapi.json', []);
  const post = (path: string, head: string[], body: string) => wire(s.port, [wireRequest('POST', path, head, body)], [['POST', path]]);

  /** Answered: exactly one 400 naming `field`, with Connection: close, then closed. */
  const refused = (t: Test, r: Awaited<ReturnType<typeof wire>>, field: string, what: string) => {
    t.same(r.responses.map((x) => x.status), [400], `${what}: one answer, a 400 (${r.responses.map((x) => x.text.slice(0, 120))})`);
    t.equal(r.responses[0]?.headers.connection, 'close', `${what}: Connection: close`);
    t.ok(r.closedByServer, `${what}: the server closed the connection`);
    const body = r.responses[0]?.body;
    const details = (body?.details ?? body?.error?.details ?? []) as { field: string }[];
    t.same(details.map((d) => d.field), [field], `${what}: names ${field}`);
    return r.responses[0];
  };
  /** Not answered at all, the connection closed: in particular the smuggled request is not served. */
  const dropped = (t: Test, r: Awaited<ReturnType<typeof wire>>, what: string) => {
    t.same(r.responses.map((x) => x.status), [], `${what}: no answer (${r.responses.map((x) => x.text.slice(0, 120))})`);
    t.ok(r.closedByServer, `${what}: the server closed the connection`);
  };

  t.test('two Content-Length headers: 400 and closed; what follows is never served', async (t) => {
    const same = refused(t, await post('/api/v1/workspaces', [auth, json, 'Content-Length: 2', 'Content-Length: 2'], '{}'), 'Content-Length', 'two equal');
    t.equal(same?.body?.error?.code, 'VALIDATION_ERROR', "the session routes' input-error shape");
    t.match(same?.body?.error?.message, /more than one Content-Length/);
    const body = '{}' + smuggled;
    // uWS takes the first: the whole rest is the body, read and dropped with the connection.
    refused(t, await post('/api/v1/workspaces', [auth, json, `Content-Length: ${body.length}`, 'Content-Length: 2'], body), 'Content-Length', 'the longer first');
    // uWS takes the first: what follows it is a request of its own, never served.
    dropped(t, await post('/api/v1/workspaces', [auth, json, 'Content-Length: 2', `Content-Length: ${body.length}`], body), 'the shorter first, a request after it');
    // The key routes' shape, before authentication; a path no route has.
    const k = refused(t, await post('/api/v1/track', [json, 'Content-Length: 3', 'Content-Length: 2'], '{} '), 'Content-Length', 'key route');
    t.equal(k?.body?.error, 'Bad Request', "key route: the key routes' Bad Request shape");
    refused(t, await post('/api/v1/no/such/path', ['Content-Length: 3', 'Content-Length: 2'], '{} '), 'Content-Length', 'unknown path');
  });

  t.test('Content-Length with Transfer-Encoding: never served', async (t) => {
    // uWS itself refuses these before Herald sees them: the connection closes unanswered.
    for (const te of ['chunked', 'gzip']) {
      dropped(t, await post('/api/v1/workspaces', [auth, json, 'Content-Length: 2', `Transfer-Encoding: ${te}`], '2\r\n{}\r\n0\r\n\r\n'), `Transfer-Encoding: ${te} with Content-Length`);
      dropped(t, await post('/api/v1/workspaces', [auth, json, 'Content-Length: 2', `Transfer-Encoding: ${te}`], '{}' + smuggled), `Transfer-Encoding: ${te} with Content-Length, a request after the body`);
    }
    // An empty Transfer-Encoding gets past uWS: Herald refuses it.
    refused(t, await post('/api/v1/workspaces', [auth, json, 'Content-Length: 2', 'Transfer-Encoding: '], '{}'), 'Transfer-Encoding', 'empty Transfer-Encoding with Content-Length');
    dropped(t, await post('/api/v1/workspaces', [auth, json, 'Content-Length: 2', 'Transfer-Encoding: '], '{}' + smuggled), 'empty Transfer-Encoding with Content-Length, a request after the body');
  });

  t.test('Transfer-Encoding other than one chunked: 400 and closed', async (t) => {
    const chunkedBody = '11\r\n{"name":"Coding"}\r\n0\r\n\r\n';
    for (const head of [['Transfer-Encoding: gzip, chunked'], ['Transfer-Encoding: chunked', 'Transfer-Encoding: chunked']]) {
      refused(t, await post('/api/v1/workspaces', [auth, json, ...head], chunkedBody), 'Transfer-Encoding', head.join(' + '));
      dropped(t, await post('/api/v1/workspaces', [auth, json, ...head], chunkedBody + smuggled), `${head.join(' + ')}, a request after the body`);
    }
    refused(t, await post('/api/v1/workspaces', [auth, json, 'Transfer-Encoding: identity'], ''), 'Transfer-Encoding', 'Transfer-Encoding: identity');
    // The coding's name is case-insensitive (RFC 9112 §7).
    const ok = await wire(s.port, [wireRequest('POST', '/api/v1/workspaces', [auth, json, 'Transfer-Encoding: Chunked'], chunkedBody)], [['POST', '/api/v1/workspaces']], 300);
    t.equal(ok.responses[0]?.status, 201, `Transfer-Encoding: Chunked is served (${ok.responses[0]?.text})`);
  });

  t.test('Content-Length that is not decimal digits: never served, the connection closed', async (t) => {
    // Herald refuses it, but uWS closes the connection over the same bytes first.
    for (const value of ['2, 2', '+2', '0x2', '99999999999999999999']) {
      dropped(t, await post('/api/v1/workspaces', [auth, json, `Content-Length: ${value}`], '{}' + smuggled), `Content-Length: ${value}`);
    }
  });
});

// uWS (v20.30 of @trufflesuite/uws-js-unofficial) parses at most 48 header lines (50 slots,
// compiled in: the request line, 48 headers, the end of the head) and never hands a request
// with more to Herald: it takes the head for unfinished and waits for the rest, so the client
// gets no answer, and the connection is closed by uWS's idle timeout (10 s, swept every 4 s),
// or at once when the unfinished head passes uWS's 4 KB buffer. Herald has no hook there to
// answer 431. Later uWebSockets releases answer 431 themselves: with one, this test fails and
// should expect the 431. docs/architecture.md, "HTTP framing".
t.test('a header flood (49 header lines or more): closed unanswered; nothing else waits for it', async (t) => {
  const lines = (n: number) => Array.from({ length: n - 1 }, (_, i) => `X-Flood-${i}: ${i}`); // plus Host
  const ok = await wire(s.port, [wireRequest('GET', '/healthz', lines(48))], [['GET', '/healthz']], 300);
  t.same(ok.responses.map((r) => r.status), [200], '48 header lines are served');

  let floodDone = false;
  const floodStart = Date.now();
  const flood = wire(s.port, [wireRequest('GET', '/healthz', lines(49))], [['GET', '/healthz']], 20_000).finally(() => (floodDone = true));
  await new Promise((r) => setTimeout(r, 300));
  const other = await s.req('GET', '/healthz');
  t.equal(other.status, 200, 'another connection is served meanwhile');
  t.notOk(floodDone, 'while the flooded connection is still open');
  const dropped = await flood;
  t.same(dropped.responses, [], `no answer to 49 header lines (${dropped.raw.slice(0, 120)})`);
  t.ok(dropped.closedByServer, 'the server closed the connection (its idle timeout)');
  t.comment(`49 header lines: the connection closed after ${((Date.now() - floodStart) / 1000).toFixed(1)} s (uWS's idle timeout: 8 to 12 s)`);

  // Past 4 KB of unfinished head, uWS closes the connection at once (well before its idle timeout).
  const big = await wire(s.port, [wireRequest('GET', '/healthz', lines(49).map((l) => `${l}-${'v'.repeat(100)}`))], [['GET', '/healthz']], 3000);
  t.same(big.responses, [], '49 long header lines: no answer');
  t.ok(big.closedByServer, '49 header lines over 4 KB: closed at once');
});

// Pipelining (docs/architecture.md, "HTTP framing"): uWS closes a connection on which a request arrives
// while the previous one is still unanswered. Herald stops reading a connection while it
// works on a request, so a request sent meanwhile is read, and answered, after it.
t.test('pipelining', async (t) => {
  const auth = `Authorization: Bearer ${token}`;
  const json = 'Content-Type: application/json';

  t.test('requests answered at once (404, 405) in one write: all answered, in order', async (t) => {
    const r = await wire(s.port, [wireRequest('GET', '/api/v1/nope-1', []) + wireRequest('DELETE', '/api/v1/workspaces', [auth]) + wireRequest('GET', '/api/v1/nope-2', [])], [['GET', '/api/v1/nope-1'], ['DELETE', '/api/v1/workspaces'], ['GET', '/api/v1/nope-2']], 300);
    t.same(r.responses.map((x) => x.status), [404, 405, 404]);
    t.match(r.responses[2]?.body?.error, /nope-2/, 'the third answer is the third request’s');
    t.notOk(r.closedByServer, 'the connection stays open');
  });

  t.test('a request sent while the previous one is being answered: answered after it, in order', async (t) => {
    // The first request waits on a row lock this test holds, so the second one certainly
    // arrives while the first is unanswered.
    const ws = await newWorkspace(s, 'Pipelined');
    const key = await newKey(s, ws, { permissions: ['people:read'] });
    const db = new pg.Client({ connectionString: process.env.DATABASE_URL ?? embeddedDatabaseUrl(s.dataDir) });
    await db.connect();
    t.teardown(() => db.end());
    await db.query('BEGIN');
    await db.query('SELECT id FROM api_keys WHERE id = $1 FOR UPDATE', [key.id]);
    const path = `/api/v1/workspaces/${ws.id}/api-keys/${key.id}`;
    const wsAuth = `Authorization: Bearer ${ws.token}`;
    const body = JSON.stringify({ name: 'renamed while pipelined' });
    const r = await wire(
      s.port,
      [
        wireRequest('PUT', path, [wsAuth, json, `Content-Length: ${body.length}`], body),
        300,
        wireRequest('GET', path, [wsAuth]),
        300,
        () => db.query('COMMIT'),
      ],
      [['PUT', path], ['GET', path]],
    );
    t.same(r.responses.map((x) => x.status), [200, 200], `both answered (${r.responses.map((x) => x.text.slice(0, 100))})`);
    t.equal(r.responses[0]?.body?.api_key?.name, 'renamed while pipelined', 'the first answer is the update');
    t.equal(r.responses[1]?.body?.api_key?.name, 'renamed while pipelined', 'the second, read after it, sees the update');
    t.notOk(r.closedByServer, 'the connection stays open');
  });

  t.test('requests arriving together behind one still to be answered: the connection closes and none is executed', async (t) => {
    // Session routes (the token is verified asynchronously) and key routes (a cached key is
    // checked at once) alike.
    const user = uniqueUser('pipelined');
    const tok = await s.session(user);
    const ws = await newWorkspace(s, 'Pipelined people');
    const key = await newKey(s, ws, { permissions: ['people:write', 'people:read'] });
    t.equal((await s.req('GET', '/people', { token: key.key })).status, 200, 'the key is cached');
    const post = (path: string, credential: string, body: unknown) => {
      const text = JSON.stringify(body);
      return wireRequest('POST', path, [`Authorization: Bearer ${credential}`, json, `Content-Length: ${text.length}`], text);
    };
    const sessions = await wire(s.port, [post('/api/v1/workspaces', tok, { name: 'Pipelined 1' }) + post('/api/v1/workspaces', tok, { name: 'Pipelined 2' }) + wireRequest('GET', '/api/v1/workspaces', [auth])], [['POST', '/api/v1/workspaces'], ['POST', '/api/v1/workspaces'], ['GET', '/api/v1/workspaces']]);
    t.same(sessions.responses.map((x) => x.status), [], 'session routes: no answer');
    t.ok(sessions.closedByServer, 'session routes: the server closed the connection');
    const keys = await wire(s.port, [post('/api/v1/people', key.key, { userId: 'pipelined-1' }) + post('/api/v1/people', key.key, { userId: 'pipelined-2' })], [['POST', '/api/v1/people'], ['POST', '/api/v1/people']]);
    t.same(keys.responses.map((x) => x.status), [], 'key routes: no answer');
    t.ok(keys.closedByServer, 'key routes: the server closed the connection');
    await new Promise((res) => setTimeout(res, 300));
    const list = await s.req('GET', '/workspaces', { token: tok });
    t.equal(list.status, 200);
    t.same(list.body?.workspaces, [], 'neither workspace was created');
    for (const id of ['pipelined-1', 'pipelined-2']) t.equal((await s.req('GET', `/people/${id}`, { token: key.key })).status, 404, `person ${id} was not created`);
  });
});

t.test('shutdown', async (t) => {
  /**
   * Starts a POST /workspaces, sends `signal` once the server has the request (it answered
   * 100 Continue), then sends the body. Returns the response and the exit code.
   */
  async function inFlightThenSignal(signal: NodeJS.Signals, name: string) {
    const srv = await startServer();
    const tok = await srv.session(uniqueUser('shutdown'));
    let exit: Promise<number | null> | undefined;
    const body = JSON.stringify({ name });
    const res = await rawRequest(srv, 'POST', '/workspaces', {
      headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json', 'content-length': String(body.length), expect: '100-continue' },
      chunks: [body],
      onContinue: async () => {
        exit = srv.stop(signal);
      },
    }).catch((err: Error): RawRes => ({ status: -1, text: `connection error: ${err.message}`, headers: {}, body: undefined }));
    return { res, exit, srv };
  }

  t.test('SIGTERM: a request in flight completes, then exit 0', async (t) => {
    const { res, exit, srv } = await inFlightThenSignal('SIGTERM', 'In flight');
    t.ok(exit, 'the signal was sent while the request was in flight');
    t.equal(res.status, 201, `the request in flight got a real answer: ${res.text}`);
    t.equal(res.body?.data?.workspace?.name, 'In flight');
    t.equal(await exit, 0, `exit code 0; stderr: ${srv.stderr().slice(-500)}`);
  });

  t.test('SIGINT: a request in flight completes, then exit 0', async (t) => {
    const { res, exit, srv } = await inFlightThenSignal('SIGINT', 'In flight too');
    t.ok(exit);
    t.equal(res.status, 201, `the request in flight got a real answer: ${res.text}`);
    t.equal(await exit, 0, `exit code 0; stderr: ${srv.stderr().slice(-500)}`);
  });

  t.test('a client gone mid-upload does not hold SIGTERM back', async (t) => {
    // A shutdown timeout far above what stopping takes: only a request still counted in
    // flight would make the exit wait for it.
    const timeoutMs = 20_000;
    const srv = await startServer({ HERALD_SHUTDOWN_TIMEOUT_MS: String(timeoutMs) });
    const tok = await srv.session(uniqueUser('upload'));
    const head = wireRequest('POST', '/api/v1/workspaces', [`Authorization: Bearer ${tok}`, 'Content-Type: application/json', 'Content-Length: 1000', 'Expect: 100-continue'], '');
    // The server has the request once it asks for the body (100 Continue); half the body
    // follows, then the client goes.
    const upload = await wire(srv.port, [head, /^HTTP\/1\.1 100 /, '{"name":"never fin'], [], 200);
    t.match(upload.raw, /^HTTP\/1\.1 100 /, 'the server had the request (it asked for the body)');
    t.same(upload.responses, [], 'no answer to the unfinished upload');
    // The client is gone (wire closed its socket); now stop the server.
    const since = Date.now();
    const code = await srv.stop('SIGTERM');
    const ms = Date.now() - since;
    t.equal(code, 0, `exit code 0; stderr: ${srv.stderr().slice(-500)}`);
    t.ok(ms < timeoutMs, `exited in ${ms} ms, before HERALD_SHUTDOWN_TIMEOUT_MS (${timeoutMs} ms)`);
  });

  t.test('an idle server exits 0 on SIGTERM and on SIGINT', async (t) => {
    const a = await startServer();
    t.equal((await a.req('GET', '/healthz')).status, 200);
    t.equal(await a.stop('SIGTERM'), 0);
    const b = await startServer();
    t.equal((await b.req('GET', '/healthz')).status, 200);
    t.equal(await b.stop('SIGINT'), 0);
  });
});

// A copy of the install whose uWS package lacks its native binaries (everything else is a
// symlink to the real one; --preserve-symlinks makes Node resolve packages from the copy).
t.test('refuses to serve without the uWS native binary (never runs on the slow fallback)', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'herald-nouws-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const repo = new URL('../..', import.meta.url).pathname;
  symlinkSync(join(repo, 'dist'), join(root, 'dist'));
  symlinkSync(join(repo, 'package.json'), join(root, 'package.json'));
  mkdirSync(join(root, 'node_modules', '@trufflesuite', 'uws-js-unofficial'), { recursive: true });
  for (const name of readdirSync(join(repo, 'node_modules'))) {
    if (name !== '@trufflesuite') symlinkSync(join(repo, 'node_modules', name), join(root, 'node_modules', name));
  }
  const pkg = join(repo, 'node_modules', '@trufflesuite', 'uws-js-unofficial');
  for (const name of readdirSync(pkg)) {
    if (name !== 'binaries') cpSync(join(pkg, name), join(root, 'node_modules', '@trufflesuite', 'uws-js-unofficial', name), { recursive: true });
  }
  const proc = spawn(process.execPath, ['--preserve-symlinks', '--preserve-symlinks-main', join(root, 'dist', 'src', 'cli.js'), 'start'], {
    env: { ...process.env, HERALD_PORT: '0', HERALD_DATA_DIR: join(root, 'data'), HERALD_AUTH_SECRET: TEST_SECRET },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => proc.once('exit', r));
  t.not(code, 0, 'exits non-zero');
  t.notMatch(out, /listening/, 'never listens');
  t.match(err, /uWebSockets\.js native binary did not load/, 'says why');
});

// HTTP edges through a real server: routing errors, malformed bodies, size limits, the
// OpenAPI document, and clean shutdown (DECISIONS §1, §4, INTERFACE 8.3, 9.5).
import t from 'tap';
import http from 'node:http';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startServer, uniqueUser, TEST_SECRET, type TestServer } from '../helpers/server.js';
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
  const root = await s.req('GET', `${s.base}/`);
  t.equal(root.status, 404, 'the root');
  t.equal(root.body?.code, 'NOT_FOUND');
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
  // Malformed JSON: a 400 would mean it was parsed.
  const big = '{' + 'x'.repeat(MB);
  const r = await rawRequest(s, 'POST', '/workspaces', {
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(big)) },
    chunks: [big],
  }).catch((err: Error) => ({ status: -1, text: err.message, headers: {}, body: undefined }));
  t.equal(r.status, 413, r.text.slice(0, 200));
  t.equal(r.body?.success, false);
  t.equal(r.body?.error?.code, 'PAYLOAD_TOO_LARGE', 'session route, session shape');

  const k = await rawRequest(s, 'POST', '/track', {
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(big)) },
    chunks: [big],
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
  type Resp = { description: string; content?: { 'application/json'?: { schema?: Record<string, unknown> } } };
  const schemas = doc.components?.schemas ?? {};
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, Resp> }>>)) {
    for (const [method, op] of Object.entries(item)) {
      const label = `${method.toUpperCase()} ${path}`;
      const statuses = Object.keys(op.responses);
      t.notOk(statuses.includes('default'), `${label}: no default response`);
      t.ok(statuses.every((s) => /^[1-5]\d\d$/.test(s)), `${label}: explicit status codes`);
      for (const [status, resp] of Object.entries(op.responses)) {
        if (status === '204') {
          t.notOk(resp.content, `${label} ${status}: no body`);
          continue;
        }
        const schema = resp.content?.['application/json']?.schema;
        t.ok(schema, `${label} ${status}: a JSON body schema`);
        const resolved = (typeof schema?.$ref === 'string' ? schemas[(schema.$ref as string).split('/').pop()!] : schema) as Record<string, unknown> | undefined;
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
    if (route.auth !== 'public') for (const s of ['401', '403', '429', '503']) t.ok(statuses.includes(s), `${route.id}: ${s}`);
  }
  t.ok(doc.components?.responses?.UnknownRoute && doc.components?.responses?.MethodNotAllowed, 'the rules for unknown paths and methods');
  t.same(Object.keys(doc.paths['/healthz'].get.responses).sort(), ['200', '429', '503'], '/healthz: 200, 503 (and the edge 429)');

  const anon = await s.req('GET', '/openapi.json', { token: 'whatever' });
  t.equal(anon.status, 200, 'public: no credential needed, a bad one ignored');
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

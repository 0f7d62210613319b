// Every response the tests receive is checked against the OpenAPI document Herald serves, so
// the document cannot drift from the server: the status must be documented for the operation
// the request targets, and the body must validate against that response's schema.
//
// The document is built once by the compiled module the server itself uses
// (dist/src/http/openapi.js). Requests that target no operation are held to the document's
// top-level rules (#/components/responses): UnknownRoute (404) for a path no route has,
// MethodNotAllowed (405) for a path served under other methods, EdgeRateLimited (429),
// BadFraming (400).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';

const DOC_ID = 'herald-openapi';

interface ResponseObject {
  description: string;
  content?: Record<string, { schema: unknown }>;
}
interface OpenApiDoc {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, ResponseObject> }>>;
  components: { responses: Record<string, ResponseObject> };
}
interface RouterLike {
  match(method: string, url: string): { kind: 'route' | 'method'; route: { path: string } } | { kind: 'none' };
}

interface Contract {
  doc: OpenApiDoc;
  ajv: Ajv;
  router: RouterLike;
  outside: RouterLike;
  validators: Map<string, ValidateFunction>;
}

let contract: Promise<Contract> | undefined;

async function load(): Promise<Contract> {
  const mod = (await import(new URL('../../dist/src/http/openapi.js', import.meta.url).href)) as { buildOpenApi(): OpenApiDoc };
  const doc = mod.buildOpenApi();
  // strict: false lets ajv (draft-07) read OpenAPI's `nullable: true` and ignore the
  // document's other keys; the document is one schema, so `#/components/...` refs resolve.
  const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
  addFormats.default(ajv);
  ajv.addFormat('time-zone', true); // Herald's own format for IANA zone names; responses echo what the request schema checked
  ajv.addSchema(doc, DOC_ID);
  const { Router } = (await import(new URL('../../dist/src/http/router.js', import.meta.url).href)) as { Router: new (routes: unknown, prefix: string) => RouterLike };
  const { ROUTES, API_PREFIX, atRoot } = (await import(new URL('../../dist/src/routes.js', import.meta.url).href)) as { ROUTES: { auth: string }[]; API_PREFIX: string; atRoot: (r: { auth: string }) => boolean };
  // As the front routes: the API under its prefix, the routes outside it (unsubscribe, provider callbacks, the Segment-compatible source) at the root.
  const outside = atRoot;
  return { doc, ajv, router: new Router(ROUTES.filter((r) => !outside(r)), API_PREFIX), outside: new Router(ROUTES.filter(outside), ''), validators: new Map() };
}

type Target = { kind: 'operation'; path: string; method: string } | { kind: 'wrong-method'; path: string } | { kind: 'unknown' };

/** What the server's own router (compiled, the same table) makes of `method pathname`. */
function target(c: Contract, method: string, pathname: string): Target {
  const m = method.toLowerCase();
  if (pathname === '/healthz') return m === 'get' ? { kind: 'operation', path: '/healthz', method: m } : { kind: 'unknown' };
  const inside = c.router.match(method, pathname);
  const match = inside.kind === 'none' ? c.outside.match(method, pathname) : inside;
  if (match.kind === 'route') return { kind: 'operation', path: match.route.path, method: m };
  // A preflight is documented as an OPTIONS operation on the paths browsers may call.
  if (match.kind === 'method') return c.doc.paths[match.route.path]![m] ? { kind: 'operation', path: match.route.path, method: m } : { kind: 'wrong-method', path: match.route.path };
  return { kind: 'unknown' };
}

const pointer = (segments: string[]) => segments.map((s) => '/' + encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('');

function validator(c: Contract, segments: string[]): ValidateFunction {
  const ref = `${DOC_ID}#${pointer(segments)}`;
  let v = c.validators.get(ref);
  if (!v) c.validators.set(ref, (v = c.ajv.compile({ $ref: ref })));
  return v;
}

/**
 * Throws unless the response (`status`, raw body `text`, `contentType` when known) to
 * `method url` is one the document allows: a documented status of the targeted operation, with
 * a body its schema accepts, or one of the media types it documents when that is not JSON (an
 * HTML page, TwiML).
 */
export async function checkResponse(method: string, url: string, status: number, text: string, contentType?: string | null): Promise<void> {
  const c = await (contract ??= load());
  const pathname = new URL(url, 'http://localhost').pathname;
  const t = target(c, method.toUpperCase(), pathname);
  let where: string[];
  let label: string;
  if (t.kind === 'operation') {
    const op = c.doc.paths[t.path]![t.method]!;
    label = `${t.method.toUpperCase()} ${t.path} (${op.operationId})`;
    if (!op.responses[String(status)]) {
      fail(label, status, text, `status ${status} is not documented; documented: ${Object.keys(op.responses).join(', ')}`);
    }
    where = ['paths', t.path, t.method, 'responses', String(status)];
  } else {
    const rule = status === 429 ? 'EdgeRateLimited' : status === 400 ? 'BadFraming' : t.kind === 'unknown' ? (status === 404 ? 'UnknownRoute' : null) : status === 405 ? 'MethodNotAllowed' : null;
    label = t.kind === 'unknown' ? `${method} ${pathname} (no route has this path)` : `${method} ${pathname} (${t.path} has no ${method})`;
    if (!rule) fail(label, status, text, `a request that targets no operation answers only ${t.kind === 'unknown' ? '404' : '405'}, 400 or 429`);
    where = ['components', 'responses', rule];
  }
  let response: ResponseObject = c.doc as never;
  for (const s of where) response = (response as never)[s];
  if (method.toUpperCase() === 'HEAD') return; // no body, whatever a GET would carry
  const content = response.content?.['application/json'];
  const others = Object.keys(response.content ?? {});
  if (!content && others.length > 0) {
    const type = contentType?.split(';')[0]!.trim().toLowerCase();
    if (!type || !others.includes(type)) fail(label, status, text, `Content-Type ${contentType ?? '(unknown)'} is not the documented ${others.join(', ')}`);
    return;
  }
  if (!content) {
    if (text !== '') fail(label, status, text, 'the document gives this response no body');
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    fail(label, status, text, 'the body is not JSON');
  }
  const v = validator(c, [...where, 'content', 'application/json', 'schema']);
  if (!v(body)) fail(label, status, text, `the body does not match the documented schema:\n${JSON.stringify(v.errors, null, 1)}`);
}

function fail(label: string, status: number, text: string, why: string): never {
  throw new Error(`Response not allowed by the OpenAPI document: ${label} answered ${status}: ${why}\nbody: ${text.slice(0, 2000)}`);
}

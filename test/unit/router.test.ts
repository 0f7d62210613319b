// The router over the real route table, under /api/v1.
import t from 'tap';
import { Router, type Match } from '../../src/http/router.js';
import { ROUTES } from '../../src/routes.js';

const router = new Router(ROUTES, '/api/v1');
const m = (method: string, path: string): Match => router.match(method, path);
const routeId = (x: Match) => (x.kind === 'route' ? x.route.id : x.kind);

t.test('every route in the table is reachable by its own method and path', async (t) => {
  for (const r of ROUTES) {
    const path = '/api/v1' + r.path.replace(/\{(\w+)\}/g, (_s, name: string) => `x-${name}`);
    const got = m(r.method, path);
    t.equal(routeId(got), r.id, r.id);
    if (got.kind === 'route') {
      const want = Object.fromEntries([...r.path.matchAll(/\{(\w+)\}/g)].map((x) => [x[1], `x-${x[1]}`]));
      t.same(got.params, want, `${r.id} params`);
    }
  }
});

t.test('static segments beat parameters', async (t) => {
  t.equal(routeId(m('GET', '/api/v1/people/search')), 'GET /people/search');
  t.equal(routeId(m('GET', '/api/v1/people/someone')), 'GET /people/{id}');
  t.equal(routeId(m('POST', '/api/v1/people/upsert')), 'POST /people/upsert');
  t.equal(routeId(m('POST', '/api/v1/people/batch')), 'POST /people/batch');
  t.equal(routeId(m('POST', '/api/v1/track/batch')), 'POST /track/batch');
  t.equal(routeId(m('GET', '/api/v1/workspaces/w1/people/stats')), 'GET /workspaces/{workspaceId}/people/stats');
  t.equal(routeId(m('PATCH', '/api/v1/workspaces/w1/people/p1')), 'PATCH /workspaces/{workspaceId}/people/{personId}');
  const s = m('POST', '/api/v1/workspaces/w1/push/send/batch');
  t.equal(routeId(s), 'POST /workspaces/{workspaceId}/push/send/batch');
});

t.test('a static path under a method it lacks: 405, not the parameter route', async (t) => {
  // /people/search exists only for GET; DELETE /people/search must not fall to DELETE /people/{id}.
  const x = m('DELETE', '/api/v1/people/search');
  t.equal(x.kind, 'method');
  if (x.kind === 'method') t.same(x.allowed, ['GET']);
  const y = m('GET', '/api/v1/people/upsert');
  t.equal(y.kind, 'method');
  if (y.kind === 'method') t.same(y.allowed, ['POST']);
});

t.test('parameters are bound and percent-decoded', async (t) => {
  const a = m('GET', '/api/v1/people/user%40example.com');
  t.equal(routeId(a), 'GET /people/{id}');
  if (a.kind === 'route') t.same(a.params, { id: 'user@example.com' });

  const b = m('GET', '/api/v1/people/a%2Fb%20c');
  t.equal(routeId(b), 'GET /people/{id}', 'an encoded slash stays inside one segment');
  if (b.kind === 'route') t.same(b.params, { id: 'a/b c' });

  const c = m('DELETE', '/api/v1/workspaces/ws-1/api-keys/key-2');
  t.equal(routeId(c), 'DELETE /workspaces/{workspaceId}/api-keys/{keyId}');
  if (c.kind === 'route') t.same(c.params, { workspaceId: 'ws-1', keyId: 'key-2' });

  const d = m('GET', '/api/v1/people/%C3%A9t%C3%A9');
  if (d.kind === 'route') t.same(d.params, { id: 'été' });
  else t.fail('expected a route');
});

t.test('a malformed percent-encoding matches nothing', async (t) => {
  t.equal(m('GET', '/api/v1/people/%E0%A4%A').kind, 'none');
  t.equal(m('GET', '/api/v1/people/%zz').kind, 'none');
});

t.test('a trailing slash is ignored', async (t) => {
  t.equal(routeId(m('POST', '/api/v1/workspaces/')), 'POST /workspaces');
  t.equal(routeId(m('GET', '/api/v1/people/')), 'GET /people');
  const x = m('GET', '/api/v1/people/bob/');
  t.equal(routeId(x), 'GET /people/{id}');
  if (x.kind === 'route') t.same(x.params, { id: 'bob' });
  t.equal(routeId(m('GET', '/api/v1/openapi.json/')), 'GET /openapi.json');
});

t.test('an empty parameter segment matches nothing', async (t) => {
  t.equal(m('GET', '/api/v1/people//events').kind, 'none');
  t.equal(m('GET', '/api/v1/workspaces//api-keys').kind, 'none');
});

t.test('405 with the allowed methods', async (t) => {
  const a = m('PATCH', '/api/v1/people/bob');
  t.equal(a.kind, 'method');
  if (a.kind === 'method') t.same([...a.allowed].sort(), ['DELETE', 'GET', 'PUT']);

  const b = m('DELETE', '/api/v1/workspaces');
  t.equal(b.kind, 'method');
  if (b.kind === 'method') t.same([...b.allowed].sort(), ['GET', 'POST']);

  const c = m('GET', '/api/v1/track');
  t.equal(c.kind, 'method');
  if (c.kind === 'method') {
    t.same(c.allowed, ['POST']);
    t.equal(c.route.id, 'POST /track');
  }

  const d = m('POST', '/api/v1/people/bob/devices');
  t.equal(routeId(d), 'POST /people/{id}/devices');
  const e = m('PUT', '/api/v1/people/bob/devices');
  t.equal(e.kind, 'method');
  if (e.kind === 'method') t.same([...e.allowed].sort(), ['DELETE', 'GET', 'POST']);

  const f = m('OPTIONS', '/api/v1/identify');
  t.equal(f.kind, 'method');
  if (f.kind === 'method') t.same(f.allowed, ['POST']);

  const g = m('GET', '/api/v1/workspaces/w/api-keys/k/refresh');
  t.equal(g.kind, 'method');
  if (g.kind === 'method') t.same(g.allowed, ['POST']);
});

t.test('method names are exact', async (t) => {
  t.equal(m('get', '/api/v1/people').kind, 'method', 'the router expects upper case (the front upper-cases)');
});

t.test('unknown paths: none', async (t) => {
  for (const p of ['/api/v1/nope', '/api/v1/people/a/b/c/d', '/api/v1/track/batch/extra', '/api/v1', '/api/v1/', '/api/v1//', '/api/v1/workspaces/w/unknown']) {
    t.equal(m('GET', p).kind, 'none', p);
    t.equal(m('POST', p).kind, 'none', p);
  }
});

t.test('paths outside the prefix: none', async (t) => {
  for (const p of ['/people', '/track', '/api/v2/people', '/api/v1people', '/API/V1/people', '/healthz', '/', '', 'api/v1/people', '/x/api/v1/people']) {
    t.equal(m('GET', p).kind, 'none', JSON.stringify(p));
  }
  t.equal(m('POST', '/api/v2/track').kind, 'none');
});

t.test('a router with another prefix', async (t) => {
  const r = new Router(ROUTES, '/v9');
  t.equal(routeId(r.match('POST', '/v9/track')), 'POST /track');
  t.equal(r.match('POST', '/api/v1/track').kind, 'none');
});

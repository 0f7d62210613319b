// How Herald serves the dashboard (README, Dashboard): the redirect from `/`, index.html and the
// hashed assets with their caching and security headers, the email preview's frame with its
// own, client routes answered with index.html, no path outside dist/dashboard, config.json,
// and the sign-in link `npm start` prints.
import t, { type Test } from 'tap';
import { connect } from 'node:net';
import { eventually, startServer } from '../helpers/server.js';

const s = await startServer({ HERALD_AUTH_SECRET: undefined, HERALD_PUBLIC_URL: 'https://herald.example.com/' });
t.teardown(() => s.stop());

const get = (path: string, init: RequestInit = {}) => fetch(s.base + path, { redirect: 'manual', ...init });

/** Sends `path` byte for byte (fetch would normalise `..` away); the raw answer. */
function raw(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect(s.port, '127.0.0.1', () => sock.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
    let out = '';
    sock.on('data', (d) => (out += d));
    sock.on('end', () => resolve(out));
    sock.on('error', reject);
  });
}

function securityHeaders(t: Test, r: Response, what: string) {
  t.match(r.headers.get('content-security-policy'), /^default-src 'self'/, `${what}: CSP`);
  t.equal(r.headers.get('x-frame-options'), 'DENY', `${what}: X-Frame-Options`);
  t.equal(r.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
}

t.test('/ and /dashboard redirect to /dashboard/', async (t) => {
  for (const path of ['/', '/dashboard']) {
    const r = await get(path);
    t.equal(r.status, 302, path);
    t.equal(r.headers.get('location'), '/dashboard/', path);
  }
});

let asset = '';
t.test('index.html: no cache, security headers, no inline script or style', async (t) => {
  const r = await get('/dashboard/');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/html/);
  t.equal(r.headers.get('cache-control'), 'no-cache');
  securityHeaders(t, r, 'index.html');
  const html = await r.text();
  const src = /<script type="module" crossorigin src="(\/dashboard\/assets\/[^"]+\.js)"/.exec(html);
  t.ok(src, 'loads a hashed script');
  asset = src![1]!;
  t.notMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  t.notMatch(html, /<style|\sstyle=/, 'no inline style');
  const head = await get('/dashboard/', { method: 'HEAD' });
  t.equal(head.status, 200, 'HEAD');
  t.equal(await head.text(), '', 'HEAD has no body');
});

t.test('config.json: no OIDC without an issuer, and the CSP names no other origin', async (t) => {
  const r = await get('/dashboard/config.json');
  t.equal(r.status, 200);
  t.equal(r.headers.get('cache-control'), 'no-cache');
  t.same(await r.json(), { oidc: null });
  securityHeaders(t, r, 'config.json');
  t.notMatch(r.headers.get('content-security-policy'), /connect-src/);
});

t.test("the email preview's frame: framed by the dashboard alone, its own script, an email's styles and images", async (t) => {
  const r = await get('/dashboard/email-frame.html');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/html/);
  const csp = r.headers.get('content-security-policy') ?? '';
  for (const d of ["default-src 'none'", "script-src 'self';", "style-src 'self' 'unsafe-inline' https: http:", 'img-src https: http: data:', "frame-ancestors 'self'", "form-action 'none'"]) t.match(csp, d, `CSP: ${d}`);
  t.equal(r.headers.get('x-frame-options'), 'SAMEORIGIN', 'framed by the dashboard only');
  t.equal(r.headers.get('x-content-type-options'), 'nosniff');
  t.notMatch(await r.text(), /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  securityHeaders(t, await get('/dashboard/email-frame.js'), 'its script, as any other file');
});

t.test('hashed assets: cached a year, gzipped when asked', async (t) => {
  const r = await get(asset, { headers: { 'accept-encoding': 'gzip' } });
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/javascript/);
  t.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.equal(r.headers.get('content-encoding'), 'gzip');
  securityHeaders(t, r, 'asset');
  t.ok((await r.text()).length > 1000, 'the script');
  const plain = await get(asset, { headers: { 'accept-encoding': 'identity' } });
  t.equal(plain.headers.get('content-encoding'), null, 'not gzipped unless asked');
  const missing = await get('/dashboard/assets/index-00000000.js');
  t.equal(missing.status, 404, 'an unknown asset is a 404, not the page');
  securityHeaders(t, missing, '404');
});

t.test('client routes answer index.html', async (t) => {
  const index = await (await get('/dashboard/')).text();
  for (const path of ['/dashboard/w/123/people', '/dashboard/workspaces?x=1', '/dashboard/nope/deep/path']) {
    const r = await get(path);
    t.equal(r.status, 200, path);
    t.equal(await r.text(), index, path);
  }
});

t.test('no path reaches outside the built dashboard', async (t) => {
  for (const path of ['/dashboard/../package.json', '/dashboard/assets/../../../package.json', '/dashboard/%2e%2e/%2e%2e/package.json', '/dashboard/..%2f..%2fpackage.json', '/dashboard//etc/passwd']) {
    const out = await raw(path);
    t.notMatch(out, /"name": "herald"|root:x:0:0/, path);
  }
});

t.test('other methods and the API are not the dashboard', async (t) => {
  const post = await get('/dashboard/', { method: 'POST' });
  t.equal(post.status, 404, 'POST goes to the router');
  t.equal((await post.json()).code, 'NOT_FOUND');
  const doc = await get('/api/v1/openapi.json');
  t.equal(doc.status, 200);
  t.equal(doc.headers.get('x-frame-options'), null, 'API answers keep their own headers');
});

t.test('npm start prints the sign-in link with HERALD_PUBLIC_URL', async (t) => {
  // Printed just after the line the harness waits for.
  const m = await eventually(async () => /^Sign in to the dashboard: (\S+)$/m.exec(s.stdout()));
  t.ok(m, 'the link is printed');
  const link = new URL(m![1]!);
  t.equal(link.origin + link.pathname, 'https://herald.example.com/dashboard/');
  const token = /^#token=(eyJ[\w-]+\.[\w-]+\.[\w-]+)$/.exec(link.hash)?.[1];
  t.ok(token, 'the session token in the fragment');
  t.match(s.stdout(), new RegExp(`^${token}$`, 'm'), 'the same token printed beside it');
  const r = await s.req('GET', '/workspaces', { token });
  t.equal(r.status, 200, 'the token signs in');
});

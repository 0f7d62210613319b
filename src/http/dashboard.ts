// The web dashboard (README, Dashboard): the files `npm run build` writes to dist/dashboard, read
// into memory once when the front is made (a few hundred kB), served at /dashboard/ by the
// front before routing. A request can only name a file that was listed at start, so no path
// reaches outside that directory. Vite names every file under assets/ by its content hash:
// those are cached for a year; index.html is revalidated on every load, so a new build is
// picked up at once. Every answer carries the headers that keep the app from being framed or
// running injected script. With OIDC sign-in, `config.json` tells the app the issuer and its
// client id (no inline script can carry them), and the CSP lets the app reach the issuer.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { HttpResponse } from './uws.js';
import type { Config } from '../config.js';

const PREFIX = '/dashboard/';
/** Hashed by content (Vite's `build.assetsDir`). */
const IMMUTABLE = `${PREFIX}assets/`;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/** The browser fetches the issuer's discovery document and token endpoint: `connect-src` names its origin. */
function securityHeaders(oidc: DashboardOidc | null): Record<string, string> {
  const connect = oidc ? `; connect-src 'self' ${new URL(oidc.issuer).origin}` : '';
  return {
    'Content-Security-Policy': `default-src 'self'${connect}; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
}

/**
 * The email preview's frame (dashboard/public/email-frame.html): framed by the dashboard only,
 * its own script alone, and for the email it shows (an inner frame without script, which
 * inherits this policy) inline styles, remote images and fonts, as a mail app shows them.
 */
const EMAIL_FRAME = `${PREFIX}email-frame.html`;
const EMAIL_FRAME_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline' https: http:; img-src https: http: data:; font-src https: http: data:; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'",
  'X-Frame-Options': 'SAMEORIGIN',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

export interface DashboardOidc {
  issuer: string;
  clientId: string;
}

/**
 * The dashboard signs in by OIDC (README, Dashboard) when sessions are verified by OIDC (a JWKS URL
 * and no shared secret, as `resolveSessionAuth`) and the issuer and the audience (the
 * dashboard's client id: the ID token's `aud`) are set.
 */
export function dashboardOidc(cfg: Pick<Config, 'authSecret' | 'authJwksUrl' | 'authIssuer' | 'authAudience'>): DashboardOidc | null {
  if (cfg.authSecret || !cfg.authJwksUrl || !cfg.authIssuer || !cfg.authAudience) return null;
  return { issuer: cfg.authIssuer, clientId: cfg.authAudience };
}

interface File {
  type: string;
  cache: string;
  body: Buffer;
  /** Present when gzip makes it smaller. */
  gzipped?: Buffer;
}

function readTree(root: string): Map<string, File> {
  const files = new Map<string, File>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        walk(path);
        continue;
      }
      const url = PREFIX + relative(root, path).split(sep).join('/');
      const body = readFileSync(path);
      const gzipped = gzipSync(body);
      files.set(url, {
        type: TYPES[extname(path)] ?? 'application/octet-stream',
        cache: url.startsWith(IMMUTABLE) ? 'public, max-age=31536000, immutable' : 'no-cache',
        body,
        ...(gzipped.length < body.length ? { gzipped } : {}),
      });
    }
  };
  if (existsSync(root)) walk(root);
  return files;
}

/**
 * The dashboard's request handler: answers GET and HEAD of `/`, `/dashboard` and anything
 * under `/dashboard/`, and returns true; returns false (nothing written) for any other request.
 */
export function createDashboard(oidc: DashboardOidc | null = null, root = new URL('../../dashboard/', import.meta.url).pathname) {
  const files = readTree(root);
  const index = files.get(`${PREFIX}index.html`);
  const security = securityHeaders(oidc);
  const config = JSON.stringify({ oidc: oidc && { issuer: oidc.issuer, client_id: oidc.clientId } });

  function send(res: HttpResponse, head: boolean, status: string, headers: Record<string, string>, body: Buffer | string, policy = security): void {
    res.writeStatus(status);
    for (const h in policy) res.writeHeader(h, policy[h]!);
    for (const h in headers) res.writeHeader(h, headers[h]!);
    if (head) res.endWithoutBody(Buffer.byteLength(body));
    else res.end(body);
  }

  return function serveDashboard(res: HttpResponse, method: string, url: string, acceptEncoding: string): boolean {
    if (method !== 'GET' && method !== 'HEAD') return false;
    const head = method === 'HEAD';
    if (url === '/' || url === '/dashboard') {
      send(res, head, '302 Found', { Location: PREFIX, 'Cache-Control': 'no-cache' }, '');
      return true;
    }
    if (!url.startsWith(PREFIX)) return false;
    if (url === `${PREFIX}config.json`) {
      send(res, head, '200 OK', { 'Content-Type': TYPES['.json']!, 'Cache-Control': 'no-cache' }, config);
      return true;
    }
    // An unknown path is a page of the app (client-side routing), except under assets/, where
    // the browser wants a script or a style sheet and HTML would only hide the missing file.
    const file = files.get(url) ?? (url.startsWith(IMMUTABLE) ? undefined : index);
    if (!file) {
      const missing = index ? 'Not found' : 'The dashboard is not built: run `npm run build`.';
      send(res, head, '404 Not Found', { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache' }, missing);
      return true;
    }
    const gzip = file.gzipped !== undefined && /\bgzip\b/.test(acceptEncoding);
    send(
      res,
      head,
      '200 OK',
      { 'Content-Type': file.type, 'Cache-Control': file.cache, Vary: 'Accept-Encoding', ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) },
      gzip ? file.gzipped! : file.body,
      url === EMAIL_FRAME ? EMAIL_FRAME_HEADERS : security,
    );
    return true;
  };
}

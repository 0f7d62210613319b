// Signing in to the dashboard by OIDC in a real browser, against a real OpenID provider
// (`oidc-provider`, started here with a public PKCE client whose redirect URI is the
// dashboard): the sign-in page's button goes through the provider's own login and consent
// pages and comes back signed in with the ID token as the session; when that token expires,
// the sign-in page comes back and signing in again returns to the page the user was on.
import t from 'tap';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { startServer } from '../helpers/server.js';
import { checkPage, launch, openPage } from '../helpers/browser.js';

const CLIENT_ID = 'herald-dashboard';
/** Seconds an ID token lives; shortened by the expiry test. */
let idTokenTtl = 3600;

// The provider's address must be known before Herald starts, and Herald's (the redirect URI)
// before the provider is made: the listener comes first, the provider is attached after.
const http = createServer();
await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise((resolve) => http.close(resolve)));
const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

const s = await startServer({ HERALD_AUTH_SECRET: undefined, HERALD_AUTH_JWKS_URL: `${issuer}/jwks`, HERALD_AUTH_ISSUER: issuer, HERALD_AUTH_AUDIENCE: CLIENT_ID });
t.teardown(() => s.stop());

const provider = new Provider(issuer, {
  clients: [{ client_id: CLIENT_ID, token_endpoint_auth_method: 'none', redirect_uris: [`${s.base}/dashboard/`], grant_types: ['authorization_code'], response_types: ['code'] }],
  claims: { openid: ['sub'], email: ['email'], profile: ['name'] },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, email: `${sub}@example.test`, name: 'Ada Lovelace' }) }),
  ttl: { IdToken: () => idTokenTtl },
  features: { devInteractions: { enabled: true } },
});
http.on('request', provider.callback());

const browser = await launch(t);
/** Herald's pages' problems: the provider's own pages (a web font from the internet, no favicon) are not under test. */
const herald = (problems: string[]) => problems.filter((p) => !p.includes(issuer) && !p.includes('fonts.googleapis.com'));

t.test('the config and the CSP name the issuer', async (t) => {
  const r = await fetch(`${s.base}/dashboard/config.json`);
  t.same(await r.json(), { oidc: { issuer, client_id: CLIENT_ID } });
  t.match(r.headers.get('content-security-policy'), `connect-src 'self' ${issuer};`);
});

t.test('the provider signs in; an expired ID token brings back sign-in, then the page the user was on', async (t) => {
  const { context, page, problems } = await openPage(browser);
  t.teardown(() => context.close());
  idTokenTtl = 6;
  await page.goto(`${s.base}/dashboard/`);
  await page.getByRole('heading', { level: 1, name: 'Sign in to Herald' }).waitFor();
  t.same(await checkPage(page, 'sign-in-oidc'), [], 'no serious or critical accessibility violations');
  await page.getByRole('button', { name: `Sign in with 127.0.0.1:${new URL(issuer).port}` }).click();
  // The provider's own pages: any login and password, then consent.
  await page.locator('input[name=login]').fill('ada');
  await page.locator('input[name=password]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.getByRole('heading', { level: 1, name: 'Workspaces' }).waitFor();
  t.equal(new URL(page.url()).search, '', 'the code is gone from the address');
  const idToken = await page.evaluate(() => sessionStorage.getItem('herald.session'));
  const claims = JSON.parse(Buffer.from(idToken!.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
  t.match(claims, { iss: issuer, aud: CLIENT_ID, sub: 'ada' }, 'the session is the ID token');

  await page.getByLabel('Name').fill('Ada’s');
  await page.getByRole('button', { name: 'Create workspace' }).click();
  await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
  await page.getByRole('navigation', { name: 'Workspace pages' }).getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
  const settings = new URL(page.url()).pathname;

  // Past the ID token's expiry, the next call is refused.
  await page.waitForTimeout(Math.max(0, (claims.exp as number) * 1000 - Date.now()) + 1000);
  idTokenTtl = 3600;
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Sign in to Herald' }).waitFor();
  t.match(await page.getByRole('status').first().textContent(), /session has ended/, 'says why');
  t.equal(new URL(page.url()).pathname, settings, 'the address is kept');
  // The provider remembers the user and the consent: straight back, to the settings.
  await page.getByRole('button', { name: /^Sign in with / }).click();
  await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
  t.equal(new URL(page.url()).pathname, settings, 'back on the page the user was on');
  t.equal(await page.getByLabel('Workspace name').inputValue(), 'Ada’s');
  // The expired token's 401 is the browser's console line for a failed request: the only one allowed.
  t.same(herald(problems).filter((p) => !/status of 401/.test(p)), [], 'no console errors');
});

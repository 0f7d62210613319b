// Signing in to the dashboard in a real browser, on the embedded default: the link `npm
// start` prints, a pasted token (a refused one first), signing out, and a session that
// expires mid-use, which brings back the sign-in page and then the page the user was on.
import t from 'tap';
import { decodeJwt } from 'jose';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually, startServer } from '../helpers/server.js';
import { checkPage, launch, openPage } from '../helpers/browser.js';

const browser = await launch(t);
const s = await startServer({ HERALD_AUTH_SECRET: undefined });
t.teardown(() => s.stop());
// Printed just after the line the harness waits for.
const link = (await eventually(async () => /^Sign in to the dashboard: (\S+)$/m.exec(s.stdout())))![1]!;
const token = new URL(link).hash.slice('#token='.length);
const workspaceId = /^Default workspace: (\S+)$/m.exec(s.stdout())![1]!;
/** When a session token's `exp` passes, in ms. */
const expiresAt = (jwt: string): number => decodeJwt(jwt).exp! * 1000;
/** A token for local-admin signed with the secret this Herald generated in its data dir. */
const sessionFor = (ttlSeconds: number) => s.session('local-admin', { ttlSeconds, secret: readFileSync(join(s.dataDir, 'auth-secret'), 'utf8').trim() });

t.test('the printed link signs in and opens the Default workspace', async (t) => {
  const { context, page, problems } = await openPage(browser);
  t.teardown(() => context.close());
  await page.goto(link);
  await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
  const url = new URL(page.url());
  t.equal(url.pathname, `/dashboard/w/${workspaceId}/people`, 'the Default workspace');
  t.equal(url.hash, '', 'the token is gone from the address bar');
  t.equal(await page.evaluate(() => sessionStorage.getItem('herald.session')), token, 'kept in sessionStorage');
  t.equal(await page.getByRole('combobox', { name: 'Workspace' }).inputValue(), workspaceId, 'the switcher shows it');
  await page.goBack();
  t.equal(page.url(), 'about:blank', 'no history entry holds the token (replaced, not pushed)');
  await page.goForward();
  await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { level: 1, name: 'Sign in to Herald' }).waitFor();
  t.equal(await page.evaluate(() => sessionStorage.getItem('herald.session')), null, 'signing out forgets the token');
  t.same(await checkPage(page, 'sign-in'), [], 'sign-in page: no serious or critical accessibility violations');
  t.same(problems, [], 'no console errors');
});

t.test('a pasted token signs in where the user was going; a refused one says why', async (t) => {
  const { context, page, problems } = await openPage(browser);
  t.teardown(() => context.close());
  await page.goto(`${s.base}/dashboard/w/${workspaceId}/settings`);
  const field = page.getByLabel('Session token');
  await field.fill('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.bad');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'did not accept this token' }).waitFor();
  await field.fill(token);
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
  t.equal(new URL(page.url()).pathname, `/dashboard/w/${workspaceId}/settings`, 'on the page it was opened at');
  t.equal(await page.getByLabel('Workspace name').inputValue(), 'Default');
  // The refused token's 401 is the browser's console line for a failed request: the only one allowed.
  t.same(problems.filter((p) => !/status of 401/.test(p)), [], 'no other console errors');
});

t.test('an expired session brings back sign-in, then the page the user was on', async (t) => {
  const { context, page } = await openPage(browser);
  t.teardown(() => context.close());
  // Long enough for the first page on a slow machine (2 s was not, on CI); then wait out its
  // own `exp` (whole seconds) rather than a fixed pause.
  const short = await sessionFor(6);
  await page.goto(`${s.base}/dashboard/#token=${short}`);
  await page.getByRole('heading', { level: 1, name: 'People' }).waitFor();
  await new Promise((r) => setTimeout(r, Math.max(0, expiresAt(short) + 250 - Date.now())));
  await page.getByRole('navigation', { name: 'Workspace pages' }).getByRole('link', { name: 'API keys' }).click();
  await page.getByRole('heading', { level: 1, name: 'Sign in to Herald' }).waitFor();
  t.match(await page.getByRole('status').first().textContent(), /session has ended/, 'says why');
  t.equal(new URL(page.url()).pathname, `/dashboard/w/${workspaceId}/keys`, 'the address is kept');
  await page.getByLabel('Session token').fill(await sessionFor(3600));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  t.pass('back on the API keys page');
});

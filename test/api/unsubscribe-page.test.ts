// The unsubscribe pages at /u/{token} (docs/channels.md): a token has exactly one spelling, and
// the pages carry the dashboard's kind of security headers (no framing, no script, nothing
// loaded from elsewhere). In Chromium at phone width: no console error (not even a favicon's
// 404) and a button a thumb can hit. Each answer is held to the OpenAPI document (text/html).
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { startServer, workspaceWithKeys, type Res } from '../helpers/server.js';
import { launch, openPage } from '../helpers/browser.js';
import { unsubscribeKey, unsubscribeToken } from '../../src/channels/email/unsubscribe.js';

const secretsKey = randomBytes(32);
const s = await startServer({ HERALD_SECRETS_KEY: secretsKey.toString('hex') });
t.teardown(() => s.stop());
const k = await workspaceWithKeys(s, { all: ['*'] }, 'Unsubscribe Co');

/** A person with an email address, and an unsubscribe token of theirs as a sent email carries it. */
async function subscriber(userId: string): Promise<{ token: string; status: () => Promise<string> }> {
  const made = await s.req('POST', '/people', { token: k.all, body: { userId, email: `${userId}@example.com` } });
  if (made.status !== 201) throw new Error(`person create failed: ${made.status} ${made.text}`);
  const token = unsubscribeToken(unsubscribeKey(secretsKey), { workspaceId: k.ws.id, personId: made.body.person.id, messageId: '00000000-0000-4000-8000-000000000000' });
  return { token, status: async () => (await s.req('GET', `/people/${userId}`, { token: k.all })).body.person.status };
}

const page = (token: string) => s.req('GET', `${s.base}/u/${token}`);
const unsubscribe = (token: string) => s.req('POST', `${s.base}/u/${token}`, { raw: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

t.test('a token has one spelling: the 15 others its last character could take are 404, and change nothing', async (t) => {
  const ann = await subscriber('ann');
  const last = BASE64URL.indexOf(ann.token.at(-1)!);
  t.equal(last & 15, 0, 'the last character of a token carries 2 bits and 4 spare zero bits');
  for (let spare = 1; spare < 16; spare++) {
    const other = ann.token.slice(0, -1) + BASE64URL[last | spare];
    t.equal((await page(other)).status, 404, `GET, last character ${other.at(-1)}`);
    t.equal((await unsubscribe(other)).status, 404, `POST, last character ${other.at(-1)}`);
  }
  t.equal(await ann.status(), 'active', 'nobody unsubscribed');
  t.equal((await page(ann.token)).status, 200, 'the token itself is served');
  t.equal((await unsubscribe(ann.token)).status, 200);
  t.equal(await ann.status(), 'unsubscribed');
});

t.test("every page carries the dashboard's kind of security headers", async (t) => {
  const bob = await subscriber('bob');
  const answers: [string, Res][] = [['the page', await page(bob.token)], ['a bad token', await page(`${bob.token.slice(0, -2)}AA`)], ['unsubscribed', await unsubscribe(bob.token)]];
  for (const [what, r] of answers) {
    t.match(r.headers.get('content-type'), /^text\/html/, `${what}: HTML`);
    const csp = r.headers.get('content-security-policy') ?? '';
    t.match(csp, /(^|; )default-src 'none'(;|$)/, `${what}: nothing loads but what the policy names (${csp})`);
    t.match(csp, /(^|; )frame-ancestors 'none'(;|$)/, `${what}: never framed`);
    t.match(csp, /(^|; )form-action 'self'(;|$)/, `${what}: its form posts here only`);
    t.notMatch(csp, /script-src|unsafe-inline/, `${what}: no script, no inline anything unnamed`);
    t.equal(r.headers.get('x-frame-options'), 'DENY', `${what}: X-Frame-Options`);
    t.equal(r.headers.get('x-content-type-options'), 'nosniff', `${what}: nosniff`);
    t.equal(r.headers.get('referrer-policy'), 'no-referrer', `${what}: the token never leaves in a Referer`);
  }
});

t.test('in Chromium at 390 px: no console error, a touch-sized button, one click unsubscribes', async (t) => {
  const cy = await subscriber('cy');
  const browser = await launch(t);
  const { context, page: tab, problems } = await openPage(browser, 390);
  t.teardown(() => context.close());
  // A request the page makes beyond itself (a favicon, a style sheet) would show here.
  const requested: string[] = [];
  tab.on('request', (r) => requested.push(r.url()));
  await tab.goto(`${s.base}/u/${cy.token}`);
  await tab.getByRole('heading', { level: 1, name: 'Unsubscribe from Unsubscribe Co' }).waitFor();
  const button = tab.getByRole('button', { name: 'Unsubscribe' });
  const box = await button.boundingBox();
  t.ok(box && box.height >= 44, `the button is at least 44 px high (${box?.width}×${box?.height})`);
  t.ok(box && box.x >= 0 && box.x + box.width <= 390, 'and within the screen');
  t.equal(await tab.evaluate(() => document.documentElement.scrollWidth), 390, 'no sideways scrolling');
  await tab.waitForTimeout(300); // a favicon is asked for after the load
  await button.click();
  await tab.getByRole('heading', { level: 1, name: 'Unsubscribed' }).waitFor();
  t.equal(await cy.status(), 'unsubscribed');
  t.same(requested.filter((u) => !u.startsWith(`${s.base}/u/`)), [], 'nothing requested beyond the page');
  t.same(problems, [], 'no console error, CSP violation or failed load');
});

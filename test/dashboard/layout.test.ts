// The dashboard's layout at 1280 px and at phone width (390 px), in a real browser against a
// real Herald on the embedded default: the message tables (a person's Messages, a campaign's
// Latest messages) keep Status and "Sent to" on screen with an email whose text part holds a
// long unsubscribe URL, cut long text with the whole of it a click away, say why a skipped
// message was skipped and mark test sends; the header stays compact and reachable at 390 px; the
// campaign page's controls fit the screen.
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { eventually, newKey, newWorkspace, triggerWebhookCampaign } from '../helpers/server.js';
import { checkPage, dashboardSuite, openPage } from '../helpers/browser.js';

const { browser, s, page, problems, h1 } = await dashboardSuite(t);
const ws = await newWorkspace(s, 'Layout');
const key = await newKey(s, ws, { name: 'a key with a rather long name for the trigger', permissions: ['*'] });
const identify = async (userId: string, body: Record<string, unknown>) => {
  const r = await s.req('POST', '/identify', { token: key.key, body: { userId, ...body } });
  if (r.status !== 200) throw new Error(`identify ${userId}: ${r.status} ${r.text}`);
};
await identify('ada', { email: 'ada.lovelace.with.a.long.address@analytical-engine.example.com', phone: '+15017122661', traits: { first_name: 'Ada' } });
// No email, no phone: both of her messages are skipped.
await identify('nobody', { traits: { first_name: 'Nobody' } });
const paragraph = 'A rather long paragraph of text that goes on and on about the product and its many features, well past any column width. '.repeat(8);
const campaignId = await triggerWebhookCampaign(s, ws, key.key, [
  { id: 'email-1', type: 'email', subject: 'Hello {{ person.first_name }}', html: `<p>Hello {{ person.first_name }}</p><p>${paragraph}</p><a href="{{ unsubscribe_url }}">Unsubscribe</a>` },
  { id: 'sms-1', type: 'sms', body: 'Hi {{ person.first_name }}' },
]);
const messagesOf = async () => (await s.req('GET', `/workspaces/${ws.id}/campaigns/${campaignId}/messages`, { token: ws.token })).body.messages as { status: string; external_id: string; channel: string }[];
if (!(await eventually(async () => (await messagesOf()).filter((m) => m.status !== 'scheduled').length === 4, 15_000))) throw new Error("the campaign's four messages were not recorded");
const ada = (await s.req('GET', `/workspaces/${ws.id}/people?search=ada`, { token: ws.token })).body.people[0].id as string;
const test = await s.req('POST', `/workspaces/${ws.id}/campaigns/${campaignId}/test-send`, { token: ws.token, body: { node_id: 'email-1', person_id: ada } });
if (test.status !== 200) throw new Error(`the test send to Ada: ${test.status} ${test.text}`);

/**
 * The message table `name` at this page's width: no sideways scrolling of the page, every row's
 * Status cell and "Sent to" cell inside the viewport and inside the table's own box (not
 * scrolled out of it), and each row no taller than `tallest` px (long text cut).
 */
async function fits(t: Test, p: Page, name: RegExp, what: string) {
  const table = p.getByRole('table', { name });
  await table.waitFor();
  const got = await table.evaluate((el) => {
    const box = el.closest('.table-wrap')!.getBoundingClientRect();
    const heads = [...el.querySelectorAll('thead th')].map((h) => h.textContent);
    const rows = [...el.querySelectorAll('tbody tr')];
    const inside = (c: Element | undefined) => {
      if (!c) return false;
      const r = c.getBoundingClientRect();
      return r.left >= Math.max(0, box.left) - 1 && r.right <= Math.min(innerWidth, box.right) + 1;
    };
    return {
      page: document.documentElement.scrollWidth <= innerWidth,
      status: rows.every((r) => inside(r.children[heads.indexOf('Status')])),
      sentTo: rows.every((r) => inside(r.children[heads.indexOf('Sent to')])),
      tallest: Math.max(...rows.map((r) => r.getBoundingClientRect().height)),
    };
  });
  t.ok(got.page, `${what}: the page does not scroll sideways`);
  t.ok(got.status, `${what}: every Status cell is on screen`);
  t.ok(got.sentTo, `${what}: every "Sent to" cell is on screen`);
  t.ok(got.tallest < 400, `${what}: long text is cut (tallest row ${Math.round(got.tallest)} px)`);
}

/** The rows of table `name`: the skipped ones say why; test sends are marked, the campaign's own are not; a long text part is shown whole on demand. */
async function rows(t: Test, p: Page, name: RegExp, what: string, tests: number) {
  const table = p.getByRole('table', { name });
  const skipped = table.getByRole('row').filter({ hasText: 'skipped' });
  t.equal(await skipped.count(), 2, `${what}: two skipped messages`);
  for (const reason of ['no email address', 'no phone number']) {
    t.ok(await skipped.filter({ hasText: reason }).first().isVisible(), `${what}: a skipped row says why (${reason})`);
  }
  t.equal(await table.getByText('Test send', { exact: true }).count(), tests, `${what}: the test sends are marked, the campaign's own messages are not`);
  const row = table.getByRole('row').filter({ hasText: 'analytical-engine' }).first();
  const more = row.getByRole('button', { name: /Show the whole message/ });
  t.equal(await more.getAttribute('aria-expanded'), 'false', `${what}: the long text part is cut, with a button to show it whole`);
  await more.click();
  t.equal(await more.getAttribute('aria-expanded'), 'true', `${what}: expanded`);
  t.ok(await row.getByText(/\/u\/[A-Za-z0-9_-]{20,}/).isVisible(), `${what}: the whole text, its unsubscribe URL included, is shown`);
  await more.click();
}

for (const width of [1280, 390]) {
  t.test(`at ${width} px: the person's messages and the campaign's latest messages`, async (t) => {
    const { context, page: p, problems: pageProblems } = await openPage(browser, width);
    t.teardown(() => context.close());
    context.setDefaultTimeout(10_000);
    await p.goto(`${s.base}/dashboard/w/${ws.id}/people/${ada}#token=${ws.token}`);
    await p.getByRole('heading', { level: 1, name: 'Ada' }).waitFor();
    const mine = /^Messages, newest first/;
    // Her email and SMS, and the test email.
    await p.getByRole('table', { name: mine }).locator('tbody tr').nth(2).waitFor();
    await fits(t, p, mine, `Ada's messages at ${width} px`);
    const theirs = p.getByRole('table', { name: mine });
    t.equal(await theirs.getByText('Test send', { exact: true }).count(), 1, `at ${width} px: Ada's test email is marked as a test`);
    t.same(await checkPage(p, `layout-person-${width}`), [], 'no serious or critical accessibility violations');

    await p.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/${campaignId}`);
    await p.getByRole('heading', { level: 1, name: 'Mail' }).waitFor();
    const latest = /The campaign's latest \d+ messages/;
    // Two people's email and SMS, and the test email.
    await p.getByRole('table', { name: latest }).locator('tbody tr').nth(4).waitFor();
    await fits(t, p, latest, `the campaign's latest messages at ${width} px`);
    await rows(t, p, latest, `the campaign's latest messages at ${width} px`, 1);
    await fits(t, p, latest, `the campaign's latest messages at ${width} px, after showing a text whole`);
    t.same(await checkPage(p, `layout-campaign-${width}`), [], 'no serious or critical accessibility violations');
    t.same(pageProblems, [], 'no console errors');
  });
}

t.test('at 390 px: the header is compact and stays reachable; the campaign page fits', async (t) => {
  const { context, page: p, problems: pageProblems } = await openPage(browser, 390);
  t.teardown(() => context.close());
  context.setDefaultTimeout(10_000);
  await p.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/${campaignId}#token=${ws.token}`);
  await p.getByRole('heading', { level: 1, name: 'Mail' }).waitFor();
  await p.waitForLoadState('networkidle');
  const header = p.locator('header.top');
  const height = (await header.boundingBox())!.height;
  t.ok(height <= 100, `the header takes one or two rows (${Math.round(height)} px)`);
  // The API key select of the webhook trigger's curl: inside the screen.
  const select = await p.getByLabel('API key', { exact: true }).boundingBox();
  t.ok(select && select.x >= 0 && select.x + select.width <= 390, `the API key select fits the screen (right edge ${select && Math.round(select.x + select.width)} px)`);
  t.ok(await p.evaluate(() => document.documentElement.scrollWidth <= innerWidth), 'no sideways scrolling');

  // Far down the page the header is still on screen, and its menu opens the workspace's pages.
  await p.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  t.ok(await p.evaluate(() => window.scrollY > 1000), 'scrolled far down');
  // boundingBox() is relative to the viewport.
  t.ok(Math.abs((await header.boundingBox())!.y) <= 1, 'the header is still at the top of the screen');
  const menu = p.getByRole('button', { name: 'Menu' });
  t.equal(await menu.getAttribute('aria-expanded'), 'false', 'the pages are behind a menu button');
  await menu.click();
  t.equal(await menu.getAttribute('aria-expanded'), 'true', 'the menu opens');
  await p.getByRole('navigation', { name: 'Workspace pages' }).getByRole('link', { name: 'Settings' }).click();
  await p.getByRole('heading', { level: 1, name: 'Settings' }).waitFor();
  t.equal(await menu.getAttribute('aria-expanded'), 'false', 'choosing a page closes the menu');
  t.same(await checkPage(p, 'layout-header-390'), [], 'no serious or critical accessibility violations');
  await menu.click();
  t.same(await checkPage(p, 'layout-menu-390'), [], 'the open menu: no serious or critical accessibility violations');
  t.same(pageProblems, [], 'no console errors');
});

t.test('at 1280 px the pages stay in the header, without a menu button', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/people#token=${ws.token}`);
  await h1('People');
  t.ok(await page.getByRole('navigation', { name: 'Workspace pages' }).getByRole('link', { name: 'Campaigns' }).isVisible(), 'the pages are shown');
  t.notOk(await page.getByRole('button', { name: 'Menu' }).isVisible(), 'no menu button');
  const height = (await page.locator('header.top').boundingBox())!.height;
  t.ok(height <= 60, `one row (${Math.round(height)} px)`);
  t.same(problems, [], 'no console errors');
});

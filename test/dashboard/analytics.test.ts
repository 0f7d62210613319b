// The Analytics page in a real browser against a real Herald (docs/analytics.md): reached from
// Events (the header keeps one row at 1280 px); the daily chart drawn by uPlot, fetched only
// when the page opens, with its accessible name and the same numbers in a table; another event
// typed in; a funnel as labelled bars and a table with its rates; a bad window refused at its
// field. Each state gets an accessibility scan, also at 390 px, and no page may log a console
// error other than the refusal the test provokes.
import t from 'tap';
import { eventually, newKey, newWorkspace } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';

t.setTimeout(300_000);
const { browser, s, page, problems, visited, scan, h1 } = await dashboardSuite(t);
const ws = await newWorkspace(s, 'Analytics');
const key = await newKey(s, ws, { permissions: ['*'] });

// Two UTC days inside the page's default range (the last 30 days).
const dayOf = (ago: number) => new Date(Date.now() - ago * 86_400_000).toISOString().slice(0, 10);
const [early, late] = [dayOf(3), dayOf(1)];
const DATA: [string, string, string][] = [
  ['ann', 'signed_up', `${early}T10:00:00.000Z`],
  ['ann', 'purchase_completed', `${early}T11:00:00.000Z`],
  ['bob', 'signed_up', `${early}T12:00:00.000Z`],
  ['cy', 'signed_up', `${late}T09:00:00.000Z`],
  ['cy', 'purchase_completed', `${late}T10:00:00.000Z`],
];
const tracked = await s.req('POST', '/track/batch', { token: key.key, body: { events: DATA.map(([userId, event, timestamp]) => ({ userId, event, timestamp })) } });
if (tracked.status !== 201) throw new Error(tracked.text);
const daily = () => s.req('GET', `/workspaces/${ws.id}/analytics/events?event=purchase_completed&from=${early}&to=${late}`, { token: ws.token });
if (!(await eventually(async () => (await daily()).body?.total?.count === 2, 20_000))) throw new Error('the events were not readable');

// Which scripts the browser fetched: uPlot's chunk only once a chart is drawn.
const scripts: string[] = [];
page.on('request', (r) => r.resourceType() === 'script' && scripts.push(r.url()));

t.test('from Events to Analytics: the daily chart and its table', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/events#token=${ws.token}`);
  await h1('Events');
  t.notOk(scripts.some((u) => /uPlot/i.test(u)), 'uPlot is not fetched before a chart is drawn');
  await page.getByRole('link', { name: 'Analytics', exact: true }).click();
  await h1('Analytics');
  const table = page.getByRole('table', { name: /^Daily signed_up/ });
  await table.waitFor();
  t.equal(await table.getByRole('row').filter({ hasText: early }).locator('td').allTextContents().then((c) => c.join('|')), `${early}|2|2`, 'two sign-ups by two people on the early day');
  t.equal(await table.getByRole('row').filter({ hasText: late }).locator('td').allTextContents().then((c) => c.join('|')), `${late}|1|1`);
  t.equal(await table.getByRole('row', { name: /Whole range/ }).locator('td').allTextContents().then((c) => c.join('|')), '3|3', 'the whole range');
  t.equal(await table.getByRole('row').count(), 32, 'every day of the last 30, the header and the total');
  const chart = page.getByRole('img', { name: /Chart of daily signed_up events/ });
  await chart.locator('canvas').waitFor();
  t.ok(scripts.some((u) => /uPlot/i.test(u)), 'uPlot was fetched to draw it');
  await scan(t, 'analytics-daily');

  await page.getByLabel('Event', { exact: true }).fill('purchase_completed');
  await page.getByRole('button', { name: 'Show', exact: true }).click();
  const purchases = page.getByRole('table', { name: /^Daily purchase_completed/ });
  await purchases.waitFor();
  t.equal(await purchases.getByRole('row', { name: /Whole range/ }).locator('td').allTextContents().then((c) => c.join('|')), '2|2', 'another event');
  t.ok(await page.getByRole('img', { name: /Chart of daily purchase_completed/ }).isVisible(), 'its chart, named for it');
});

t.test('a funnel: bars with their names, a table with rates; a bad window refused at its field', async (t) => {
  await page.getByRole('button', { name: 'Show funnel' }).click();
  const table = page.getByRole('table', { name: /^Funnel within 7d/ });
  await table.waitFor();
  t.equal(await table.getByRole('row').nth(1).locator('td').allTextContents().then((c) => c.join('|')), '1|signed_up|3|100%|—');
  t.equal(await table.getByRole('row').nth(2).locator('td').allTextContents().then((c) => c.join('|')), '2|purchase_completed|2|66.7%|66.7%');
  const bars = page.getByRole('list', { name: /Funnel chart/ });
  t.equal(await bars.getByRole('progressbar').count(), 2);
  t.ok(await bars.getByRole('progressbar', { name: 'Step 2, purchase_completed: 2 people, 66.7% of step 1' }).isVisible(), 'each bar says what it shows');
  await scan(t, 'analytics-funnel');

  await page.getByRole('button', { name: 'Add a step' }).click();
  await page.getByRole('combobox', { name: 'Step 3' }).fill('subscription_started');
  await page.getByLabel('Window').fill('1w');
  await page.getByRole('button', { name: 'Show funnel' }).click();
  const invalid = page.getByLabel('Window');
  await page.getByText('must be a duration like 30m, 12h or 7d, at most 90d').first().waitFor();
  t.equal(await invalid.getAttribute('aria-invalid'), 'true', 'the window is marked');
  await invalid.fill('1h');
  await page.getByRole('button', { name: 'Show funnel' }).click();
  const hour = page.getByRole('table', { name: /^Funnel within 1h/ });
  await hour.waitFor();
  t.equal(await hour.getByRole('row').nth(3).locator('td').allTextContents().then((c) => c.join('|')), '3|subscription_started|0|0%|0%', 'a third step nobody took');
  await scan(t, 'analytics-three-steps');
});

t.test('at 390 px, and no other console errors', async (t) => {
  await checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${ws.token}`, visited);
  const refused = problems.filter((p) => /status of 400 .*\/analytics\/funnel/.test(p));
  t.equal(refused.length, 1, 'the bad window was refused once');
  t.same(problems.filter((p) => !refused.includes(p)), [], 'no other console errors');
});

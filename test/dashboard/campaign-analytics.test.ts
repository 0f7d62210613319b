// A campaign's analytics page in a real browser against a real Herald on the embedded default:
// a campaign sent through the email sandbox (one of four bounces, one complains), clicks
// recorded on its messages as callbacks record them; the page is reached from the campaign
// page and shows the funnel, the bounce and complaint warnings, the chart by its accessible
// name with its table, the links, and downloads the CSV. Scanned at 1280 px and at 390 px.
import t from 'tap';
import pg from 'pg';
import { readFileSync } from 'node:fs';
import { eventually, newKey, newWorkspace, storeUrl, triggerWebhookCampaign } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';

const { browser, s, page, problems, scan, visited, h1 } = await dashboardSuite(t);
const ws = await newWorkspace(s, 'Analytics');
const key = await newKey(s, ws, { name: 'server', permissions: ['*'] });
for (const [userId, email] of [['b', 'bounce@simulator.herald.test'], ['c', 'complaint@simulator.herald.test'], ['ada', 'ada@example.com'], ['grace', 'grace@example.com']]) {
  const r = await s.req('POST', '/identify', { token: key.key, body: { userId, email } });
  if (r.status !== 200) throw new Error(`identify ${userId}: ${r.status} ${r.text}`);
}
const campaignId = await triggerWebhookCampaign(s, ws, key.key, { id: 'mail', type: 'email', subject: 'News', text: 'Hello' });
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());
const count = async () => Number((await sql.query('SELECT count(*) FROM messages WHERE campaign_id = $1', [campaignId])).rows[0].count);
if (!(await eventually(async () => (await count()) === 4, 30_000))) throw new Error("the campaign's four messages were not recorded");
// Ada opened and clicked, as a provider's callbacks record it.
await sql.query(
  `UPDATE messages SET events = events || $2::jsonb WHERE campaign_id = $1 AND external_id = 'ada'`,
  [campaignId, JSON.stringify([{ type: 'opened', at: new Date().toISOString(), details: {} }, { type: 'clicked', at: new Date().toISOString(), details: { url: 'https://example.com/spring-sale' } }])],
);

t.test('reached from the campaign page: the funnel, the warnings, the chart and its table, the links', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/${campaignId}#token=${ws.token}`);
  await page.getByRole('link', { name: 'Analytics' }).click();
  await h1('Analytics: Mail');

  const funnel = page.getByRole('table', { name: /^Funnel/ });
  const cells = async (step: string) => (await funnel.getByRole('row', { name: new RegExp(`^${step}`) }).getByRole('cell').allTextContents()).map((c) => c.trim());
  await funnel.waitFor();
  t.match(await cells('Sent'), ['4', /100\.0%/, '']);
  t.match(await cells('Delivered'), ['3', /75\.0%/, /75\.0%/], 'a complaint came from a delivered message');
  t.match(await cells('Opened'), ['1', /25\.0%/, /33\.3%/]);
  t.match(await cells('Clicked'), ['1', /25\.0%/, /100\.0%/]);

  const alerts = page.getByRole('alert');
  await alerts.filter({ hasText: 'The bounce rate is above 2%' }).waitFor();
  t.pass('the bounce warning (1 of 4 bounced), saying what to do');
  t.match(await alerts.filter({ hasText: 'complaint rate is above 0.1%' }).textContent(), /unsubscribe/);
  t.match(await page.getByRole('list', { name: 'Bounce and complaint rates' }).textContent(), /25\.0% bounced \(1 of 4 sent\).*33\.3% complained \(1 of 3 delivered\)/);

  const chart = page.getByRole('img', { name: 'Chart: messages sent, opened and clicked per day, the last 30 days' });
  await chart.waitFor();
  t.equal(await chart.locator('canvas').count(), 1, 'drawn by uPlot');
  await page.getByText("The chart's numbers as a table").click();
  const today = new Date().toISOString().slice(0, 10);
  const row = page.getByRole('table', { name: /sent, opened and clicked per day/ }).getByRole('row', { name: new RegExp(today) });
  t.same((await row.getByRole('cell').allTextContents()).map((c) => c.trim()), ['4', '1', '1'], "today's sends, opens and clicks");
  await page.getByLabel('Counted per').selectOption('hour');
  await page.getByRole('img', { name: 'Chart: messages sent, opened and clicked per hour, the last 7 days' }).waitFor();
  t.pass('per hour, named so');

  const links = page.getByRole('table', { name: /links clicked most/ });
  t.same((await links.getByRole('row').nth(1).getByRole('cell').allTextContents()).map((c) => c.trim()), ['https://example.com/spring-sale', '1', '1']);
  t.match(await page.getByRole('table', { name: /Each channel/ }).getByRole('row', { name: /^Email/ }).textContent(), /Email4/);
  await scan(t, 'campaign-analytics');
});

t.test('the CSV export downloads every message', async (t) => {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  t.equal(download.suggestedFilename(), `campaign-${campaignId}.csv`);
  const lines = readFileSync(await download.path(), 'utf8').split('\r\n');
  t.equal(lines[0], 'message_id,external_id,channel,status,sent_at,delivered,opened,clicked,error');
  t.same(lines.slice(1, -1).map((l) => l.split(',').slice(1, 4).join(' ')).sort(), ['ada email delivered', 'b email bounced', 'c email complained', 'grace email delivered']);
  await page.getByRole('status').filter({ hasText: 'Exported 4 messages.' }).waitFor();
  t.pass('said beside the button');
});

t.test('at 390 px, and nothing went wrong in the console', async (t) => {
  await checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${ws.token}`, visited);
  t.same(problems, [], 'no console errors');
});

// Lists and topics in a real browser against a real Herald (docs/audiences.md): a list created, a
// CSV uploaded from a file (a progress bar, then the import's rows), its row errors shown, its
// members listed and linked to their person; a topic created, and a person's subscription to it
// changed on their page. Each page gets an accessibility scan, also at phone width, and no page
// may log a console error.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uniqueUser } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';

const { browser, s, page, problems, visited, scan, h1, nav, countOf } = await dashboardSuite(t);
const token = await s.session(uniqueUser('aud'));
const ws = await s.req('POST', '/workspaces', { token, body: { name: 'Audiences' } });
const workspaceId: string = ws.body.data?.workspace?.id ?? ws.body.workspace?.id ?? ws.body.data?.id;
const dir = mkdtempSync(join(tmpdir(), 'herald-csv-'));
const csv = join(dir, 'customers.csv');
writeFileSync(csv, 'external_id,email,plan\nann,ann@example.com,pro\nbob,bob@example.com,free\n,,orphan\n');

t.test('lists: create, upload a CSV with progress, the import and its errors, the members', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${workspaceId}/lists#token=${token}`);
  await h1('Lists');
  await page.getByText('No lists yet.').waitFor();
  await scan(t, 'lists-empty');
  await page.getByLabel('List name').fill('Customers');
  await page.getByRole('button', { name: 'Create list' }).click();
  await h1('Customers');
  await page.getByLabel('CSV file').setInputFiles(csv);
  await page.getByRole('button', { name: 'Import' }).click();
  await page.getByText('customers.csv uploaded').waitFor();
  await page.getByRole('cell', { name: 'done' }).waitFor({ timeout: 20_000 });
  await page.getByText('1 row errors').click();
  await page.getByText('Row 3: has neither an external_id nor an email').waitFor();
  await page.getByText('2 members').waitFor();
  t.equal(await countOf(page.getByRole('table', { name: 'Members' }).getByRole('row'), 3), 3, 'a header and two members');
  await scan(t, 'list');
  await nav('Lists');
  await h1('Lists');
  await page.getByRole('link', { name: 'Customers' }).waitFor();
  await scan(t, 'lists');
});

t.test("topics: create one, then change a person's subscription on their page", async (t) => {
  await nav('Topics');
  await h1('Topics');
  await page.getByText('No topics yet.').waitFor();
  await page.getByLabel('Topic name').fill('Product news');
  await page.getByLabel('Opted out (not sent to)').check();
  await page.getByRole('button', { name: 'Create topic' }).click();
  await page.getByRole('cell', { name: 'Product news', exact: true }).waitFor();
  await scan(t, 'topics');
  await nav('Lists');
  await page.getByRole('link', { name: 'Customers' }).click();
  await page.getByRole('link', { name: 'ann', exact: true }).click();
  await page.getByRole('heading', { name: 'Subscriptions' }).waitFor();
  const box = page.getByRole('checkbox', { name: 'Product news' });
  await box.waitFor();
  t.equal(await box.isChecked(), false, 'opted out by default');
  await box.check();
  await page.getByText('Subscribed to Product news.').waitFor();
  const personId = /\/people\/([^/]+)$/.exec(page.url())![1]!;
  const r = await s.req('GET', `/workspaces/${workspaceId}/people/${personId}/subscriptions`, { token });
  t.same(Object.values(r.body.subscriptions), [true], 'saved');
  await scan(t, 'person-subscriptions');
});

t.test('at phone width, and no console errors', async (t) => {
  await checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${token}`, visited);
  t.same(problems, [], 'no console errors');
});

// The Webhooks page in a real browser against a real Herald and a receiver run here, which
// verifies every delivery with the `standardwebhooks` package: an endpoint created with the
// event-type picker, its secret shown once and copied, a test event arriving, the attempts
// with their answers, a failed one resent (the same webhook-id arrives again), disable and
// enable (the page is linked from the API keys page); an accessibility scan at 1280 px and at phone width, no console errors.
import t from 'tap';
import { uniqueUser } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';
import { receiver } from '../helpers/webhook-receiver.js';
import { ownDatabase } from '../helpers/database.js';

// One retry a second after a failure, then failed: a resendable attempt within seconds.
const { browser, s, context, page, problems, visited, scan, h1, nav, countOf } = await dashboardSuite(t, { ...(await ownDatabase(t)), HERALD_WEBHOOK_RETRY_SCHEDULE: '1s' });
const token = await s.session(uniqueUser('hooks'));
await context.grantPermissions(['clipboard-read', 'clipboard-write']);
const created = await s.req('POST', '/workspaces', { token, body: { name: 'Hooks' } });
const workspaceId = created.body.data.workspace.id as string;
const r = await receiver(t);

t.test('create with the picker, the secret once, a test event, attempts, resend, disable', async (t) => {
  await page.goto(`${s.base}/dashboard/#token=${token}`);
  await h1('People');
  await nav('API keys');
  await h1('API keys');
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await h1('Webhooks');
  await page.getByText('No webhook endpoints yet.').waitFor();
  await scan(t, 'webhooks-empty');

  await page.getByLabel('URL').fill(r.url);
  await page.getByLabel('Description (optional)').fill('CRM');
  await page.getByRole('checkbox', { name: 'person.created' }).check();
  await page.getByRole('checkbox', { name: 'message.sent' }).check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secretBox = page.getByRole('textbox', { name: 'Signing secret' });
  await secretBox.waitFor();
  const secret = await secretBox.inputValue();
  t.match(secret, /^whsec_/, 'the secret is shown');
  await page.getByRole('button', { name: 'Copy', exact: true }).click();
  await page.getByText('Copied.').waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'and copied');
  r.secrets.push(secret);
  await scan(t, 'webhooks-new');
  await page.getByRole('button', { name: 'Done' }).click();
  t.notOk(await page.getByRole('textbox', { name: 'Signing secret' }).isVisible(), 'gone once done');
  const rows = page.getByRole('table', { name: 'Webhook endpoints' }).getByRole('row');
  t.equal(await countOf(rows, 2), 2, 'the endpoint is listed');
  await page.getByText('person.created, message.sent').waitFor();

  // A test event arrives, verified; its attempt is shown.
  await page.getByRole('button', { name: `Send test to ${r.url}` }).click();
  t.ok(await r.until((ds) => ds.length === 1), 'the test event arrives');
  t.equal(r.deliveries[0]!.event?.type, 'webhook.test');
  t.same(r.deliveries[0]!.verifiedBy, [secret], 'verified with the secret the page showed');
  const attempts = page.getByRole('table', { name: 'Attempts' }).getByRole('row');
  for (let i = 0; i < 20 && (await page.getByText('204 delivered').count()) === 0; i++) {
    await page.getByRole('button', { name: 'Refresh attempts' }).click();
    await page.waitForTimeout(250);
  }
  await page.getByText('204 delivered').waitFor();
  await scan(t, 'webhooks-attempts');

  // A failing receiver: the test event is tried twice, then failed; resent from the page, it arrives with the same webhook-id.
  r.answer = () => 500;
  await page.getByRole('button', { name: `Send test to ${r.url}` }).click();
  t.ok(await r.until((ds) => ds.length === 3, 10_000), 'tried, then retried');
  const failedId = r.deliveries[1]!.id;
  for (let i = 0; i < 20 && (await page.getByText('none: failed').count()) === 0; i++) {
    await page.getByRole('button', { name: 'Refresh attempts' }).click();
    await page.waitForTimeout(250);
  }
  t.equal(await countOf(attempts, 4), 4, 'three attempts listed, newest first');
  t.match(await attempts.nth(1).textContent(), /HTTP 500.*none: failed/, 'the last shows its answer and no next retry');
  t.match(await attempts.nth(2).textContent(), /HTTP 500/, 'the first retry shows its next retry time');
  r.answer = () => 200;
  await page.getByRole('button', { name: /^Resend webhook.test attempt 2/ }).click();
  await page.getByText(/is queued again/).waitFor();
  t.ok(await r.until((ds) => ds.length === 4), 'resent');
  t.equal(r.deliveries[3]!.id, failedId, 'with the same webhook-id');

  // Disable and enable.
  await page.getByRole('button', { name: `Disable ${r.url}` }).click();
  await page.getByRole('button', { name: `Enable ${r.url}` }).waitFor();
  const state = await s.req('GET', `/workspaces/${workspaceId}/webhooks`, { token });
  t.equal(state.body.data.endpoints[0].enabled, false, 'disabled in Herald');
  await scan(t, 'webhooks');
  await page.getByRole('button', { name: `Enable ${r.url}` }).click();
  await page.getByRole('button', { name: `Disable ${r.url}` }).waitFor();

  // A refused URL is shown at its field.
  await page.getByLabel('URL').fill('http://10.1.2.3/hook');
  await page.getByRole('checkbox', { name: 'All events' }).check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await page.getByText(/HERALD_ALLOWED_PRIVATE_HOSTS/).first().waitFor();
  t.pass('a private URL is refused at its field');
});

t.test('at phone width, and no console errors but the refusal asked for', async (t) => {
  await checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${token}`, visited.filter((v) => v.name !== 'webhooks-new'));
  const refused = problems.filter((p) => /status of 400/.test(p) && p.includes('/webhooks'));
  t.equal(refused.length, 1, 'the one refusal asked for (the private URL)');
  t.same(problems.filter((p) => !refused.includes(p)), [], 'no other console errors');
});

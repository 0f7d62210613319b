// Campaign authoring in the dashboard, in a real browser against a real Herald on the embedded
// default (its sandbox email and SMS providers deliver): templates, then a campaign of each
// trigger type (webhook, event, schedule, dynamic schedule) built in the builder, refused
// activation shown at the fields Herald names, activated, a step previewed for a person and
// test-sent to them, triggered and watched until its messages are delivered; the campaigns list (filters, search, stats, actions). Each page gets
// an accessibility scan and a screenshot at 1280 px and at phone width; no console errors.
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import { newKey, newWorkspace } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';

// Four campaigns run for real (a schedule waits for its send_at), and every page is scanned twice.
t.setTimeout(600_000);
// A dynamic schedule's audience rescanned every 3 s, not every minute: the trait set after
// activation is found by the next scan (the path this page's reminder goes through).
const { browser, s, page, problems, scan, visited, h1, nav, countOf, visible } = await dashboardSuite(t, { HERALD_DYNAMIC_SCAN_MS: '3000' });
const ws = await newWorkspace(s, 'Campaigns');
const key = await newKey(s, ws, { name: 'server', permissions: ['*'] });

const identify = async (userId: string, body: Record<string, unknown>) => {
  const r = await s.req('POST', '/identify', { token: key.key, body: { userId, ...body } });
  if (r.status !== 200) throw new Error(`identify ${userId}: ${r.status} ${r.text}`);
};
await identify('ada', { email: 'ada@example.com', phone: '+15017122661', traits: { first_name: 'Ada', plan: 'pro' } });
await identify('grace', { email: 'grace@example.com', phone: '+15017122662', traits: { first_name: 'Grace', plan: 'free' } });

/** The builder's step `n` (1-based), as its list item. */
const step = (n: number, type: string) => page.getByRole('listitem', { name: `Step ${n} (${type})` });
/** Waits for the progress table's `channel` row to show `delivered` delivered messages. */
async function deliveredOn(p: Page, channel: 'Email' | 'SMS', delivered: number, timeout = 30_000) {
  const row = p.getByRole('table', { name: /Messages by channel/ }).getByRole('row', { name: new RegExp(`^${channel}`) });
  // Columns: channel, sent, delivered, …
  await p.waitForFunction(
    ([ch, n]) => {
      const rows = [...document.querySelectorAll('table tr')].filter((r) => r.querySelector('th')?.textContent === ch);
      return rows.some((r) => r.querySelectorAll('td')[1]?.textContent === String(n));
    },
    [channel, delivered] as const,
    { timeout },
  );
  return row;
}
/**
 * Step `n`'s preview, rendered by Herald for the person `who` finds (shown as `name`), shows
 * `shows`; then the test send of that step, as saved, to them says `result`.
 */
async function previewAndTestSend(t: Test, n: number, type: 'Email' | 'SMS', who: string, name: string, shows: RegExp, result: RegExp) {
  const s = step(n, type);
  await s.getByRole('button', { name: `Preview of Step ${n} (${type})` }).click();
  await s.getByLabel(`Step ${n} (${type}): preview for: search`).fill(who);
  await s.locator('.rendered').filter({ hasText: shows }).waitFor();
  t.pass(`step ${n} previewed for ${name}`);
  await page.getByLabel('Step', { exact: true }).selectOption({ label: `Step ${n} (${type})` });
  await page.getByLabel('Send to: search').fill(who);
  await page.waitForFunction((name) => {
    const to = [...document.querySelectorAll('select')].find((x) => x.labels?.[0]?.textContent === 'Send to');
    return to?.options.length === 1 && to.selectedOptions[0]?.textContent?.includes(name);
  }, name);
  await page.getByRole('button', { name: 'Send the test' }).click();
  await page.getByRole('status').filter({ hasText: result }).waitFor();
  t.pass(`the test ${type} went to ${name}, its result shown`);
}
const campaignIdOf = (p: Page) => /campaigns\/([0-9a-f-]{36})$/.exec(new URL(p.url()).pathname)?.[1] ?? '';

await page.goto(`${s.base}/dashboard/w/${ws.id}/people#token=${ws.token}`);
await h1('People');

t.test('campaigns and templates: the empty states', async (t) => {
  await nav('Campaigns');
  await h1('Campaigns');
  await page.getByText('No campaigns yet.').waitFor();
  t.ok(await visible(page.getByRole('link', { name: 'Create your first campaign' })), 'says what to do next');
  await scan(t, 'campaigns-empty');
  await nav('Templates');
  await h1('Templates');
  await page.getByText('No templates yet.').waitFor();
  await scan(t, 'templates-empty');
});

t.test('templates: an SMS template created, a Liquid error at its field, edited', async (t) => {
  await page.getByRole('link', { name: 'New template' }).click();
  await h1('New template');
  await page.getByLabel('Name', { exact: true }).fill('Welcome SMS');
  await page.getByLabel('Channel').selectOption('sms');
  await page.getByLabel('Body').fill('Hi {{ person.first_name }, welcome');
  // The live preview names the Liquid error's line at the field.
  await page.getByText(/line:1/).first().waitFor();
  t.equal(await page.getByLabel('Body').getAttribute('aria-invalid'), 'true', 'the Liquid error is shown at the body, with its line');
  await page.getByLabel('Body').fill('Hi {{ person.first_name }}, welcome to {{ trigger.product | default: "Herald" }}');
  await page.getByLabel('Preview for: search').fill('ada');
  await page.locator('.bubble').filter({ hasText: 'Hi Ada, welcome to Herald' }).waitFor();
  t.pass("the SMS rendered by Herald for the person picked");
  await page.getByRole('button', { name: 'Create template' }).click();
  await h1('Welcome SMS');
  await scan(t, 'template-editor');

  // An email template: the html in a sandboxed frame, the text part beside it.
  await page.goto(`${s.base}/dashboard/w/${ws.id}/templates/new?channel=email`);
  await h1('New template');
  await page.getByLabel('Name', { exact: true }).fill('Digest email');
  await page.getByLabel('Subject').fill('Your week, {{ person.first_name }}');
  await page.getByLabel('HTML').fill('<h1>Hello {{ person.first_name }}</h1>\n<p>Line two</p>\n<p>{{ person.nope | bad_filter }}</p>');
  await page.getByLabel('Preview for: search').fill('grace');
  await page.getByText(/line:3/).first().waitFor();
  t.equal(await page.getByLabel('HTML').getAttribute('aria-invalid'), 'true', 'an error on line 3 of the html, at the html');
  // An inline style and a remote image show as a mail app shows them (the dashboard's own CSP would block both).
  const logo = `${s.base}/dashboard/favicon.svg`;
  await page.getByLabel('HTML').fill(`<h1 style="color: rgb(200, 0, 0)">Hello {{ person.first_name }}</h1><img alt="logo" width="32" height="32" src="${logo}"><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>`);
  const frame = page.getByTitle("The email's HTML part as rendered");
  t.equal(await frame.getAttribute('sandbox'), 'allow-scripts', 'the preview frame is sandboxed without same-origin');
  const email = page.frameLocator('iframe[title="The email\'s HTML part as rendered"]').frameLocator('iframe');
  await email.locator('h1').filter({ hasText: 'Hello Grace' }).waitFor();
  t.pass('the frame shows the html rendered for Grace');
  t.equal(await email.locator('h1').evaluate((h) => getComputedStyle(h).color), 'rgb(200, 0, 0)', 'its inline style applies');
  t.ok(
    await email.locator('img').evaluate((img: HTMLImageElement) =>
      img.complete ? img.naturalWidth > 0 : new Promise<boolean>((r) => {
        img.addEventListener('load', () => r(true), { once: true });
        img.addEventListener('error', () => r(false), { once: true });
      })),
    'its remote image loads',
  );
  t.equal(await page.frameLocator('iframe[title="The email\'s HTML part as rendered"]').locator('iframe').getAttribute('sandbox'), '', 'the email itself runs no script');
  t.equal(await page.evaluate(() => { try { return (document.querySelector('iframe') as HTMLIFrameElement).contentDocument === null; } catch { return true; } }), true, 'the frame cannot be reached from the dashboard (nor it the dashboard): no same origin');
  t.match(await page.getByRole('region', { name: "The email's text part as rendered" }).textContent(), /HELLO GRACE|Hello Grace/, 'the text part derived from the html beside it');
  await page.getByRole('button', { name: 'Create template' }).click();
  await h1('Digest email');
  await scan(t, 'template-email');
  await page.getByRole('link', { name: '← Templates' }).click();
  await page.getByRole('cell', { name: 'Welcome SMS', exact: true }).waitFor();
  await page.getByRole('cell', { name: 'Digest email', exact: true }).waitFor();
  await page.getByRole('navigation', { name: 'Channels' }).getByRole('link', { name: 'Push' }).click();
  await page.getByText('No Push templates yet.').waitFor();
  await page.getByRole('navigation', { name: 'Channels' }).getByRole('link', { name: 'Email' }).click();
  t.equal(await countOf(page.getByRole('table', { name: 'Templates' }).getByRole('row'), 2), 2, 'a header and the email template');
  t.ok(await visible(page.getByRole('cell', { name: 'Digest email', exact: true })), 'the channel tabs filter the list');
  await page.getByRole('navigation', { name: 'Channels' }).getByRole('link', { name: 'All' }).click();
  await page.getByRole('cell', { name: 'Welcome SMS', exact: true }).waitFor();
  await scan(t, 'templates');
});

t.test('webhook campaign: built, refused activation at its fields, activated, triggered, watched', async (t) => {
  await nav('Campaigns');
  await h1('Campaigns');
  await page.getByRole('link', { name: 'Create your first campaign' }).click();
  await h1('New campaign');
  await page.getByLabel('Name', { exact: true }).fill('Pro launch');
  await page.getByRole('radio', { name: /^Webhook/ }).check();
  await page.getByText('Save the campaign to get its trigger URL').waitFor();
  // Audience: pro people only.
  await page.getByRole('button', { name: 'Add audience condition' }).click();
  await page.getByLabel('Audience condition 1: field').fill('traits.plan');
  await page.getByLabel('Audience condition 1: value').fill('pro');
  // Workflow: the push step goes; an email (no subject yet), a delay, an SMS from the template.
  await page.getByRole('button', { name: 'Remove step 1' }).click();
  await page.getByRole('button', { name: 'Add Email' }).click();
  await step(1, 'Email').getByLabel('Step 1 (Email): HTML').fill('<p>Hello {{ person.first_name }}</p>');
  await page.getByRole('button', { name: 'Add a delay' }).click();
  await page.getByRole('button', { name: 'Add SMS' }).click();
  await step(3, 'SMS').getByRole('radio', { name: 'From a template' }).check();
  t.equal(await step(3, 'SMS').getByLabel('Step 3 (SMS): template').inputValue() !== '', true, 'the SMS template is picked');
  // The delay moves last with the keyboard-usable buttons, then is removed.
  await page.getByRole('button', { name: 'Move step 2 down' }).click();
  t.ok(await visible(step(3, 'Delay')), 'the delay moved down');
  await page.getByRole('button', { name: 'Remove step 3' }).click();
  t.equal(await countOf(page.locator('ol.nodes > li'), 2), 2, 'two steps left');
  // The warning before activating: the html has no unsubscribe link.
  await page.getByRole('note', { name: 'Warnings' }).getByText(/no \{\{ unsubscribe_url \}\} link/).waitFor();
  t.pass('the missing unsubscribe link is warned of before activating');

  await page.getByRole('button', { name: 'Save as draft' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved as a draft.' }).waitFor();
  const id = campaignIdOf(page);
  t.match(id, /^[0-9a-f-]{36}$/, 'the address names the new campaign');
  // The curl for the chosen key, with an Idempotency-Key.
  const curl = page.getByRole('region', { name: 'The curl that triggers this campaign' });
  await page.getByLabel('Idempotency-Key').fill('launch-1');
  const text = await curl.textContent();
  t.match(text, `${s.base}/api/v1/campaigns/${id}/trigger`, 'the trigger URL');
  t.match(text, `Idempotency-Key: launch-1`, 'the Idempotency-Key chosen');
  t.match(text, `Bearer ${key.key_prefix}`, "the selected key's prefix");
  t.match(text, `"workspace_id":"${ws.id}"`, 'the workspace in the body');

  // Activation refused: the email has no subject; shown at that field.
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByRole('alert').filter({ hasText: 'The campaign cannot be activated' }).waitFor();
  const subject = step(1, 'Email').getByLabel('Step 1 (Email): Subject');
  t.equal(await subject.getAttribute('aria-invalid'), 'true', 'the subject is marked');
  t.ok(await visible(step(1, 'Email').getByText('a subject is needed')), 'what is wrong is beside it');
  await scan(t, 'campaign-activation-failed');

  await subject.fill('Welcome, {{ person.first_name }}');
  await step(1, 'Email').getByLabel('Step 1 (Email): HTML').fill('<p>Hello {{ person.first_name }}</p><a href="{{ unsubscribe_url }}">Unsubscribe</a>');
  await page.getByRole('note', { name: 'Warnings' }).waitFor({ state: 'detached' });
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByRole('status').filter({ hasText: 'Activated' }).waitFor();
  const audience = page.getByLabel('Audience preview');
  await audience.getByText('1 person matches now.').waitFor();
  t.ok(await visible(audience.getByRole('link', { name: 'Ada' })), 'the audience count and its sample');

  // The email step previewed for, and test-sent to, Grace (outside the audience): its result is shown with her address.
  await previewAndTestSend(t, 1, 'Email', 'grace', 'Grace', /Subject: Welcome, Grace/, /Test Email: (sent|delivered) to grace@example.com/);
  t.equal((await s.req('GET', `/campaigns/${id}`, { token: ws.token, headers: { 'X-Workspace-ID': ws.id } })).body.data.campaign.status, 'active', 'active in Herald');

  // The curl's call, as the server would make it: one person (pro) gets an email and an SMS.
  const r = await s.req('POST', `/campaigns/${id}/trigger`, { token: key.key, headers: { 'Idempotency-Key': 'launch-1' }, body: { workspace_id: ws.id, trigger_data: {} } });
  t.equal(r.status, 202, 'triggered');
  await deliveredOn(page, 'Email', 1);
  await deliveredOn(page, 'SMS', 1);
  t.pass('the progress shows the email and the SMS delivered without a reload');
  const latest = page.getByRole('table', { name: /The campaign's latest \d+ messages/ });
  await latest.getByRole('row').filter({ hasText: 'ada@example.com' }).first().waitFor();
  await latest.getByRole('row').filter({ hasText: '+15017122661' }).first().waitFor();
  t.pass("the campaign's latest messages name each person and where their message went");
  await scan(t, 'campaign-webhook');
});

t.test('event campaign: names, filters, a count condition, limits; first_occurrence refused with max_per_user > 1', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/new`);
  await h1('New campaign');
  await page.getByLabel('Name', { exact: true }).fill('Big purchase');
  // Event is the default trigger. The names the workspace has seen are offered.
  t.equal((await s.req('POST', '/track', { token: key.key, body: { event: 'plan_viewed', external_id: 'ada' } })).status, 201);
  // The event reaches the store through the Log: wait until Herald lists its name.
  const seen = async () => ((await s.req('GET', `/workspaces/${ws.id}/event-names`, { token: ws.token })).body?.names ?? []).some((n: { name: string }) => n.name === 'plan_viewed');
  for (let i = 0; i < 100 && !(await seen()); i++) await new Promise((r) => setTimeout(r, 100));
  await page.reload();
  await h1('New campaign');
  await page.getByLabel('Name', { exact: true }).fill('Big purchase');
  await page.getByRole('button', { name: 'Add the event plan_viewed' }).click();
  t.equal(await page.getByLabel('Event names').inputValue(), 'plan_viewed', 'a seen name picked');
  await page.getByLabel('Event names').fill('purchase');
  await page.getByRole('button', { name: 'Add filter' }).click();
  await page.getByLabel('Filter 1: field').fill('parameters.amount');
  await page.getByLabel('Filter 1: operator').selectOption('gte');
  await page.getByLabel('Filter 1: value').fill('100');
  await page.getByRole('button', { name: 'Add filter' }).click();
  await page.getByLabel('Filter 2: operator').selectOption('performed_count_gte');
  await page.getByLabel('Filter 2: event name').fill('purchase');
  await page.getByLabel('Filter 2: times').fill('1');
  await page.getByLabel('Debounce (seconds)').fill('0');
  await page.getByLabel('Max entries per person').fill('2');
  await page.getByLabel('Only the first time a person performs the event').check();
  await page.getByRole('button', { name: 'Remove step 1' }).click();
  await page.getByRole('button', { name: 'Add SMS' }).click();
  await page.getByLabel('Step 1 (SMS): Body').fill('Thanks for your order of {{ event.amount }}, {{ person.first_name }}');
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByText('cannot be combined with max_per_user > 1').first().waitFor();
  t.pass('the first_occurrence problem is shown beside its control');
  await scan(t, 'campaign-event');
  await page.getByLabel('Only the first time a person performs the event').uncheck();
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByRole('status').filter({ hasText: 'Activated' }).waitFor();
  await previewAndTestSend(t, 1, 'SMS', 'grace', 'Grace', /Thanks for your order of .*, Grace/, /Test SMS: (sent|delivered) to \+15017122662/);
  const id = campaignIdOf(page);
  const got = (await s.req('GET', `/campaigns/${id}`, { token: ws.token, headers: { 'X-Workspace-ID': ws.id } })).body.data.campaign.trigger_config;
  t.same(got, {
    event_names: ['purchase'],
    filters: [
      { field: 'parameters.amount', operator: 'gte', value: 100 },
      { field: 'purchase', operator: 'performed_count_gte', value: { count: 1 } },
    ],
    debounce: 0,
    max_per_user: 2,
  }, 'the trigger config as built');

  const track = (amount: number) => s.req('POST', '/track', { token: key.key, body: { event: 'purchase', external_id: 'grace', parameters: { amount } } });
  t.equal((await track(20)).status, 201);
  t.equal((await track(150)).status, 201);
  await deliveredOn(page, 'SMS', 1);
  t.pass('the purchase of 150 sent one SMS, the one of 20 none');
});

t.test('schedule campaign: cron with its next five runs; send_at in a chosen zone, run and completed', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/new`);
  await h1('New campaign');
  await page.getByLabel('Name', { exact: true }).fill('Weekly digest');
  await page.getByRole('radio', { name: /^Schedule/ }).check();
  await page.getByRole('radio', { name: 'Recurring (cron)' }).check();
  await page.getByLabel('Time zone').selectOption('Europe/Paris');
  await page.getByLabel('Cron pattern').fill('0 9 * * 1');
  const runs = page.getByRole('list', { name: 'Next runs' }).getByRole('listitem');
  t.equal(await countOf(runs, 5), 5, 'five next runs');
  t.match(await runs.first().textContent(), /Monday.*9:00.*Europe\/Paris/, 'Mondays at 9:00 in Paris');
  await page.getByLabel('Cron pattern').fill('0 9 * *');
  await page.getByText('Not a cron pattern').waitFor();
  t.pass('a broken pattern is said at once');
  await scan(t, 'campaign-schedule-cron');

  // Once, 20 s from now on Tokyo's clocks.
  await page.getByRole('radio', { name: 'Once, at a date' }).check();
  await page.getByLabel('Time zone').selectOption('Asia/Tokyo');
  const at = new Date(Date.now() + 20_000);
  const tokyo = new Date(at.getTime() + 9 * 3600_000).toISOString().slice(0, 19);
  await page.getByLabel('Send at').fill(tokyo);
  await page.getByText(`That is ${at.toISOString().slice(0, 19)}Z (UTC)`).waitFor();
  t.pass('the instant in UTC is shown');
  await page.getByRole('button', { name: 'Remove step 1' }).click();
  await page.getByRole('button', { name: 'Add Email' }).click();
  await page.getByLabel('Step 1 (Email): Subject').fill('Your digest');
  await page.getByLabel('Step 1 (Email): Text').fill('Hi {{ person.first_name }}');
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByRole('status').filter({ hasText: 'Activated' }).waitFor();
  await page.getByText('scheduled', { exact: true }).first().waitFor();
  await previewAndTestSend(t, 1, 'Email', 'ada', 'Ada', /Subject: Your digest.*Hi Ada/s, /Test Email: (sent|delivered) to ada@example.com/);
  await deliveredOn(page, 'Email', 2);
  await page.locator('.badge.completed').first().waitFor({ timeout: 15_000 });
  t.pass('sent to both people at send_at, then completed, watched without a reload');
  await scan(t, 'campaign-schedule');
});

t.test('dynamic schedule campaign: trait and offset; a person enters a day before their date', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/new`);
  await h1('New campaign');
  await page.getByLabel('Name', { exact: true }).fill('Renewal reminder');
  await page.getByRole('radio', { name: /^Dynamic schedule/ }).check();
  await page.getByLabel("Trait holding each person's date").fill('renewal_date');
  await page.getByLabel('Offset (minutes)').fill('-1440');
  await page.getByRole('button', { name: 'Remove step 1' }).click();
  await page.getByRole('button', { name: 'Add SMS' }).click();
  await page.getByLabel('Step 1 (SMS): Body').fill('Your plan renews tomorrow, {{ person.first_name }}');
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByRole('status').filter({ hasText: 'Activated' }).waitFor();
  await previewAndTestSend(t, 1, 'SMS', 'ada', 'Ada', /Your plan renews tomorrow, Ada/, /Test SMS: (sent|delivered) to \+15017122661/);
  // Ada's renewal is a day and 3 s away: she enters 3 s from now.
  await identify('ada', { traits: { renewal_date: new Date(Date.now() + 86_400_000 + 3_000).toISOString() } });
  // A trait changed after the scan that planned the next date is found by the next scan (3 s here).
  await deliveredOn(page, 'SMS', 1, 30_000);
  t.pass('the reminder went out and is shown');
  await scan(t, 'campaign-dynamic');
});

t.test('the campaigns list: stats, filters, search, duplicate, pause and resume, archive, delete', async (t) => {
  await nav('Campaigns');
  await h1('Campaigns');
  const table = page.getByRole('table', { name: 'Campaigns' });
  t.equal(await countOf(table.getByRole('row'), 5), 5, 'a header and four campaigns');
  const pro = table.getByRole('row', { name: /Pro launch/ });
  await page.waitForFunction(() => [...document.querySelectorAll('tr')].some((r) => r.textContent?.startsWith('Pro launch') && r.querySelectorAll('td')[3]?.textContent === '1'));
  t.match(await pro.textContent(), /Webhook/, 'its trigger');
  await page.getByLabel('Trigger', { exact: true }).selectOption('schedule');
  t.equal(await countOf(table.getByRole('row'), 2), 2, 'the trigger filter');
  await page.getByLabel('Trigger', { exact: true }).selectOption('');
  await page.getByLabel('Status', { exact: true }).selectOption('completed');
  t.equal(await countOf(table.getByRole('row'), 2), 2, 'the status filter');
  await page.getByLabel('Status', { exact: true }).selectOption('');
  await page.getByLabel('Search by name').fill('renewal');
  await page.getByRole('button', { name: 'Search' }).click();
  t.equal(await countOf(table.getByRole('row'), 2), 2, 'the search');
  await page.getByLabel('Search by name').fill('');
  await page.getByRole('button', { name: 'Search' }).click();

  await page.getByRole('button', { name: 'Pause Pro launch' }).click();
  await page.getByRole('button', { name: 'Resume Pro launch' }).waitFor();
  t.pass('paused');
  await page.getByRole('button', { name: 'Resume Pro launch' }).click();
  await page.getByRole('button', { name: 'Pause Pro launch' }).waitFor();
  t.pass('resumed');
  await page.getByRole('button', { name: 'Duplicate Pro launch' }).click();
  await table.getByRole('row', { name: /Pro launch \(copy\)/ }).waitFor();
  t.match(await table.getByRole('row', { name: /Pro launch \(copy\)/ }).textContent(), /draft/, 'the copy is a draft');
  await page.getByRole('button', { name: 'Archive Pro launch (copy)' }).click();
  await page.getByRole('status').filter({ hasText: 'archived' }).waitFor();
  await page.getByRole('button', { name: 'Delete Pro launch (copy)' }).click();
  await table.getByRole('row', { name: /Pro launch \(copy\)/ }).waitFor({ state: 'detached' });
  t.pass('archived, then deleted');
  t.notOk(await page.getByRole('button', { name: 'Delete Pro launch', exact: true }).count(), 'a live campaign offers no delete');
  await scan(t, 'campaigns');
});

t.test('at phone width', async (t) => {
  // The empty states and the send_at variant of the schedule form add nothing at this width.
  const skipped = ['campaign-schedule'];
  await checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${ws.token}`, visited.filter((v) => !v.name.endsWith('-empty') && !skipped.includes(v.name)));
});

t.test('no console errors', async (t) => {
  // The browser logs every 4xx answer; the refusals the flows asked for are the only ones.
  const refused = problems.filter((p) => /status of 400/.test(p));
  // The two refused activations and the previews of the broken templates (once each at least:
  // a preview is asked 400 ms after the last change).
  t.ok(refused.filter((p) => /\/campaigns\//.test(p)).length === 2, 'the email without a subject, first_occurrence with max_per_user 2');
  t.ok(refused.filter((p) => /\/templates\/preview/.test(p)).length >= 2, 'the broken Liquid of the two templates');
  t.same(refused.filter((p) => !/\/campaigns\/|\/templates\/preview/.test(p)), [], 'no other refusal');
  t.same(problems.filter((p) => !refused.includes(p)), [], 'nothing else');
});

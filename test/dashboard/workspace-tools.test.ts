// The dashboard's pages for running a workspace, in a real browser against a real Herald:
// members (list, add, change a role, remove; a refused change says why); the live event
// debugger (new events show without a reload, pause, filter, older pages); an API key's IP
// allowlist (a refused entry at its field, a never-matching one warned of, edited later); push
// token suppressions (empty, add, a second time, paging, lift) and address suppressions (per
// channel, add, a refused number at its field, lift). Each page gets an
// accessibility scan and a screenshot, at 1280 px and at phone width, and no page may log a
// console error.
import t, { type Test } from 'tap';
import { newKey, newWorkspace, startServer } from '../helpers/server.js';
import { checkAtPhoneWidth, checkPage, helpersFor, launch, openPage } from '../helpers/browser.js';

const browser = await launch(t);
const s = await startServer({ HERALD_RATE_LIMITS: 'ip-public=100000:100000,edge=100000:100000,user-dashboard=100000:100000' });
t.teardown(() => s.stop());
const ws = await newWorkspace(s, 'Tools');
const { context, page, problems } = await openPage(browser);
page.on('dialog', (d) => void d.accept());
t.teardown(() => context.close());
const { h1, nav, countOf, visible } = helpersFor(page);
const visited: { name: string; url: string }[] = [];
async function scan(t: Test, name: string) {
  t.same(await checkPage(page, name), [], `${name}: no serious or critical accessibility violations`);
  visited.push({ name, url: page.url() });
}
const roleOf = async (user: string) => {
  const r = await s.req('GET', `/workspaces/${ws.id}/members`, { token: ws.token });
  return (r.body.members as { user_id: string; role: string }[]).find((m) => m.user_id === user)?.role;
};

await page.goto(`${s.base}/dashboard/w/${ws.id}/people#token=${ws.token}`);
await h1('People');

t.test('members: the owner alone, add, change a role, remove', async (t) => {
  await nav('Members');
  await h1('Members');
  await page.getByText('Only the owner so far.').waitFor();
  t.ok(await visible(page.getByRole('cell', { name: ws.owner })), 'the owner is listed');
  await scan(t, 'members-empty');

  await page.getByLabel('User id').fill('grace');
  await page.getByRole('button', { name: 'Add member' }).click();
  await page.getByRole('combobox', { name: 'Role of grace' }).waitFor();
  t.equal(await roleOf('grace'), 'member', 'added as a member');
  await page.getByLabel('User id').fill('linus');
  await page.getByRole('radio', { name: /Admin/ }).check();
  await page.getByRole('button', { name: 'Add member' }).click();
  await page.getByRole('combobox', { name: 'Role of linus' }).waitFor();
  t.equal(await roleOf('linus'), 'admin', 'added as an admin');
  t.equal(await countOf(page.getByRole('table', { name: 'Members' }).getByRole('row'), 4), 4, 'a header and three members');

  await page.getByRole('combobox', { name: 'Role of grace' }).selectOption('admin');
  await page.waitForFunction(() => document.querySelector<HTMLSelectElement>('select[id="role-grace"]')?.value === 'admin');
  t.equal(await roleOf('grace'), 'admin', 'the new role is saved');
  await page.getByLabel('User id').fill(ws.owner);
  await page.getByRole('button', { name: 'Add member' }).click();
  await page.getByRole('alert').filter({ hasText: "The owner's role cannot be changed" }).waitFor();
  t.pass('a refused change says why');
  await scan(t, 'members');

  await page.getByRole('button', { name: 'Remove linus' }).click();
  await page.getByRole('button', { name: 'Remove linus' }).waitFor({ state: 'detached' });
  t.equal(await roleOf('linus'), undefined, 'removed');
});

t.test('events: empty, live, paused, filtered, older pages', async (t) => {
  await nav('Events');
  await h1('Events');
  await page.getByText('No events yet.').waitFor();
  await scan(t, 'events-empty');
  const { key } = await newKey(s, ws, { permissions: ['events:write'] });
  const track = async (event: string, external_id: string, timestamp?: string) =>
    t.equal((await s.req('POST', '/track', { token: key, body: { event, external_id, parameters: { plan: 'pro' }, ...(timestamp ? { timestamp } : {}) } })).status, 201);
  // 55 old ones: more than a page.
  for (let i = 0; i < 55; i++) await track(`old_${i}`, 'ada', new Date(Date.UTC(2024, 0, 1, 0, 0, i)).toISOString());
  const table = page.getByRole('table', { name: 'Events, newest first' });
  await table.getByRole('cell', { name: 'old_54' }).waitFor();
  t.pass('new events show without a reload');
  await track('signed_up', 'grace');
  await table.getByRole('row').nth(1).filter({ hasText: 'signed_up' }).waitFor();
  t.ok(await visible(table.getByRole('link', { name: 'grace' })), 'the person, by external id');
  await scan(t, 'events');

  await page.getByRole('button', { name: 'Pause' }).click();
  await track('while_paused', 'grace');
  await page.waitForTimeout(4000);
  t.equal(await table.getByRole('cell', { name: 'while_paused' }).count(), 0, 'paused: nothing new');
  await page.getByRole('button', { name: 'Resume' }).click();
  await table.getByRole('cell', { name: 'while_paused' }).waitFor();
  t.pass('resumed: it shows');

  await page.getByLabel('Filter by event or person').fill('grace');
  t.equal(await countOf(table.getByRole('row'), 3), 3, 'a header and grace’s two events');
  await page.getByLabel('Filter by event or person').fill('');
  await page.getByRole('button', { name: 'Older events' }).click();
  await page.waitForURL(/before=/);
  await table.getByRole('cell', { name: 'old_0', exact: true }).waitFor();
  t.equal(await countOf(table.getByRole('row'), 8), 8, 'the page after: a header and the 7 oldest');
  await page.getByRole('button', { name: 'Back to live' }).click();
  await table.getByRole('cell', { name: 'while_paused' }).waitFor();
  await table.getByRole('link', { name: 'grace' }).first().click();
  await h1('grace');
  t.pass("a person's link opens their page");
});

t.test("API keys: the IP allowlist at creation and edited, a refused entry at its field", async (t) => {
  await nav('API keys');
  await h1('API keys');
  await page.getByLabel('Name').fill('office');
  await page.getByLabel('people:read', { exact: true }).check();
  const field = page.getByLabel('IP allowlist (optional)');
  await field.fill(`10.0.0.0/8\n${'1'.repeat(70)}`);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.waitForFunction(() => document.querySelector('textarea[aria-invalid="true"]') !== null);
  const described = (await field.getAttribute('aria-describedby'))!.split(' ').at(-1)!;
  t.match(await page.locator(`[id="${described}"]`).textContent(), /^Line 2: .*64/, "the API's message for the entry, at the field");
  await scan(t, 'keys-allowlist-error');
  await field.fill('10.0.0.0/8\nnot-an-ip');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByText(/never match: not-an-ip/).waitFor();
  t.pass('an entry that can never match is warned of');
  t.ok(await visible(page.getByText('from 10.0.0.0/8, not-an-ip')), 'the list shows it');

  await page.getByRole('button', { name: 'IP allowlist of office' }).click();
  const edit = page.getByLabel('Allowed addresses');
  t.equal(await edit.inputValue(), '10.0.0.0/8\nnot-an-ip', 'the current list');
  await edit.fill('192.168.1.0/24, 10.1.2.3');
  await page.getByRole('button', { name: 'Save allowlist' }).click();
  await page.getByText('from 192.168.1.0/24, 10.1.2.3').waitFor();
  const keys = await s.req('GET', `/workspaces/${ws.id}/api-keys`, { token: ws.token });
  t.same(keys.body.api_keys.find((k: { name: string }) => k.name === 'office').ip_whitelist, ['192.168.1.0/24', '10.1.2.3'], 'saved');
  t.equal(await countOf(page.getByText(/never match/), 0), 0, 'no warning left');
  await scan(t, 'keys-allowlist');
});

t.test('suppressions: empty, add, already suppressed, paging, lift', async (t) => {
  await nav('Suppressions');
  await h1('Suppressions');
  await page.getByText('No token is suppressed.').waitFor();
  await scan(t, 'suppressions-empty');
  const token = page.getByLabel('Device token');
  await token.fill('fcm-token-0123456789abcdef');
  await page.getByLabel('Why').selectOption('opt_out');
  await page.getByLabel('Reason (optional)').fill('asked by mail');
  await page.getByRole('button', { name: 'Suppress token' }).click();
  await page.getByText('fcm-***cdef suppressed.').waitFor();
  const table = page.getByRole('table', { name: /Suppressed push tokens/ });
  t.match(await table.getByRole('row').nth(1).textContent(), /fcm-\*\*\*cdef.*android.*opt_out.*asked by mail/, 'listed, masked');
  await token.fill('fcm-token-0123456789abcdef');
  await page.getByRole('button', { name: 'Suppress token' }).click();
  await page.getByText('was suppressed as opt_out already').waitFor();
  t.pass('a second time says so');
  // More than a page, by the key route (the same table).
  const { key } = await newKey(s, ws, { permissions: ['push:send'] });
  for (let i = 0; i < 25; i++) {
    const r = await s.req('POST', `/workspaces/${ws.id}/push/tokens/suppress`, { token: key, body: { device_token: `apns-token-${String(i).padStart(4, '0')}-abcdefgh`, platform: 'ios', suppression_type: 'uninstalled' } });
    t.equal(r.status, 201);
  }
  await page.reload();
  await page.getByText('Showing 1–25 of 26').waitFor();
  await scan(t, 'suppressions');
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByText('Showing 26–26 of 26').waitFor();
  await page.getByRole('button', { name: 'Lift fcm-***cdef opt_out' }).click();
  await page.waitForURL((u) => !u.search.includes('offset'));
  t.equal(await countOf(table.getByRole('row'), 26), 26, 'the emptied page gives way to the one before: a header and 25');
  t.equal((await s.req('GET', `/workspaces/${ws.id}/push/suppressions`, { token: ws.token })).body.total, 25, 'lifted');
});

t.test('address suppressions: the second tab, per channel, add, a refused number at its field, lift', async (t) => {
  await page.getByRole('link', { name: 'Email and SMS' }).click();
  await page.getByText('No email address is suppressed.').waitFor();
  await scan(t, 'suppressions-addresses-empty');
  await page.getByRole('textbox', { name: 'Email address' }).fill('Ada@Example.com');
  await page.getByLabel('Reason (optional)').fill('asked by phone');
  await page.getByRole('button', { name: 'Suppress', exact: true }).click();
  await page.getByText('ada@example.com suppressed.').waitFor();
  const emails = page.getByRole('table', { name: /Suppressed email addresses/ });
  t.match(await emails.getByRole('row').nth(1).textContent(), /ada@example\.com.*manual.*asked by phone/, 'listed, in lower case');

  await page.getByLabel('Channel').selectOption('sms');
  await page.getByText('No phone number is suppressed.').waitFor();
  const phone = page.getByRole('textbox', { name: 'Phone number' });
  await phone.fill('not a number');
  await page.getByRole('button', { name: 'Suppress', exact: true }).click();
  await page.waitForFunction(() => document.querySelector('[aria-invalid="true"]') !== null);
  t.equal(await phone.getAttribute('aria-invalid'), 'true', 'the refused number is marked at its field');
  await phone.fill('+15005550006');
  await page.getByRole('button', { name: 'Suppress', exact: true }).click();
  await page.getByRole('table', { name: /Suppressed phone numbers/ }).getByRole('cell', { name: '+15005550006', exact: true }).waitFor();
  await scan(t, 'suppressions-addresses');
  await page.getByRole('button', { name: 'Lift +15005550006' }).click();
  await page.getByText('No phone number is suppressed.').waitFor();
  const left = await s.req('GET', `/workspaces/${ws.id}/suppressions?channel=email`, { token: ws.token });
  t.equal(left.body.total, 1, 'the email address stays suppressed');
});

t.test('phone width: every page fits and passes the scan', (t) =>
  checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${ws.token}`, visited.filter((v) => !v.name.endsWith('-empty'))));

t.test('no console errors on any page', async (t) => {
  // The browser logs every 4xx answer; the refusals the flows asked for are the only ones.
  const refused = problems.filter((p) => /status of 400/.test(p));
  t.equal(refused.length, 3, "the owner's role, the allowlist entry, the phone number");
  t.same(problems.filter((p) => !refused.includes(p)), [], 'nothing else');
});

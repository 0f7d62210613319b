// The dashboard's pages for running a workspace, in a real browser against a real Herald:
// members (list, add, change a role, remove; a refused change says why); the live event
// debugger (new events show without a reload, pause, searched by name on the server, older pages); an API key's IP
// allowlist (a refused entry at its field, a never-matching one warned of), its name, permissions and allowlist edited; push
// token suppressions (empty, add, a second time, paging, searched, lift) and address suppressions
// (per channel, add, a refused number at its field, searched, lift); a real email campaign on the
// sandbox, its messages on the Person page with channel, address and provider events. Each page gets an
// accessibility scan and a screenshot, at 1280 px and at phone width, and no page may log a
// console error.
import t from 'tap';
import { eventually, newKey, newWorkspace, triggerWebhookCampaign } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';

const { browser, s, page, problems, visited, scan, h1, nav, countOf, visible } = await dashboardSuite(t);
const ws = await newWorkspace(s, 'Tools');
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

  // The search asks Herald: an event far older than the page on screen is found.
  await page.getByLabel('Event name').fill('old_3');
  await page.keyboard.press('Enter');
  await page.waitForURL(/name=old_3/);
  await table.getByRole('cell', { name: 'old_3', exact: true }).waitFor();
  t.equal(await countOf(table.getByRole('row'), 2), 2, 'a header and the one old_3, not on the live page');
  await page.getByLabel('Event name').fill('never_tracked');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByText('No events named “never_tracked”.').waitFor();
  await scan(t, 'events-no-match');
  await page.getByRole('button', { name: 'Show every event' }).click();
  await table.getByRole('cell', { name: 'while_paused' }).waitFor();
  t.equal(await page.getByLabel('Event name').inputValue(), '', 'the search cleared');
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

t.test("API keys: the IP allowlist at creation; name, permissions and allowlist edited; a refused entry at its field", async (t) => {
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

  await page.getByRole('button', { name: 'Edit office' }).click();
  const editor = page.getByRole('region', { name: 'Edit “office”' });
  const edit = editor.getByLabel('Allowed addresses');
  t.equal(await edit.inputValue(), '10.0.0.0/8\nnot-an-ip', 'the current list');
  t.ok(await editor.getByLabel('people:read', { exact: true }).isChecked(), 'the current permissions');
  // No permission left: refused, Herald's message shown in the form, nothing saved.
  await editor.getByLabel('people:read', { exact: true }).uncheck();
  await editor.getByRole('button', { name: 'Save key' }).click();
  await editor.getByText('permissions is required for a secret key').waitFor();
  t.pass("Herald's refusal shown in the form");
  await scan(t, 'keys-edit-error');
  await editor.getByLabel('Name').fill('office-vpn');
  await editor.getByLabel('people:read', { exact: true }).check();
  await editor.getByLabel('events:write', { exact: true }).check();
  await edit.fill('192.168.1.0/24, 10.1.2.3');
  await editor.getByRole('button', { name: 'Save key' }).click();
  await page.getByText('from 192.168.1.0/24, 10.1.2.3').waitFor();
  await page.getByRole('cell', { name: 'people:read, events:write' }).waitFor();
  const keys = await s.req('GET', `/workspaces/${ws.id}/api-keys`, { token: ws.token });
  t.match(keys.body.api_keys.find((k: { name: string }) => k.name === 'office-vpn'), { ip_whitelist: ['192.168.1.0/24', '10.1.2.3'], permissions: ['people:read', 'events:write'] }, 'saved: the name, the permissions, the allowlist');
  t.equal(await countOf(page.getByText(/never match/), 0), 0, 'no warning left');
  await scan(t, 'keys-edit');
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
  t.match(await table.getByRole('row').nth(1).textContent(), /fcm-\*\*\*cdef.*android.*opt out.*asked by mail/, 'listed, masked');
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
  // The search asks Herald for the tokens starting with what is typed, past this page too.
  await page.getByLabel('Search tokens').fill('apns-token-001');
  await page.keyboard.press('Enter');
  await page.waitForURL(/q=apns-token-001/);
  t.equal(await countOf(table.getByRole('row'), 11), 11, 'a header and the ten tokens apns-token-0010… to 0019…');
  t.equal(await page.getByText(/^Showing/).count(), 0, 'one page of matches');
  await page.getByLabel('Search tokens').fill('fcm-token-0123');
  await page.keyboard.press('Enter');
  await table.getByRole('cell', { name: 'fcm-***cdef', exact: true }).waitFor();
  t.equal(await countOf(table.getByRole('row'), 2), 2, 'the token the list shows masked, found by its start');
  await page.getByLabel('Search tokens').fill('nothing-like-it');
  await page.keyboard.press('Enter');
  await page.getByText('No tokens start with “nothing-like-it”.').waitFor();
  await scan(t, 'suppressions-no-match');
  await page.getByRole('button', { name: 'Clear the search' }).click();
  await page.getByText('Showing 1–25 of 26').waitFor();
  t.notMatch(page.url(), /q=/, 'the search left the address');
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByText('Showing 26–26 of 26').waitFor();
  await page.getByRole('button', { name: 'Lift fcm-***cdef (opt_out)' }).click();
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
  await page.getByRole('textbox', { name: 'Email address' }).fill('grace@example.org');
  await page.getByRole('button', { name: 'Suppress', exact: true }).click();
  await page.getByText('grace@example.org suppressed.').waitFor();
  await page.getByLabel('Search email addresses').fill('ADA');
  await page.keyboard.press('Enter');
  await page.waitForURL(/q=ADA/);
  t.equal(await countOf(emails.getByRole('row'), 2), 2, 'a header and ada@example.com, searched in any case');
  t.ok(await visible(emails.getByRole('cell', { name: 'ada@example.com' })), 'the match');
  await page.getByLabel('Search email addresses').fill('');
  await page.keyboard.press('Enter');
  t.equal(await countOf(emails.getByRole('row'), 3), 3, 'both again');

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
  t.equal(left.body.total, 2, 'the email addresses stay suppressed');
});

t.test("a real email campaign (the sandbox): a person's page shows each message's channel, address and provider events; their events searched; the bounce suppressed", async (t) => {
  const [trigger, write] = await Promise.all([newKey(s, ws, { permissions: ['campaigns:trigger'] }), newKey(s, ws, { permissions: ['people:write', 'events:write'] })]);
  const identify = [
    { userId: 'bouncer', email: 'bounce@simulator.herald.test', traits: { first_name: 'Bo', last_name: 'Uncer' } },
    { userId: 'reader', email: 'reader@example.com', traits: { first_name: 'Rea', last_name: 'Der' } },
  ];
  t.equal((await s.req('POST', '/people/batch', { token: write.key, body: { identify } })).status, 200);
  for (const event of ['opened_app', 'signed_up', 'opened_app']) {
    t.equal((await s.req('POST', '/track', { token: write.key, body: { event, external_id: 'reader' } })).status, 201);
  }
  await triggerWebhookCampaign(s, ws, trigger.key, { id: 'mail', type: 'email', subject: 'Spring news', text: 'Hello {{ person.first_name }}' });
  // The sends happen in the background: wait for both messages' outcomes.
  const outcome = async (search: string) => {
    const [p] = (await s.req('GET', `/workspaces/${ws.id}/people?search=${search}`, { token: ws.token })).body.people;
    return (await s.req('GET', `/workspaces/${ws.id}/people/${p.id}/messages`, { token: ws.token })).body.messages[0]?.status;
  };
  t.equal(await eventually(async () => (await outcome('Uncer')) === 'bounced', 20_000), true, 'the simulator bounced one');
  t.equal(await eventually(async () => (await outcome('reader')) === 'delivered', 20_000), true, 'and delivered the other');

  await nav('People');
  await page.getByLabel('Search by name or email').fill('Uncer');
  await page.keyboard.press('Enter');
  await page.getByRole('link', { name: 'Bo Uncer' }).click();
  await h1('Bo Uncer');
  const messages = page.getByRole('table', { name: 'Messages, newest first' });
  const bounced = messages.getByRole('row').filter({ hasText: 'Spring news' });
  await bounced.waitFor();
  t.ok(await visible(bounced.getByRole('cell', { name: 'Email', exact: true })), 'the channel');
  t.ok(await visible(bounced.getByText('bounce@simulator.herald.test', { exact: true })), 'the address it went to');
  t.match(await bounced.getByRole('cell').nth(3).textContent(), /^bounced/, 'the status');
  t.match(await bounced.getByRole('list', { name: 'Provider events' }).textContent(), /^hard bounce/, "the provider's event (as a callback names it)");
  t.match(await page.getByText(/^Now/).textContent(), /bounced/, 'the hard bounce made the person bounced');
  await scan(t, 'person-email');

  await page.getByRole('link', { name: '← People' }).click();
  await page.getByLabel('Search by name or email').fill('reader@example.com');
  await page.keyboard.press('Enter');
  await page.getByRole('link', { name: 'Rea Der' }).click();
  await h1('Rea Der');
  const delivered = page.getByRole('table', { name: 'Messages, newest first' }).getByRole('row').filter({ hasText: 'Spring news' });
  await delivered.waitFor();
  t.match(await delivered.textContent(), /Email.*Spring news.*Hello.*delivered.*reader@example\.com/, 'channel, subject and body, status, address');
  t.match(await delivered.getByRole('list', { name: 'Provider events' }).textContent(), /^delivered/, "the provider's event");

  // A person's events, searched by name on the server.
  const events = page.getByRole('region', { name: 'Events', exact: true });
  await events.getByText('signed_up').waitFor();
  await page.getByLabel('Search events by name').fill('opened_app');
  await page.keyboard.press('Enter');
  await events.getByText('Every “opened_app” event: 2.').waitFor();
  t.equal(await countOf(events.locator('li'), 2), 2, 'the two opened_app events');
  t.equal(await events.getByText('signed_up').count(), 0, 'not the others');
  await page.getByLabel('Search events by name').fill('purchased');
  await page.keyboard.press('Enter');
  await events.getByText('No “purchased” events for this person.').waitFor();
  await page.getByRole('button', { name: 'Show every event' }).click();
  await events.getByText('Every event: 3.').waitFor();
  t.pass('the search cleared');

  // The bounce suppressed the address: the suppressions' search finds it.
  await page.goto(`${s.base}/dashboard/w/${ws.id}/suppressions?kind=addresses&q=bounce%40`);
  const row = page.getByRole('table', { name: /Suppressed email addresses/ }).getByRole('row').filter({ hasText: 'bounce@simulator.herald.test' });
  await row.waitFor();
  t.match(await row.textContent(), /hard bounce/, 'suppressed as a hard bounce');
});

t.test('phone width: every page fits and passes the scan', (t) =>
  checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${ws.token}`, visited.filter((v) => !v.name.endsWith('-empty'))));

t.test('no console errors on any page', async (t) => {
  // The browser logs every 4xx answer; the refusals the flows asked for are the only ones.
  const refused = problems.filter((p) => /status of 400/.test(p));
  t.equal(refused.length, 4, "the owner's role, the allowlist entry, the key left without permissions, the phone number");
  t.same(problems.filter((p) => !refused.includes(p)), [], 'nothing else');
});

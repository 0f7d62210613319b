// Every dashboard page in a real browser against a real Herald, as a new user would go:
// create workspaces and switch between them, create API keys (the permission picker, the key
// shown once and copied, usage, refresh, revoke), find people (paging, search, status filter),
// open a person (traits, devices, events, messages, consent), set push, email and SMS channels, change the settings (a refused value shown
// next to its field). Each page gets an accessibility scan and a screenshot, at 1280 px and at
// phone width, and no page may log a console error.
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { uniqueUser } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';

const SMTP_PASSWORD = 'smtp-pass-Qx8r2';
const AUTH_TOKEN = 'twilio-token-9f8e7d6c5b4a';

const PUBLIC = 'https://herald.example.com';
// smtp.example.com resolves nowhere (an SMTP host name is resolved when set): listed, it is taken as is.
const { browser, s, context, page, problems, visited, scan, h1, nav, countOf, visible } = await dashboardSuite(t, { HERALD_PUBLIC_URL: `${PUBLIC}/`, HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1,smtp.example.com' });
const token = await s.session(uniqueUser('dash'));
await context.grantPermissions(['clipboard-read', 'clipboard-write']);

let workspaceId = '';
let key = '';

t.test('workspaces: the empty state, creation, the switcher', async (t) => {
  await page.goto(`${s.base}/dashboard/#token=${token}`);
  await h1('Workspaces');
  await page.getByText('You are not a member of any workspace yet.').waitFor();
  await scan(t, 'workspaces-empty');
  await page.getByLabel('Name').fill('Acme');
  await page.getByRole('button', { name: 'Create workspace' }).click();
  await h1('People');
  workspaceId = /\/w\/([^/]+)\/people$/.exec(page.url())![1]!;
  const switcher = page.getByRole('combobox', { name: 'Workspace' });
  await page.waitForFunction((id) => document.querySelector<HTMLSelectElement>('#workspace-switcher')?.value === id, workspaceId);
  t.pass('the switcher shows the new workspace');

  await switcher.selectOption({ label: 'All workspaces…' });
  await h1('Workspaces');
  await page.getByRole('link', { name: 'Acme' }).waitFor();
  await page.getByLabel('Name').fill('Beta');
  await page.getByRole('button', { name: 'Create workspace' }).click();
  await h1('People');
  await page.waitForFunction(() => document.querySelector<HTMLSelectElement>('#workspace-switcher')?.selectedOptions[0]?.text === 'Beta');
  await switcher.selectOption({ label: 'Acme' });
  await page.waitForURL(`**/dashboard/w/${workspaceId}/people`);
  t.pass('switched back to Acme');
  await nav('Settings');
  await h1('Settings');
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
  await page.goto(`${s.base}/dashboard/workspaces`);
  await h1('Workspaces');
  t.equal(await countOf(page.getByRole('row'), 3), 3, 'a header and two workspaces');
  await scan(t, 'workspaces');
});

t.test('API keys: create with the picker, shown once and copied, usage, refresh, revoke', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${workspaceId}/keys`);
  await h1('API keys');
  await page.getByText('No API keys yet.').waitFor();
  await scan(t, 'keys-empty');

  // A secret key needs at least one permission: the API's answer is shown.
  await page.getByLabel('Name').fill('backend');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('alert').filter({ hasText: 'permissions is required' }).waitFor();
  for (const p of ['people:write', 'events:write', 'devices:write', 'push:send']) await page.getByLabel(p, { exact: true }).check();
  await page.getByLabel('Description (optional)').fill('the billing service');
  await page.getByLabel('Expires (optional)').fill('2099-12-31T23:30');
  await page.getByRole('button', { name: 'Create key' }).click();
  const shown = page.getByLabel('API key', { exact: true });
  await shown.waitFor();
  key = await shown.inputValue();
  t.match(key, /^ws_live_[0-9a-f]{8}_[0-9A-Za-z]{8}\.[0-9a-f]{64}$/, 'the full key, once');
  await page.getByRole('button', { name: 'Copy' }).click();
  await page.getByText('Copied.').waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), key, 'the copy button copies it');
  await scan(t, 'keys-new');
  await page.getByRole('button', { name: 'Done' }).click();
  t.equal(await countOf(shown, 0), 0, 'gone once dismissed');
  const row = page.getByRole('table', { name: 'API keys' }).getByRole('row').nth(1);
  t.match(await row.textContent(), /the billing service.*expires .*2099/, 'its description and expiry');

  // The picker knows which names a public key may hold.
  await page.getByLabel('Name').fill('mobile app');
  await page.getByRole('radio', { name: /Public/ }).check();
  const boxes = page.getByRole('group', { name: 'Permissions' }).getByRole('checkbox');
  t.equal(await countOf(boxes, 3), 3, 'only the public set is offered');
  await page.getByRole('button', { name: 'Create key' }).click();
  await shown.waitFor();
  t.match(await shown.inputValue(), /^pk_live_/, 'a public key');
  await page.getByRole('button', { name: 'Done' }).click();
  t.ok(await visible(page.getByRole('cell', { name: 'events:write, devices:register, people:identify' })), 'with the public set');

  // Use the secret key: people, events, a device, a push.
  const api = (method: string, path: string, body: unknown) => s.req(method, path, { token: key, body });
  const batch = await api('POST', '/people/batch', {
    identify: Array.from({ length: 30 }, (_, i) => ({ userId: `user-${String(i).padStart(2, '0')}`, email: `user${i}@example.com`, traits: { first_name: i === 7 ? 'Zed' : 'Person', last_name: `Number ${i}`, plan: 'pro' } })),
  });
  t.equal(batch.status, 200, batch.text);
  // 55 earlier events sharing one timestamp (a batch), so the person's events take two pages.
  const visits = Array.from({ length: 55 }, (_, i) => ({ event: `visit_${i}`, external_id: 'user-07', timestamp: '2024-01-01T00:00:00.000Z' }));
  t.equal((await api('POST', '/track/batch', { events: visits })).status, 201);
  t.equal((await api('POST', '/track', { event: 'signed_up', external_id: 'user-07', parameters: { source: 'ad' } })).status, 201);
  t.equal((await api('POST', '/people/user-07/devices', { token: 'fcm-token-0123456789abcdef', platform: 'android' })).status, 201);
  const push = await api('POST', `/workspaces/${workspaceId}/push/send`, { external_id: 'user-07', title: 'Welcome', body: 'Hello Zed' });
  t.equal(push.status, 200, push.text);

  // Usage is counted in memory and written every second: look until it is there.
  for (let tries = 0; ; tries++) {
    await page.reload();
    await h1('API keys');
    await page.getByRole('button', { name: 'Usage of backend' }).click();
    await page.getByRole('heading', { name: 'Usage of “backend”' }).waitFor();
    // The last request made with the key: once it is counted, all are.
    const counted = page.getByRole('table', { name: 'Requests by route' }).getByRole('cell', { name: 'POST /workspaces/{workspaceId}/push/send' });
    await counted.or(page.getByText(/^\d+ requests; last|^Not used yet\.$/)).first().waitFor();
    if (await counted.isVisible()) break;
    if (tries === 20) throw new Error('usage never counted');
    await new Promise((r) => setTimeout(r, 500));
  }
  t.ok(await visible(page.getByRole('img', { name: /Requests per day/ })), 'the chart');
  await page.getByRole('table', { name: 'Requests by route' }).getByRole('cell', { name: 'POST /track', exact: true }).waitFor();
  t.pass('by route');
  await scan(t, 'keys');

  await page.getByRole('button', { name: 'Refresh backend' }).click();
  await shown.waitFor();
  const refreshed = await shown.inputValue();
  t.not(refreshed, key, 'a new secret');
  t.equal((await s.req('GET', '/people', { token: key })).status, 401, 'the old one stops');
  key = refreshed;
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('button', { name: 'Revoke mobile app' }).click();
  await page.getByRole('button', { name: 'Revoke mobile app' }).waitFor({ state: 'detached' });
  t.equal(await countOf(page.getByRole('table', { name: 'API keys' }).getByRole('row'), 2), 2, 'one key left');
  t.ok(await visible(page.getByRole('button', { name: 'Revoke backend' })), 'the other one');
});

t.test('people: counts, paging, search, status filter', async (t) => {
  await nav('People');
  await h1('People');
  await page.getByText('Showing 1–25 of 30').waitFor();
  t.ok(await visible(page.getByRole('list', { name: 'People by status' }).getByText('30 in all')), 'counts');
  await scan(t, 'people');
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByText('Showing 26–30 of 30').waitFor();
  t.match(page.url(), /offset=25/, 'the page is in the address');
  await page.goBack();
  await page.getByText('Showing 1–25 of 30').waitFor();
  t.pass('back goes to the first page');

  await page.getByLabel('Search by name or email').fill('zed');
  await page.keyboard.press('Enter');
  await page.waitForURL(/search=zed/);
  await page.getByRole('link', { name: 'Zed Number 7' }).waitFor();
  t.equal(await countOf(page.getByRole('row'), 2), 2, 'one match');
  await page.getByLabel('Status', { exact: true }).selectOption('unsubscribed');
  await page.getByText('No one matches this search.').waitFor();
  await scan(t, 'people-no-match');
  await page.getByRole('link', { name: 'Clear the search and filter' }).click();
  await page.getByText('Showing 1–25 of 30').waitFor();
  t.equal(await page.getByLabel('Search by name or email').inputValue(), '', 'search cleared');
});

t.test("a person's page: traits, devices, events, messages, consent", async (t) => {
  await page.getByLabel('Search by name or email').fill('user7@example.com');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: 'Zed Number 7' }).click();
  await h1('Zed Number 7');
  t.ok(await visible(page.getByText('user7@example.com')), 'email');
  t.ok(await visible(page.getByRole('definition').filter({ hasText: /^pro$/ })), 'a custom trait');
  await page.getByText('fcm-***cdef active').waitFor();
  t.pass('the device, its token masked');
  await page.getByText('signed_up').waitFor();
  await page.getByRole('cell', { name: /Welcome/ }).waitFor();
  t.pass('the event and the message');
  t.ok(await visible(page.getByRole('cell', { name: 'Push', exact: true })), 'the channel of the message');
  await scan(t, 'person');

  const events = page.getByRole('region', { name: 'Events' });
  await events.getByText('The latest 50.').waitFor();
  t.equal(await events.getByRole('listitem').count(), 50, 'a page of 50 events');
  await events.getByRole('button', { name: 'Older events' }).click();
  await events.getByText('Page 2: 6 older events.').waitFor();
  t.equal(await events.getByRole('listitem').count(), 6, 'the rest of the batch on the next page, none lost in the shared millisecond');
  t.equal(await events.getByText('signed_up', { exact: true }).count(), 0, 'the newest event is not on it');
  await events.getByRole('button', { name: 'Newer events' }).click();
  await events.getByText('The latest 50.').waitFor();
  t.ok(await visible(events.getByText('signed_up')), 'back on the first page');

  await page.getByLabel('Status', { exact: true }).selectOption('unsubscribed');
  await page.getByLabel('Reason (optional)').fill('asked by phone');
  await page.getByRole('button', { name: 'Change consent' }).click();
  await page.getByText('Saved.').waitFor();
  t.match(await page.getByText(/^Now/).textContent(), /unsubscribed.*asked by phone/, 'the new status and reason');
  await page.reload();
  await h1('Zed Number 7');
  t.match(await page.getByText(/^Now/).textContent(), /unsubscribed/, 'kept across a reload');
  await page.goto(`${s.base}/dashboard/w/${workspaceId}/people/00000000-0000-4000-8000-000000000000`);
  await page.getByRole('alert').filter({ hasText: 'Could not load this person' }).waitFor();
  t.pass('an unknown person says so');
  await page.getByRole('button', { name: 'Try again' }).waitFor();
  await page.goBack();
  await h1('Zed Number 7');
  await page.getByRole('link', { name: '← People' }).click();
  await page.getByLabel('Status', { exact: true }).selectOption('unsubscribed');
  await page.getByRole('link', { name: 'Zed Number 7' }).waitFor();
  t.pass('found by the status filter');
});

t.test('settings: a refused value shown at its field, the policy summary, saved', async (t) => {
  await nav('Settings');
  await h1('Settings');
  await page.getByLabel('Time zone', { exact: true }).fill('Mars/Olympus');
  await page.getByRole('button', { name: 'Save settings' }).click();
  const tz = page.getByLabel('Time zone', { exact: true });
  await page.locator('.field').filter({ has: tz }).locator('.error').waitFor();
  t.equal(await tz.getAttribute('aria-invalid'), 'true', 'the field is marked');
  const described = (await tz.getAttribute('aria-describedby'))!.split(' ').at(-1)!;
  t.equal(await page.locator(`[id="${described}"]`).textContent(), 'not a known time zone', "the API's refusal in words, tied to the field");
  await scan(t, 'settings-error');

  await tz.fill('Europe/Paris');
  await page.getByLabel('Policy time zone').fill('Europe/Paris');
  await page.getByLabel('Quiet hours').check();
  await page.getByLabel('From').fill('22:00');
  await page.getByLabel('To').fill('07:30');
  await page.getByLabel('At most pushes per person per day').fill('3');
  t.match(await page.locator('.summary').textContent(), /between 22:00 and 07:30 \(Europe\/Paris\).*at most 3 pushes per day/, 'the summary says what it does');
  await page.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Saved.').waitFor();
  await page.reload();
  await h1('Settings');
  t.equal(await page.getByLabel('To').inputValue(), '07:30', 'kept');
  t.equal(await page.getByLabel('At most pushes per person per day').inputValue(), '3');
  await scan(t, 'settings');
});

t.test('push channels: set APNs (a refused id at its field) and FCM, never shown back, remove', async (t) => {
  await nav('Channels');
  await h1('Channels');
  await page.getByText('not configured').nth(3).waitFor();
  t.equal(await countOf(page.getByText('not configured'), 4), 4, 'no channel configured');
  await scan(t, 'channels-empty');

  const apns = page.getByRole('region', { name: 'APNs (iOS)' });
  const p8 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  await apns.getByLabel('The .p8 key').fill(p8);
  await apns.getByLabel('Key id').fill('abc');
  await apns.getByLabel('Team id').fill('TEAM123456');
  await apns.getByLabel('Bundle id').fill('com.example.app');
  await apns.getByRole('button', { name: 'Save APNs' }).click();
  const keyId = apns.getByLabel('Key id');
  await page.waitForFunction(() => document.querySelector('[aria-invalid="true"]') !== null);
  t.equal(await keyId.getAttribute('aria-invalid'), 'true', 'the refused key id is marked');
  await keyId.fill('KEY1234567');
  await apns.getByRole('button', { name: 'Save APNs' }).click();
  await page.getByText('APNs saved.').waitFor();
  await apns.getByRole('definition').filter({ hasText: 'KEY1234567' }).waitFor();

  const fcm = page.getByRole('region', { name: 'FCM (Android, web)' });
  const file = fcm.getByLabel(/service-account key file/);
  await file.fill('{ not json');
  await fcm.getByRole('button', { name: 'Save FCM' }).click();
  await fcm.getByText('This is not JSON').waitFor();
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  await file.fill(JSON.stringify({ type: 'service_account', project_id: 'acme-app', private_key_id: 'k1', private_key: rsa, client_email: 'herald@acme-app.iam.gserviceaccount.com', token_uri: 'https://oauth2.googleapis.com/token' }));
  await fcm.getByRole('button', { name: 'Save FCM' }).click();
  await page.getByText('FCM saved.').waitFor();
  await fcm.getByText('acme-app', { exact: true }).waitFor();
  t.notMatch(await page.content(), /BEGIN PRIVATE KEY/, 'no private key on the page');
  await scan(t, 'channels');

  await apns.getByRole('button', { name: 'Remove APNs' }).click();
  await page.getByText('APNs removed.').waitFor();
  await apns.getByText('not configured').waitFor();
  t.pass('APNs removed, FCM kept');
});

t.test('email and SMS channels: a refused field at its field, set, never shown back, the callback URLs copied, remove', async (t) => {
  const email = page.getByRole('region', { name: 'Email', exact: true });
  await email.getByText("Until it is set, emails go to Herald's sandbox.").waitFor();
  await email.getByLabel('SMTP host').fill('10.1.2.3');
  await email.getByLabel('SMTP username (optional)').fill('apikey');
  await email.getByLabel('SMTP password').fill(SMTP_PASSWORD);
  await email.getByLabel('From email').fill('news@example.com');
  await email.getByLabel('From name (optional)').fill('Acme News');
  await email.getByLabel('Delivery callbacks from').selectOption('sendgrid');
  const sendgridKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  await email.getByLabel(/SendGrid verification key/).fill(sendgridKey);
  await email.getByRole('button', { name: 'Save email' }).click();
  const host = email.getByLabel('SMTP host');
  await page.waitForFunction(() => document.querySelector('[aria-invalid="true"]') !== null);
  t.equal(await host.getAttribute('aria-invalid'), 'true', 'the private host is refused at its field');
  const help = await host.evaluate((el) => document.getElementById((el.getAttribute('aria-describedby') ?? '').split(' ').find((id) => id.endsWith('-hint')) ?? '')?.textContent);
  t.match(help, /localhost[\s\S]*HERALD_ALLOWED_PRIVATE_HOSTS/, "the field's help (not only the refusal) says what a local relay needs");
  await host.fill('smtp.example.com');
  await email.getByRole('button', { name: 'Save email' }).click();
  await page.getByText('Email saved.').waitFor();
  await email.getByRole('definition').filter({ hasText: 'smtp.example.com:587 (starttls)' }).waitFor();
  const hookUrl = email.getByLabel('sendgrid callback URL');
  t.equal(await hookUrl.inputValue(), `${PUBLIC}/webhooks/email/${workspaceId}`);
  await email.getByText('Paste it into SendGrid').waitFor();
  await email.getByRole('button', { name: 'Copy sendgrid callback URL' }).click();
  await email.getByText('Copied.').waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), `${PUBLIC}/webhooks/email/${workspaceId}`, 'the URL copied');
  t.equal(await email.getByLabel(/SMTP password/).inputValue(), '', 'the password is not shown back');

  const sms = page.getByRole('region', { name: 'SMS (Twilio)' });
  t.equal(await sms.getByLabel('Inbound message URL').inputValue(), `${PUBLIC}/webhooks/sms/${workspaceId}/inbound`, 'the inbound URL, to paste before the channel is set');
  await sms.getByLabel('Account SID').fill(`AC${'0123456789abcdef'.repeat(2)}`);
  await sms.getByLabel(/Auth token/).fill(AUTH_TOKEN);
  await sms.getByRole('button', { name: 'Save SMS' }).click();
  const from = sms.getByLabel('From number');
  await page.waitForFunction(() => document.querySelector('#sms-channel ~ form [aria-invalid="true"]') !== null);
  t.equal(await from.getAttribute('aria-invalid'), 'true', 'neither from nor a messaging service: said at the from number');
  await from.fill('+15005550006');
  await sms.getByLabel('Default country (optional)').fill('us');
  await sms.getByRole('button', { name: 'Save SMS' }).click();
  await page.getByText('SMS saved.').waitFor();
  await sms.getByRole('definition').filter({ hasText: '+15005550006' }).waitFor();
  await sms.getByRole('definition').filter({ hasText: 'US' }).waitFor();
  await sms.getByText('“A message comes in” webhook').waitFor();
  const content = await page.content();
  for (const secret of [SMTP_PASSWORD, AUTH_TOKEN]) t.notOk(content.includes(secret), 'no secret on the page');
  await scan(t, 'channels-email-sms');

  await email.getByRole('button', { name: 'Remove email' }).click();
  await page.getByText('Email removed.').waitFor();
  await sms.getByRole('button', { name: 'Remove SMS' }).click();
  await page.getByText('SMS removed.').waitFor();
  t.equal(await countOf(page.getByText('not configured'), 3), 3, 'APNs, email and SMS not configured; FCM kept');
});

t.test('keyboard: skip link first, pages reachable by Tab and Enter', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${workspaceId}/people`);
  await h1('People');
  await page.keyboard.press('Tab');
  t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
  for (let i = 0; i < 10; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(() => document.activeElement?.textContent)) === 'API keys') break;
  }
  await page.keyboard.press('Enter');
  await h1('API keys');
  t.equal(await page.evaluate(() => document.activeElement?.tagName), 'H1', 'focus moves to the new page');
});

t.test('phone width: every page fits and passes the scan', (t) =>
  checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${token}`, visited.filter((v) => !v.name.endsWith('-empty') && v.name !== 'keys-new')));

t.test('no console errors on any page', async (t) => {
  // The browser logs every 4xx answer; the refusals the flows asked for are the only ones.
  const refused = problems.filter((p) => /status of (400|404)/.test(p));
  t.equal(refused.length, 6, 'the secret key without permissions, the unknown person, the unknown time zone, the APNs key id, the private SMTP host, the SMS without a sender');
  t.same(problems.filter((p) => !refused.includes(p)), [], 'nothing else');
});

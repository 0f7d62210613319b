// What the dashboard says after an action, in a real browser against a real Herald on the
// embedded default: a save's confirmation appears beside the button that saved (announced as
// a status, on screen, focus kept on the button), a refusal is said in the dashboard's words
// (the field's label, not the API's path and schema wording), the activation warning once,
// and previews start on a person with the data the template uses and keep the person picked.
import t, { type Test } from 'tap';
import type { Locator } from 'playwright-core';
import { newKey, newWorkspace } from '../helpers/server.js';
import { dashboardSuite } from '../helpers/browser.js';

// smtp.example.com resolves nowhere (an SMTP host name is resolved when set): listed, it is taken as is.
const { s, page, problems, scan, h1, nav } = await dashboardSuite(t, { HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1,smtp.example.com' });
page.context().setDefaultTimeout(10_000);
const ws = await newWorkspace(s, 'Feedback');
const key = await newKey(s, ws, { name: 'server', permissions: ['*'] });
// The oldest person (the first the pickers list) has no data at all.
for (const [userId, traits] of [['anon', {}], ['ada', { first_name: 'Ada', plan: 'pro' }], ['grace', { first_name: 'Grace' }]] as const) {
  const r = await s.req('POST', '/identify', { token: key.key, body: { userId, traits, ...(userId === 'anon' ? {} : { email: `${userId}@example.com` }) } });
  if (r.status !== 200) throw new Error(`identify ${userId}: ${r.status} ${r.text}`);
}

await page.goto(`${s.base}/dashboard/w/${ws.id}/people#token=${ws.token}`);
await h1('People');

/**
 * After `button` was clicked: the confirmation `text` is a status right beside it (on screen,
 * within 120 px of it) and focus is still on the button.
 */
async function confirmedBeside(t: Test, button: Locator, text: string | RegExp, what: string) {
  const status = page.getByRole('status').filter({ hasText: text });
  await status.waitFor();
  const [b, c] = [(await button.boundingBox())!, (await status.boundingBox())!];
  const viewport = page.viewportSize()!;
  t.ok(c.y >= 0 && c.y + c.height <= viewport.height, `${what}: the confirmation is on screen`);
  const gap = Math.max(c.y - (b.y + b.height), b.y - (c.y + c.height), 0);
  t.ok(gap <= 120, `${what}: beside the button (${Math.round(gap)} px away)`);
  t.ok(await button.evaluate((el) => el === document.activeElement), `${what}: focus stays on the button`);
}

t.test('a save confirms beside its button, announced, focus kept: email channel, settings, consent', async (t) => {
  await nav('Channels');
  await h1('Channels');
  await page.getByLabel('SMTP host').fill('smtp.example.com');
  await page.getByLabel('Port').fill('587');
  await page.getByLabel('From email').fill('news@example.com');
  const saveEmail = page.getByRole('button', { name: 'Save email' });
  await saveEmail.click();
  await confirmedBeside(t, saveEmail, 'Email saved.', 'Save email');
  await scan(t, 'feedback-channels');

  await nav('Settings');
  await h1('Settings');
  await page.getByLabel('Quiet hours').check();
  await page.getByLabel('Count opens').uncheck();
  const saveSettings = page.getByRole('button', { name: 'Save settings' });
  await saveSettings.click();
  await confirmedBeside(t, saveSettings, 'Saved.', 'Save settings');
  const saved = await s.req('GET', `/workspaces/${ws.id}`, { token: ws.token });
  t.same(saved.body.data.workspace.settings.tracking, { opens: false, clicks: true }, 'the tracking toggle saved (docs/tracking.md)');

  await nav('People');
  await page.getByRole('link', { name: 'Grace' }).click();
  await h1('Grace');
  await page.getByLabel('Status', { exact: true }).selectOption('suppressed');
  const consent = page.getByRole('button', { name: 'Change consent' });
  await consent.click();
  await confirmedBeside(t, consent, 'Saved.', 'Change consent');
  await page.getByLabel('Status', { exact: true }).selectOption('active');
  await consent.click();
  await page.getByText(/^Now active/).waitFor();
});

t.test("a refusal in the dashboard's words: the field's label and what is wrong", async (t) => {
  await nav('Settings');
  await h1('Settings');
  await page.getByLabel('Time zone', { exact: true }).fill('Mars/Olympus');
  await page.getByRole('button', { name: 'Save settings' }).click();
  const alert = page.getByRole('alert');
  await alert.waitFor();
  t.equal((await alert.textContent())?.trim(), 'Time zone: not a known time zone', 'the summary names the field by its label');
  const tz = page.getByLabel('Time zone', { exact: true });
  const described = (await tz.getAttribute('aria-describedby'))!.split(' ').at(-1)!;
  t.equal(await page.locator(`[id="${described}"]`).textContent(), 'not a known time zone', 'the message at the field');
  await scan(t, 'feedback-settings-refused');
  await tz.fill('UTC');

  await nav('Campaigns');
  await page.getByRole('link', { name: 'Create your first campaign' }).click();
  await h1('New campaign');
  await page.getByLabel('Name', { exact: true }).fill('Words');
  await page.getByRole('radio', { name: /^Webhook/ }).check();
  await page.getByRole('button', { name: 'Remove step 1' }).click();
  await page.getByRole('button', { name: 'Add Email' }).click();
  await page.getByRole('button', { name: 'Add SMS' }).click();
  await page.getByLabel('Step 1 (Email): Text').fill('Hello');
  await page.getByRole('button', { name: 'Activate' }).click();
  const refused = page.getByRole('alert').filter({ hasText: 'cannot be activated' });
  await refused.waitFor();
  const said = await refused.textContent();
  t.match(said, 'Step 1 (Email): a subject is needed', 'the email step by its name, the subject in words');
  t.match(said, 'Step 2 (SMS): a body is needed', 'the SMS step too');
  t.notMatch(said, /workflow_definition|email-1|is required/, 'no API path, node id or schema wording');
  t.equal(await page.getByLabel('Step 1 (Email): Subject').getAttribute('aria-invalid'), 'true', 'the subject is marked');
  await scan(t, 'feedback-campaign-refused');
});

t.test('the activation warning shows once after activating', async (t) => {
  await page.getByLabel('Step 1 (Email): Subject').fill('Hi');
  await page.getByLabel('Step 1 (Email): HTML').fill('<p>Hello {{ person.first_name }}</p>');
  await page.getByLabel('Step 2 (SMS): Body').fill('Hi {{ person.first_name }}');
  const warnings = page.getByRole('note', { name: 'Warnings' }).getByRole('listitem');
  await warnings.first().waitFor();
  t.equal(await warnings.count(), 1, 'before activating: one warning');
  const activate = page.getByRole('button', { name: 'Activate' });
  await activate.click();
  await page.getByRole('status').filter({ hasText: 'Activated' }).waitFor();
  t.equal(await warnings.count(), 1, 'after activating: still one (Herald warned of the same step)');
  t.match(await warnings.first().textContent(), /^Step 1 \(Email\)/, 'named by its step');
  // The same button now pauses: focus stays on it.
  const pause = page.getByRole('button', { name: 'Pause' });
  t.ok(await pause.evaluate((el) => el === document.activeElement), 'focus stays on the button that activated (now Pause)');
  await confirmedBeside(t, pause, 'Activated', 'Activate');
});

t.test('previews: a person with the data the template uses; the person picked kept after saving', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/templates/new?channel=sms`);
  await h1('New template');
  await page.getByLabel('Name', { exact: true }).fill('Plan SMS');
  await page.getByLabel('Body').fill('Hello {{ person.first_name }}, your plan: {{ traits.plan }}');
  await page.locator('.bubble').filter({ hasText: 'Hello Ada, your plan: pro' }).waitFor();
  t.pass('the preview starts on Ada, who has both traits, not on the first person listed (who has none)');

  await page.getByLabel('Preview for', { exact: true }).selectOption({ label: 'Grace <grace@example.com>' });
  await page.locator('.bubble').filter({ hasText: 'Hello Grace, your plan:' }).waitFor();
  const create = page.getByRole('button', { name: 'Create template' });
  await create.click();
  await h1('Plan SMS');
  await page.locator('.bubble').filter({ hasText: 'Hello Grace, your plan:' }).waitFor();
  t.match(await page.getByLabel('Preview for', { exact: true }).locator('option:checked').textContent(), /^Grace/, 'Grace is still picked after creating the template');
  const save = page.getByRole('button', { name: 'Save' });
  await page.getByLabel('Body').fill('Hi {{ person.first_name }}');
  await save.click();
  await confirmedBeside(t, save, 'Saved.', 'Save template');
  await page.locator('.bubble').filter({ hasText: 'Hi Grace' }).waitFor();
  t.match(await page.getByLabel('Preview for', { exact: true }).locator('option:checked').textContent(), /^Grace/, 'and after saving it');
  await scan(t, 'feedback-template');
});

t.test('no console errors', async (t) => {
  // The refusals this file asked for (a 400 each) are the only ones.
  t.same(problems.filter((p) => !/status of 400/.test(p)), [], 'nothing but the refusals asked for');
});

// A campaign's goal in the builder, in a real browser against a real Herald on the embedded
// default: the goal event picked from the events seen in the workspace, a bad window refused at
// its field (on create and on save), the goal saved and read back through the API, removed (no
// goal); a running campaign's goal shown in its builder and its conversion in the progress.
// Scanned at 1280 px and at 390 px; no console errors.
import t from 'tap';
import { eventually, newKey, newWorkspace } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';

const { browser, s, page, problems, scan, visited, h1 } = await dashboardSuite(t);
const ws = await newWorkspace(s, 'Goals');
const key = await newKey(s, ws, { name: 'server', permissions: ['*'] });
const hdr = { token: ws.token, headers: { 'x-workspace-id': ws.id } };

async function post(path: string, body: Record<string, unknown>, status: number) {
  const r = await s.req('POST', path, { token: key.key, body });
  if (r.status !== status) throw new Error(`${path}: ${r.status} ${r.text}`);
  return r;
}
await post('/identify', { userId: 'ada', email: 'ada@example.com' }, 200);
// Someone else's purchase: the event name is then one the workspace has seen.
await post('/identify', { userId: 'grace', email: 'grace@example.com' }, 200);
await post('/track', { userId: 'grace', event: 'purchase_completed' }, 201);
const seen = async () => ((await s.req('GET', `/workspaces/${ws.id}/event-names`, { token: ws.token })).body.names as { name: string }[]).some((n) => n.name === 'purchase_completed');
if (!(await eventually(seen, 30_000))) throw new Error('the event name was not recorded');

/** The campaign's goal as the API answers it (undefined: none). */
const goalOf = async (id: string) => {
  const r = await s.req('GET', `/campaigns/${id}`, hdr);
  if (r.status !== 200) throw new Error(`campaign: ${r.status} ${r.text}`);
  return r.body.data.campaign.goal as { event_name: string; within: string } | undefined;
};
const goalEvent = page.getByLabel('Goal event', { exact: true });
const within = page.getByLabel('Converts within', { exact: true });
/** What is said at the window's field. */
const withinError = () => page.locator('.field').filter({ has: page.locator('label', { hasText: /^Converts within$/ }) }).locator('small.error').textContent();
const campaignIdOf = () => /campaigns\/([0-9a-f-]{36})$/.exec(new URL(page.url()).pathname)?.[1] ?? '';

t.test('a goal set in the builder: a bad window refused at its field, saved and read back, removed', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/new#token=${ws.token}`);
  await h1('New campaign');
  await page.getByLabel('Name', { exact: true }).fill('Spring sale');
  await page.getByRole('radio', { name: /^Webhook/ }).check();
  await page.getByRole('region', { name: 'Goal', exact: true }).waitFor();
  t.equal(await page.getByRole('button', { name: 'Remove the goal' }).count(), 0, 'no goal: nothing to remove');

  await page.getByRole('button', { name: 'Make purchase_completed the goal event' }).click();
  t.equal(await goalEvent.inputValue(), 'purchase_completed', 'the goal event picked from those seen');
  await within.fill('3w');
  await page.getByRole('button', { name: 'Save as draft' }).click();
  await page.getByRole('alert').filter({ hasText: /Converts within: must be a window such as "3d"/ }).waitFor();
  t.equal(await within.getAttribute('aria-invalid'), 'true', 'the window is marked');
  t.match(await withinError(), /must be a window such as "3d", "12h" or "45m", at most 366 days/, 'what a window is, beside it');
  t.equal(campaignIdOf(), '', 'nothing was created');
  await scan(t, 'campaign-goal-refused');

  await within.fill('3d');
  await page.getByRole('button', { name: 'Save as draft' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved as a draft.' }).waitFor();
  const id = campaignIdOf();
  t.same(await goalOf(id), { event_name: 'purchase_completed', within: '3d' }, 'saved with the campaign');
  t.equal(await within.getAttribute('aria-invalid'), null, 'no longer marked');

  // Saving again (a PUT): a window past 366 days is refused by Herald's rule, at the field.
  await within.fill('400d');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByRole('alert').filter({ hasText: 'Converts within' }).waitFor();
  t.match(await withinError(), /at most 366 days/, 'the too long window at its field');
  t.same(await goalOf(id), { event_name: 'purchase_completed', within: '3d' }, 'the saved goal is unchanged');
  await within.fill('12h');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  t.same(await goalOf(id), { event_name: 'purchase_completed', within: '12h' }, 'the new window saved');

  await page.reload();
  await h1('Spring sale');
  t.equal(await goalEvent.inputValue(), 'purchase_completed', 'read back into the builder: the event');
  t.equal(await within.inputValue(), '12h', 'and the window');
  await page.getByRole('button', { name: 'Remove the goal' }).click();
  t.equal(await goalEvent.inputValue(), '', 'the event cleared');
  t.equal(await within.inputValue(), '', 'the window cleared');
  t.ok(await goalEvent.evaluate((e) => e === document.activeElement), 'focus left on the goal event, not lost with the button');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  t.equal(await goalOf(id), undefined, 'the goal removed (null)');
});

t.test("a running campaign: its goal in the builder, a conversion and its rate in the progress", async (t) => {
  const c = await s.req('POST', '/campaigns', {
    ...hdr,
    body: {
      name: 'Welcome',
      trigger_type: 'webhook',
      trigger_config: {},
      audience_config: {},
      workflow_definition: { nodes: [{ id: 'mail', type: 'email', subject: 'Hello', text: 'Hi' }] },
      goal: { event_name: 'purchase_completed', within: '1d' },
    },
  });
  if (c.status !== 201) throw new Error(`create: ${c.status} ${c.text}`);
  const id = c.body.data.campaign.id as string;
  const a = await s.req('PUT', `/campaigns/${id}`, { ...hdr, body: { status: 'active' } });
  if (a.status !== 200) throw new Error(`activate: ${a.status} ${a.text}`);
  await post(`/campaigns/${id}/trigger`, { workspace_id: ws.id }, 202);
  // Ada's purchase counts once her message has gone; Grace's was before hers, and converts no one.
  const sent = async () => {
    const r = await s.req('GET', `/workspaces/${ws.id}/campaigns/${id}/messages`, { token: ws.token });
    return (r.body.messages as { external_id: string; sent_at: string | null }[]).some((m) => m.external_id === 'ada' && m.sent_at !== null);
  };
  if (!(await eventually(sent, 30_000))) throw new Error("ada's message was not sent");
  await post('/track', { userId: 'ada', event: 'purchase_completed' }, 201);

  await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/${id}#token=${ws.token}`);
  await h1('Welcome');
  t.equal(await goalEvent.inputValue(), 'purchase_completed', "the campaign's goal event");
  t.equal(await within.inputValue(), '1d', 'its window');
  const totals = page.getByRole('list', { name: 'Campaign totals' });
  await totals.getByText('converted (50.0% of enrolled)').waitFor();
  t.match(await totals.textContent(), /2 enrolled.*1 converted \(50\.0% of enrolled\)/, 'one of the two enrolled converted');
  await scan(t, 'campaign-goal-progress');
});

t.test('at 390 px, and nothing went wrong in the console', async (t) => {
  await checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${ws.token}`, visited);
  const refused = problems.filter((p) => /status of 400/.test(p));
  t.equal(refused.length, 2, 'the two refused windows (a create, a save)');
  t.same(problems.filter((p) => !refused.includes(p)), [], 'no console errors but those');
});

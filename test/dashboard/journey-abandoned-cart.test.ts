// The abandoned-cart journey (docs/journey-canvas.md, docs/campaigns-runtime.md "Waits for
// events") built on the canvas in a real browser and run to completion: an event campaign on
// cart_abandoned; a wait of 2 days for purchase_completed whose event leads to an exit and whose
// timeout to a split on traits.plan, email for pro, SMS for the rest; ways out connected by
// dragging and from the side panel; saved and activated. Then three people abandon their carts
// over the API, one buys within the 2 days, and HERALD_TIME_SCALE makes the 2 days last seconds:
// the pro gets the email, the free the SMS, the buyer nothing, and the canvas's per-node counts
// (entered on each node, took on each branch) say so.
import t from 'tap';
import { eventually, newKey, newWorkspace } from '../helpers/server.js';
import { dashboardSuite } from '../helpers/browser.js';
import { canvasOf } from '../helpers/canvas.js';

t.setTimeout(300_000);
// 2 days last 10 s: time enough for the buyer's purchase, short enough to wait for the rest.
const TWO_DAYS_S = 2 * 86_400;
const { s, page, problems, scan, h1 } = await dashboardSuite(t, { HERALD_TIME_SCALE: String(10 / TWO_DAYS_S) });
const ws = await newWorkspace(s, 'Shop');
const key = await newKey(s, ws, { name: 'server', permissions: ['*'] });
const asWs = { token: ws.token, headers: { 'X-Workspace-ID': ws.id } };

const people = await s.req('POST', '/people/batch', {
  token: key.key,
  body: {
    identify: [
      { userId: 'pro', email: 'pro@example.com', traits: { first_name: 'Pro', plan: 'pro' } },
      { userId: 'free', phone: '+15005550003', traits: { first_name: 'Free', plan: 'free' } },
      { userId: 'buyer', email: 'buyer@example.com', phone: '+15005550001', traits: { first_name: 'Buyer', plan: 'pro' } },
    ],
  },
});
if (people.status !== 200) throw new Error(`people: ${people.status} ${people.text}`);

const { node, handle, edge, drag } = canvasOf(page);
const panel = page.getByRole('complementary', { name: 'Step settings' });
/** Selects step `id` from the keyboard: focus, then Enter. */
async function select(id: string) {
  await node(id).focus();
  await page.keyboard.press('Enter');
  await panel.getByRole('heading').filter({ hasText: id }).waitFor();
}

let campaignId = '';

t.test('the abandoned-cart journey built on the canvas and activated', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/new#token=${ws.token}`);
  await h1('New campaign');
  await page.getByLabel('Name', { exact: true }).fill('Abandoned cart');
  await page.getByRole('radio', { name: /^Event:/ }).check();
  await page.getByLabel('Event names').fill('cart_abandoned');
  await page.getByRole('button', { name: 'Canvas', exact: true }).click();
  await node('push-1').waitFor();
  await select('push-1');
  await page.keyboard.press('Delete');
  await node('push-1').waitFor({ state: 'detached' });

  const palette = page.getByRole('group', { name: 'Add a step' });
  for (const what of ['Wait for event', 'Exit', 'Split', 'Email', 'SMS']) await palette.getByRole('button', { name: `Add ${what}`, exact: true }).click();
  await node('sms-1').waitFor();
  t.equal(await page.locator('.react-flow__node').count(), 6, 'the trigger and five steps drawn');
  t.equal(await edge('__start:next').getAttribute('aria-label'), 'Edge from __start to wait_for_event-1', 'the trigger leads to the wait, the first step');

  // The wait: its event and timeout in the side panel; its event way out dragged onto the exit,
  // its timeout connected to the split from the keyboard.
  await select('wait_for_event-1');
  await panel.getByLabel('Step 1 (Wait for event): event name').fill('purchase_completed');
  await panel.getByLabel('Step 1 (Wait for event): timeout', { exact: true }).fill('2d');
  await drag(handle('wait_for_event-1', 'on_event'), handle('exit-1', 'in'));
  await edge('wait_for_event-1:on_event').waitFor();
  t.equal(await panel.getByLabel('Step 1 (Wait for event): event leads to').inputValue(), 'exit-1', 'the event way out, dragged, is in the side panel');
  await panel.getByLabel('Step 1 (Wait for event): timeout leads to').selectOption('split-1');
  await edge('wait_for_event-1:on_timeout').waitFor();
  t.match(await node('wait_for_event-1').textContent(), 'purchase_completed, at most 2d', 'the node says what it waits for');

  // The split on traits.plan: yes dragged onto the email, no to the SMS from the side panel.
  await select('split-1');
  await panel.getByRole('button', { name: 'Add step 3 (split): condition' }).click();
  await panel.getByLabel('Step 3 (Split): condition 1: field').fill('traits.plan');
  await panel.getByLabel('Step 3 (Split): condition 1: value').fill('pro');
  await drag(handle('split-1', 'yes'), handle('email-1', 'in'));
  await edge('split-1:yes').waitFor();
  await panel.getByLabel('Step 3 (Split): no leads to').selectOption('sms-1');
  await edge('split-1:no').waitFor();
  t.match(await node('split-1').textContent(), 'traits.plan', 'the split says what it splits on');

  // The email's content, and its way out: the exit (the list's next step would be the SMS).
  await select('email-1');
  t.equal(await edge('email-1:next').getAttribute('class').then((c) => /implicit/.test(c ?? '')), true, "the email's way out is first the list's next step, the SMS, dashed");
  await panel.getByLabel('Step 4 (Email): Subject').fill('Your cart, {{ person.first_name }}');
  await panel.getByLabel('Step 4 (Email): HTML').fill('<p>Still thinking it over?</p><a href="{{ unsubscribe_url }}">Unsubscribe</a>');
  await panel.getByLabel('Step 4 (Email): then').selectOption('exit-1');
  await page.locator('.react-flow__edge[data-id="email-1:next"]:not(.implicit)').waitFor();
  await select('sms-1');
  await panel.getByLabel('Step 5 (SMS): Body').fill('Your cart misses you');

  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByRole('status').filter({ hasText: 'Activated' }).waitFor();
  t.pass('the success message is on the page');
  campaignId = /campaigns\/([0-9a-f-]{36})$/.exec(new URL(page.url()).pathname)?.[1] ?? '';
  const saved = (await s.req('GET', `/campaigns/${campaignId}`, asWs)).body.data.campaign;
  t.equal(saved.status, 'active');
  t.same(saved.trigger_config.event_names, ['cart_abandoned'], 'triggered by cart_abandoned');
  const nodes = saved.workflow_definition.nodes as Record<string, unknown>[];
  t.match(nodes, [
    { id: 'wait_for_event-1', type: 'wait_for_event', event_name: 'purchase_completed', timeout: '2d', on_event: 'exit-1', on_timeout: 'split-1' },
    { id: 'exit-1', type: 'exit' },
    { id: 'split-1', type: 'split', yes: 'email-1', no: 'sms-1', condition: { filters: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }] } },
    { id: 'email-1', type: 'email', next: 'exit-1' },
    { id: 'sms-1', type: 'sms', body: 'Your cart misses you' },
  ], 'the journey saved as built');
  t.equal(nodes.length, 5);
  await scan(t, 'journey-abandoned-cart-built');
});

t.test('run with the scaled clock: the pro emailed, the free texted, the buyer nothing; the canvas counts it', async (t) => {
  if (!campaignId) return t.fail('the campaign was activated');
  const track = async (userId: string, event: string) => {
    const r = await s.req('POST', '/track', { token: key.key, body: { userId, event } });
    if (r.status !== 201) throw new Error(`track ${event} ${userId}: ${r.status} ${r.text}`);
  };
  for (const who of ['pro', 'free', 'buyer']) await track(who, 'cart_abandoned');
  // Within the (scaled) 2 days: the buyer's wait resumes by the event.
  await track('buyer', 'purchase_completed');

  // What the page shows: each node's counts, each branch's took, as the timeouts pass.
  const stats = (id: string, text: string) => node(id).locator('.flow-stats').filter({ hasText: text }).waitFor({ timeout: 60_000 });
  await stats('wait_for_event-1', '3 entered · 3 completed');
  await stats('split-1', '2 entered · 2 completed');
  await stats('email-1', '1 entered · 1 completed');
  await stats('sms-1', '1 entered · 1 completed');
  await stats('exit-1', '2 entered · 2 completed');
  t.pass('the per-node counts on the canvas: 3 waited, 2 split, 1 emailed, 1 texted, 2 exited');
  t.equal((await edge('wait_for_event-1:on_event').textContent())?.trim(), 'event 1', 'one left the wait by the event');
  t.equal((await edge('wait_for_event-1:on_timeout').textContent())?.trim(), 'timeout 2', 'two by the timeout');
  t.equal((await edge('split-1:yes').textContent())?.trim(), 'yes 1', 'one pro');
  t.equal((await edge('split-1:no').textContent())?.trim(), 'no 1', 'one not');

  // The messages: one email to the pro, one SMS to the free, none to the buyer.
  const messages = await eventually(async () => {
    const m = await s.req('GET', `/workspaces/${ws.id}/campaigns/${campaignId}/messages?limit=50`, { token: ws.token });
    const list = (m.body.messages ?? []) as { external_id: string; channel: string; status: string }[];
    return list.length >= 2 ? list : null;
  }, 30_000);
  t.same((messages ?? []).map((m) => `${m.external_id}:${m.channel}`).sort(), ['free:sms', 'pro:email'], 'the pro got the email, the free the SMS, the buyer nothing');
  t.same((messages ?? []).filter((m) => m.status !== 'sent' && m.status !== 'delivered'), [], 'both sent by the sandbox providers');
  await scan(t, 'journey-abandoned-cart-ran');
});

t.test('console', async (t) => {
  t.same(problems, [], 'no console errors');
});

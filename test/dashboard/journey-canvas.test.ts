// The journey canvas in a real browser against a real Herald: a journey built on the canvas
// (event trigger → split on traits.plan → email or exit) from the palette, one way out
// connected by dragging its handle and one from the keyboard (the side panel's select), a step
// removed and one moved with the keyboard; the server's refusal shown on the node it names;
// saved, activated, the definition read back through the API; the running campaign's per-node
// counts on the nodes; a wait for an event and a random split added and set up on the canvas,
// an edge removed from the keyboard, the first step changed by dragging the trigger; the list view
// showing the same graph. An accessibility scan at 1280 px and at phone width; no console errors.
import t from 'tap';
import { newKey, newWorkspace } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';
import { canvasOf } from '../helpers/canvas.js';

t.setTimeout(300_000);
const { browser, s, page, problems, scan, visited, h1, countOf, visible } = await dashboardSuite(t);
const ws = await newWorkspace(s, 'Journeys');
const key = await newKey(s, ws, { name: 'server', permissions: ['*'] });
const asWs = { token: ws.token, headers: { 'X-Workspace-ID': ws.id } };

for (const [userId, plan] of [['ada', 'pro'], ['grace', 'free']] as const) {
  const r = await s.req('POST', '/identify', { token: key.key, body: { userId, email: `${userId}@example.com`, traits: { first_name: userId, plan } } });
  if (r.status !== 200) throw new Error(`identify ${userId}: ${r.status} ${r.text}`);
}

const { node, handle, drag } = canvasOf(page);
/** Selects step `id` from the keyboard: focus, then Enter. */
async function select(id: string) {
  await node(id).focus();
  await page.keyboard.press('Enter');
  await page.getByRole('complementary', { name: 'Step settings' }).getByRole('heading').filter({ hasText: id }).waitFor();
}
const panel = page.getByRole('complementary', { name: 'Step settings' });
const campaignIdOf = () => /campaigns\/([0-9a-f-]{36})$/.exec(new URL(page.url()).pathname)?.[1] ?? '';

await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/new#token=${ws.token}`);
await h1('New campaign');

t.test('a journey built on the canvas, refused at its node, activated, counted', async (t) => {
  await page.getByLabel('Name', { exact: true }).fill('Plans');
  await page.getByLabel('Event names').fill('cart_abandoned');
  await page.getByRole('button', { name: 'Canvas', exact: true }).click();
  t.equal(await page.getByRole('button', { name: 'Canvas', exact: true }).getAttribute('aria-pressed'), 'true', 'the canvas view is on');
  await node('push-1').waitFor();

  // The default push step removed from the keyboard.
  await select('push-1');
  await page.keyboard.press('Delete');
  await node('push-1').waitFor({ state: 'detached' });
  t.pass('Delete removes the selected step');

  // The palette, by keyboard: each button adds a step (and selects it).
  const palette = page.getByRole('group', { name: 'Add a step' });
  for (const what of ['Split', 'Email', 'Exit']) {
    await palette.getByRole('button', { name: `Add ${what}`, exact: true }).focus();
    await page.keyboard.press('Enter');
  }
  await node('exit-1').waitFor();
  t.equal(await countOf(page.locator('.react-flow__node'), 4), 4, 'the trigger and three steps drawn');
  await panel.getByRole('heading').filter({ hasText: 'exit-1' }).waitFor();
  t.pass('a step added is selected, its settings in the side panel');

  // yes → the email, by dragging its handle onto the email's entry.
  await drag(handle('split-1', 'yes'), handle('email-1', 'in'));
  await page.locator('.react-flow__edge[data-id="split-1:yes"]').waitFor();
  t.pass('dragging the yes handle onto the email connects them');
  // no → exit, from the keyboard: the side panel's select.
  await select('split-1');
  await panel.getByLabel('Step 1 (Split): no leads to').selectOption('exit-1');
  await page.locator('.react-flow__edge[data-id="split-1:no"]').waitFor();
  t.pass("the side panel's select connects no to the exit");
  await panel.getByRole('button', { name: 'Add step 1 (split): condition' }).click();
  await panel.getByLabel('Step 1 (Split): condition 1: field').fill('traits.plan');
  await panel.getByLabel('Step 1 (Split): condition 1: value').fill('pro');
  t.match(await node('split-1').textContent(), 'traits.plan', 'the split says what it splits on');

  // The email's html, not its subject: activation is refused, at the email's node.
  await select('email-1');
  await panel.getByLabel('Step 2 (Email): HTML').fill('<p>Hi {{ person.first_name }}</p><a href="{{ unsubscribe_url }}">Unsubscribe</a>');
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByRole('alert').filter({ hasText: 'The campaign cannot be activated' }).waitFor();
  await node('email-1').locator('.error').filter({ hasText: 'a subject is needed' }).waitFor();
  t.match(await node('email-1').getAttribute('aria-label'), /problems: .*a subject is needed/, "the problem is in the node's accessible name");
  t.equal(await node('split-1').locator('.error').count(), 0, 'the split, which is right, shows none');
  t.equal(await panel.getByLabel('Step 2 (Email): Subject').getAttribute('aria-invalid'), 'true', 'the side panel marks the field');
  await scan(t, 'journey-canvas-refused');

  await panel.getByLabel('Step 2 (Email): Subject').fill('For {{ person.first_name }}');
  // The exit moved with the keyboard (its position is kept in its node).
  await select('exit-1');
  await page.keyboard.press('ArrowRight');
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.getByRole('status').filter({ hasText: 'Activated' }).waitFor();
  const id = campaignIdOf();
  const saved = (await s.req('GET', `/campaigns/${id}`, asWs)).body.data.campaign;
  t.equal(saved.status, 'active');
  const nodes = saved.workflow_definition.nodes as Record<string, unknown>[];
  t.same(nodes.map((n) => n.id), ['split-1', 'email-1', 'exit-1'], 'the steps in the order added');
  t.same(nodes[0], { id: 'split-1', type: 'split', yes: 'email-1', no: 'exit-1', condition: { match: 'all', filters: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }] } }, 'the split as built');
  t.match(nodes[1], { id: 'email-1', type: 'email', subject: 'For {{ person.first_name }}' }, 'the email as written');
  t.equal(nodes[1]!.next, undefined, "the email's way out is the list's next step (the exit), not written");
  t.match(nodes[2], { id: 'exit-1', type: 'exit', position: { x: Number, y: Number } }, "the exit's position, moved, kept in its node");

  // Two people enter: Ada (pro) gets the email, Grace (free) exits; the counts show on the nodes.
  for (const who of ['ada', 'grace']) t.equal((await s.req('POST', '/track', { token: key.key, body: { event: 'cart_abandoned', external_id: who } })).status, 201);
  await node('split-1').locator('.flow-stats').filter({ hasText: '2 entered · 2 completed' }).waitFor({ timeout: 30_000 });
  await node('email-1').locator('.flow-stats').filter({ hasText: '1 entered' }).waitFor({ timeout: 30_000 });
  await node('exit-1').locator('.flow-stats').filter({ hasText: '2 entered' }).waitFor({ timeout: 30_000 });
  t.pass('the per-node counts show on the nodes while the campaign runs');
  t.match(await page.locator('.react-flow__edge[data-id="split-1:yes"]').textContent(), '1', "the yes edge says how many took it");
  await scan(t, 'journey-canvas-running');
});

t.test('a wait for an event added and set up on the canvas', async (t) => {
  await page.getByRole('group', { name: 'Add a step' }).getByRole('button', { name: 'Add Wait for event' }).click();
  await node('wait_for_event-1').waitFor();
  await panel.getByLabel('Step 4 (Wait for event): event name').fill('purchase_completed');
  await panel.getByLabel('Step 4 (Wait for event): timeout', { exact: true }).fill('2d');
  await panel.getByLabel('Step 4 (Wait for event): event leads to').selectOption('exit-1');
  await panel.getByLabel('Step 4 (Wait for event): timeout leads to').selectOption('email-1');
  t.match(await node('wait_for_event-1').textContent(), 'purchase_completed, at most 2d', 'the node says what it waits for');
  t.ok(await visible(page.locator('.react-flow__edge[data-id="wait_for_event-1:on_event"]')), 'its event way out drawn');
  t.ok(await visible(page.locator('.react-flow__edge[data-id="wait_for_event-1:on_timeout"]')), 'its timeout way out drawn');
  // Removed from the side panel: nothing of it is left (it is not saved here: the API takes it after this round's merge).
  await panel.getByRole('button', { name: 'Remove Step 4 (Wait for event)' }).click();
  await node('wait_for_event-1').waitFor({ state: 'detached' });
  t.equal(await page.locator('.react-flow__edge[data-id^="wait_for_event-1"]').count(), 0, 'and its edges with it');
});

t.test('a random split: a handle per branch; an edge removed from the keyboard', async (t) => {
  await page.getByRole('group', { name: 'Add a step' }).getByRole('button', { name: 'Add Random split' }).click();
  await node('random_split-1').waitFor();
  t.equal(await node('random_split-1').locator('.react-flow__handle.source').count(), 2, 'two branches, a handle each');
  await panel.getByRole('button', { name: 'Add a branch to Step 4 (Random split)' }).click();
  await panel.getByLabel('Step 4 (Random split): branch C weight').fill('20');
  t.equal(await node('random_split-1').locator('.react-flow__handle.source').count(), 3, 'a third branch, a third handle');
  await drag(handle('random_split-1', 'branch-0'), handle('email-1', 'in'));
  const edge = page.locator('.react-flow__edge[data-id="random_split-1:branch-0"]');
  await edge.waitFor();
  t.equal(await panel.getByLabel('Step 4 (Random split): branch A leads to').inputValue(), 'email-1', 'the side panel shows the branch dragged');
  await edge.focus();
  await page.keyboard.press('Enter');
  await page.keyboard.press('Delete');
  await edge.waitFor({ state: 'detached' });
  await select('random_split-1');
  t.equal(await panel.getByLabel('Step 4 (Random split): branch A leads to').inputValue(), '', 'the edge removed unsets the branch');
  // The trigger dragged onto the random split makes it the first step, and back onto the split.
  await drag(handle('__start', 'next'), handle('random_split-1', 'in'));
  await panel.getByRole('heading', { name: 'Step 1 (Random split) random_split-1' }).waitFor();
  t.equal(await page.locator('.react-flow__edge[data-id="__start:next"]').getAttribute('aria-label'), 'Edge from __start to random_split-1', 'the trigger leads to it');
  await drag(handle('__start', 'next'), handle('split-1', 'in'));
  await panel.getByRole('heading', { name: 'Step 2 (Random split) random_split-1' }).waitFor();
  t.pass('the split is first again');
  await select('random_split-1');
  await page.keyboard.press('Backspace');
  await node('random_split-1').waitFor({ state: 'detached' });
  t.pass('Backspace removes the selected step too');
});

t.test('the list view: the same journey, for a screen reader', async (t) => {
  await page.getByRole('button', { name: 'List', exact: true }).click();
  const split = page.getByRole('listitem', { name: 'Step 1 (Split)' });
  t.equal(await split.getByLabel('Step 1 (Split): yes leads to').inputValue(), 'email-1', 'yes leads to the email');
  t.equal(await split.getByLabel('Step 1 (Split): no leads to').inputValue(), 'exit-1', 'no leads to the exit');
  // The order changed twice above, so the email's way out, the list's next step, was written.
  t.equal(await page.getByRole('listitem', { name: 'Step 2 (Email)' }).getByLabel('Step 2 (Email): then').inputValue(), 'exit-1', "the email's next, written when the first step changed");
  await scan(t, 'journey-list');
  await page.getByRole('button', { name: 'Canvas', exact: true }).click();
  await node('split-1').waitFor();
  await page.reload();
  await h1('Plans');
  await node('split-1').waitFor();
  t.pass('a saved journey opens on the canvas');
  await scan(t, 'journey-canvas-saved');
});

t.test('phone width and console', async (t) => {
  await checkAtPhoneWidth(t, browser, `${s.base}/dashboard/w/${ws.id}/campaigns#token=${ws.token}`, visited);
  // The one refusal asked for (the activation without a subject) is logged by the browser.
  t.equal(problems.filter((p) => /status of 400/.test(p)).length, 1, 'one refused activation');
  t.same(problems.filter((p) => !/status of 400/.test(p)), [], 'no console errors but that');
});

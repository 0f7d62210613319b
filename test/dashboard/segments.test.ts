// Segments in a real browser against a real Herald (docs/audiences.md): reached from the People
// page; a segment built with a trait condition, an event count in a window and a nested group,
// saved as the tree the API takes; its live count and a member shown once computed; a bad
// window refused at its row; the segment chosen as a campaign's audience in the builder (its
// count previewed, saved as audience_config {segment_id}); deleting it while a live campaign
// targets it refused beside the button with what to do; another deleted. Each page gets an accessibility scan,
// also at phone width, and no page may log a console error.
import t from 'tap';
import { newKey, newWorkspace } from '../helpers/server.js';
import { checkAtPhoneWidth, dashboardSuite } from '../helpers/browser.js';

t.setTimeout(300_000);
const { browser, s, page, problems, visited, scan, h1 } = await dashboardSuite(t);
const ws = await newWorkspace(s, 'Segments');
const key = await newKey(s, ws, { permissions: ['*'] });
const hdr = { token: ws.token, headers: { 'x-workspace-id': ws.id } };

async function identify(userId: string, traits: Record<string, unknown>) {
  const r = await s.req('POST', '/identify', { token: key.key, body: { userId, traits } });
  if (r.status !== 200) throw new Error(r.text);
}
async function track(userId: string, event: string) {
  const r = await s.req('POST', '/track', { token: key.key, body: { userId, event } });
  if (r.status !== 201) throw new Error(r.text);
}
await identify('ann', { plan: 'pro', city: 'Oslo' });
await identify('bob', { plan: 'pro', city: 'Bergen' });
await identify('cy', { plan: 'free', city: 'Oslo' });
for (const who of ['ann', 'ann', 'bob', 'cy', 'cy']) await track(who, 'purchase');

const PRO_BUYERS = {
  all: [
    { field: 'traits.plan', operator: 'eq', value: 'pro' },
    { event: { name: 'purchase', count: { op: 'gte', value: 2 }, within: '30d' } },
    { any: [{ field: 'traits.city', operator: 'exists' }, { has_channel: 'sms' }] },
  ],
};
let segmentId = '';

t.test('a segment built from the People page: its tree, count and a member', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/people#token=${ws.token}`);
  await h1('People');
  // Linked from People (the header holds one row at 1280 px).
  await page.getByRole('link', { name: 'Segments', exact: true }).click();
  await h1('Segments');
  await page.getByText('No segments yet.').waitFor();
  await scan(t, 'segments-empty');

  await page.getByLabel('Segment name').fill('Pro buyers');
  await page.getByRole('button', { name: 'Add segment condition', exact: true }).click();
  await page.getByLabel('Segment condition 1: field').fill('traits.plan');
  await page.getByLabel('Segment condition 1: value').fill('pro');
  t.equal(await page.getByLabel('Segment condition 1: operator').locator('option[value="performed_count_gte"]').count(), 0, 'event counts are rows of their own here, with a window');
  await page.getByRole('button', { name: 'Add event count to segment', exact: true }).click();
  await page.getByLabel('Segment row 1: event name').fill('purchase');
  await page.getByLabel('Segment row 1: performed').selectOption({ label: 'at least' });
  await page.getByLabel('Segment row 1: times').fill('2');
  await page.getByLabel('Segment row 1: in the last').fill('30d');
  await page.getByRole('button', { name: 'Add group to segment', exact: true }).click();
  await page.getByLabel('Segment group 2: people must match').selectOption('any');
  await page.getByRole('button', { name: 'Add segment group 2 condition', exact: true }).click();
  await page.getByLabel('Segment group 2 condition 1: field').fill('traits.city');
  await page.getByLabel('Segment group 2 condition 1: operator').selectOption('exists');
  await page.getByRole('button', { name: 'Add reachability to segment group 2', exact: true }).click();
  await page.getByLabel('Segment group 2 row 1: reachable by').selectOption('sms');
  await scan(t, 'segment-builder');
  await page.getByRole('button', { name: 'Create segment' }).click();

  await h1('Pro buyers');
  segmentId = /segments\/([0-9a-f-]{36})$/.exec(new URL(page.url()).pathname)?.[1] ?? '';
  const saved = await s.req('GET', `/workspaces/${ws.id}/segments/${segmentId}`, { token: ws.token });
  t.same(saved.body.data.segment.conditions, PRO_BUYERS, 'saved as the tree the API takes, nested group included');
  // Ann alone: Bob bought once, Cy is on the free plan.
  await page.getByText('1 member ·').waitFor({ timeout: 30_000 });
  await page.getByRole('list', { name: 'Segment members' }).getByRole('link', { name: 'ann', exact: true }).waitFor();
  t.equal(await page.getByRole('list', { name: 'Segment members' }).getByRole('listitem').count(), 1, 'one member shown');
  await page.getByText('ready', { exact: true }).waitFor();
  await scan(t, 'segment');

  // The tree read back into the editor; a bad window is refused at its row.
  t.equal(await page.getByLabel('Segment group 2: people must match').inputValue(), 'any', 'the nested group as saved');
  await page.getByLabel('Segment row 1: in the last').fill('99y');
  await page.getByRole('button', { name: 'Save segment' }).click();
  await page.locator('li.cond .error').filter({ hasText: /must be a window such as "30d"/ }).waitFor();
  t.pass('the refusal shown at the event row');
  // Two purchases ever: Bob (one) still out; a new one makes him a member as the count changes.
  await page.getByLabel('Segment row 1: in the last').fill('');
  await page.getByLabel('Segment row 1: times').fill('1');
  await page.getByRole('button', { name: 'Save segment' }).click();
  await page.getByText('Saved: its members are being computed again.').waitFor();
  await page.getByText('2 members ·').waitFor({ timeout: 30_000 });
  await page.getByRole('list', { name: 'Segment members' }).getByRole('link', { name: 'bob', exact: true }).waitFor();
  t.pass('computed again: Bob entered');

  await page.getByRole('link', { name: '← Segments' }).click();
  await h1('Segments');
  const row = page.getByRole('row', { name: /Pro buyers/ });
  await row.getByRole('cell', { name: '2', exact: true }).waitFor();
  await row.getByText('ready').waitFor();
  await scan(t, 'segments');
});

t.test('the segment as a campaign audience; deleting it while a campaign is live is refused, another deleted', async (t) => {
  await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/new`);
  await h1('New campaign');
  await page.getByLabel('Name', { exact: true }).fill('To pro buyers');
  await page.getByRole('radio', { name: /^Webhook/ }).check();
  await page.getByRole('radio', { name: 'A saved segment' }).check();
  await page.getByLabel('Segment', { exact: true }).selectOption({ label: 'Pro buyers (2 members)' });
  await page.getByText('2 people match now.').waitFor();
  await page.getByLabel('Audience preview').getByRole('link', { name: 'ann' }).waitFor();
  await scan(t, 'campaign-segment-audience');
  await page.getByRole('button', { name: 'Save as draft' }).click();
  await page.getByText('Saved as a draft.').waitFor();
  const campaignId = /campaigns\/([0-9a-f-]{36})$/.exec(new URL(page.url()).pathname)?.[1] ?? '';
  const c = await s.req('GET', `/campaigns/${campaignId}`, hdr);
  t.same(c.body.data.campaign.audience_config, { segment_id: segmentId }, 'saved as audience_config {segment_id}');
  // Opened again, the builder shows the segment chosen.
  await page.reload();
  await h1('To pro buyers');
  t.equal(await page.getByLabel('Segment', { exact: true }).inputValue(), segmentId, 'the segment shown when opened again');

  // Live (a workflow that sends nothing while the test runs), the campaign holds the segment.
  const live = await s.req('PUT', `/campaigns/${campaignId}`, { ...hdr, body: { workflow_definition: { nodes: [{ id: 'wait', type: 'delay', minutes: 60 }, { id: 'hello', type: 'push', title: 'Hi', body: 'Welcome' }] }, status: 'active' } });
  t.equal(live.status, 200, live.text);
  await page.goto(`${s.base}/dashboard/w/${ws.id}/segments/${segmentId}`);
  await h1('Pro buyers');
  await page.getByRole('button', { name: 'Delete segment' }).click();
  await page.getByRole('alert').filter({ hasText: /To pro buyers.*pause them or change their audience first/ }).waitFor();
  t.pass('the refusal beside the button, naming the campaign and what to do');
  await scan(t, 'segment-in-use');
  t.equal((await s.req('GET', `/workspaces/${ws.id}/segments/${segmentId}`, { token: ws.token })).status, 200, 'still there');

  // One no campaign targets is deleted.
  const spare = await s.req('POST', `/workspaces/${ws.id}/segments`, { token: ws.token, body: { name: 'Spare', conditions: { all: [{ has_channel: 'push' }] } } });
  t.equal(spare.status, 201, spare.text);
  await page.goto(`${s.base}/dashboard/w/${ws.id}/segments/${spare.body.data.segment.id}`);
  await h1('Spare');
  await page.getByRole('button', { name: 'Delete segment' }).click();
  await h1('Segments');
  await page.getByRole('link', { name: 'Pro buyers' }).waitFor();
  t.equal(await page.getByRole('link', { name: 'Spare' }).count(), 0, 'gone from the list');
  t.equal((await s.req('GET', `/workspaces/${ws.id}/segments/${spare.body.data.segment.id}`, { token: ws.token })).status, 404, 'deleted');
});

t.test('at phone width, and no console errors', async (t) => {
  await checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${ws.token}`, visited);
  // The browser logs every 4xx answer: the bad window's 400 and the delete's 409 are the only ones.
  const refused = problems.filter((p) => /status of (400|409) .*\/segments\//.test(p));
  t.equal(refused.length, 2, 'the refused save and the refused delete');
  t.same(problems.filter((p) => !refused.includes(p)), [], 'no other console errors');
});

// The dashboard's pages for running a workspace, in a real browser against a real Herald:
// members (list, add, change a role, remove; a refused change says why). Each page gets an
// accessibility scan and a screenshot, at 1280 px and at phone width, and no page may log a
// console error.
import t, { type Test } from 'tap';
import { newWorkspace, startServer } from '../helpers/server.js';
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

t.test('phone width: every page fits and passes the scan', (t) => checkAtPhoneWidth(t, browser, `${s.base}/dashboard/#token=${ws.token}`, visited));

t.test('no console errors on any page', async (t) => {
  // The browser logs every 4xx answer; the refusals the flows asked for are the only ones.
  const refused = problems.filter((p) => /status of 400/.test(p));
  t.equal(refused.length, 1, "the owner's role");
  t.same(problems.filter((p) => !refused.includes(p)), [], 'nothing else');
});

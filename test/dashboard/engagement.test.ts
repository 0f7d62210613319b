// Herald's own tracking end to end in a real browser (docs/tracking.md): a campaign email sent
// through a real SMTP relay, its wrapped link taken from the mail received and followed by the
// browser (a 302 to the landing page the test serves), then the click shown on the campaign's
// analytics page: in the funnel and among the links, with the URL the mail pointed at.
import t from 'tap';
import { createServer } from 'node:http';
import { eventually, newKey, newWorkspace, triggerWebhookCampaign } from '../helpers/server.js';
import { dashboardSuite } from '../helpers/browser.js';
import { hrefs, htmlOf, startInbox } from '../fakes/smtp-inbox.js';

const inbox = await startInbox();
t.teardown(() => inbox.close());
// The shop's landing page the link points at.
const landing = createServer((_, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Spring sale</title><h1>Spring sale</h1>'));
await new Promise<void>((r) => landing.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => landing.close(() => r())));
const target = `http://127.0.0.1:${(landing.address() as { port: number }).port}/spring-sale?from=mail`;

const { s, page, h1 } = await dashboardSuite(t);
const ws = await newWorkspace(s, 'Engagement');
const key = await newKey(s, ws, { name: 'server', permissions: ['*'] });
const relay = await s.req('PUT', `/workspaces/${ws.id}/channels/email`, { token: ws.token, body: { smtp: { host: '127.0.0.1', port: inbox.port, security: 'none' }, from: { email: 'news@shop.example' } } });
if (relay.status !== 200) throw new Error(`email channel: ${relay.status} ${relay.text}`);
const person = await s.req('POST', '/identify', { token: key.key, body: { userId: 'ada', email: 'ada@example.com' } });
if (person.status !== 200) throw new Error(`identify: ${person.status} ${person.text}`);

t.test("a link in a received mail, followed by the browser, is a click on the campaign's analytics page", async (t) => {
  const html = `<html><body><p>Hello</p><a href="${target}">See the sale</a> <a href="{{ unsubscribe_url }}">Unsubscribe</a></body></html>`;
  const campaignId = await triggerWebhookCampaign(s, ws, key.key, { id: 'mail', type: 'email', subject: 'Spring sale', html });
  t.ok(await eventually(async () => inbox.mails.length === 1, 30_000), 'the mail reached the relay');
  const links = hrefs(htmlOf(inbox.mails[0]!.data));
  const wrapped = links.find((l) => l.includes('/t/c/'));
  t.ok(wrapped, `the sale link is wrapped (${links.join(' ')})`);
  t.notOk(links.includes(target), 'the target itself is not in the mail');

  // A click within 2 s of the send is a link scanner's: a person reads first.
  await new Promise((r) => setTimeout(r, 2_500));
  await page.goto(wrapped!);
  t.equal(page.url(), target, 'the browser landed on the link the mail was written with');
  await page.getByRole('heading', { name: 'Spring sale' }).waitFor();

  await page.goto(`${s.base}/dashboard/w/${ws.id}/campaigns/${campaignId}/analytics#token=${ws.token}`);
  await h1('Analytics: Mail');
  const funnel = page.getByRole('table', { name: /^Funnel/ });
  const clicked = funnel.getByRole('row', { name: /^Clicked/ }).getByRole('cell').first();
  await funnel.waitFor();
  t.ok(await eventually(async () => (await clicked.textContent())?.trim() === '1' || (await page.reload(), false), 15_000), 'the funnel counts the click');
  const row = page.getByRole('table', { name: /links clicked most/ }).getByRole('row').nth(1);
  t.same((await row.getByRole('cell').allTextContents()).map((c) => c.trim()), [target, '1', '1'], 'the link, its click and its unique click');
});

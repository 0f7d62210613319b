// Herald's own opens and clicks (docs/tracking.md) with a real SMTP relay: the mail received has
// its links wrapped and a pixel; following a link answers 302 to the target stored with the
// message, and the click shows on the message and in the campaign's stats, and reaches a
// webhook receiver; forged, altered and other workspaces' tokens are 404; the unsubscribe and
// preference links and links marked data-herald-track="off" are left as they are; tracking off
// wraps nothing; a machine's open or click is recorded `machine: true` and not counted unique.
import t from 'tap';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { NO_LIMITS } from '../helpers/assert.js';
import { startServer, storeUrl, triggerWebhookCampaign, until, workspaceWithKeys } from '../helpers/server.js';
import { ownDatabase } from '../helpers/database.js';
import { receiver } from '../helpers/webhook-receiver.js';
import { hrefs, htmlOf, startInbox } from '../fakes/smtp-inbox.js';
import { startFakeTwilio } from '../fakes/fake-twilio.js';
import { unsubscribeKey } from '../../src/channels/email/unsubscribe.js';
import { clickToken } from '../../src/channels/tracking-links.js';

const inbox = await startInbox();
t.teardown(() => inbox.close());
const { mails, port: smtpPort } = inbox;

const SID = `AC${'cd'.repeat(16)}`;
const twilio = await startFakeTwilio({ [SID]: 'tw-token' });
t.teardown(() => twilio.close());

const PUBLIC = 'https://herald.example.com';
// Known here so that a push's token (which no received message shows: the sandbox keeps nothing) can be made as Herald makes it.
const SECRETS_KEY = randomBytes(32);
const DB = await ownDatabase(t);
const s = await startServer({ ...NO_LIMITS, ...DB, HERALD_PUBLIC_URL: PUBLIC, HERALD_TWILIO_ENDPOINT: twilio.url, HERALD_SECRETS_KEY: SECRETS_KEY.toString('hex') });
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s, DB) });
await sql.connect();
t.teardown(() => sql.end());

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

/** A link of the mail, as the person's browser follows it (to this server rather than the public URL). */
const follow = (url: string, agent = BROWSER) => fetch(url.replace(PUBLIC, s.base), { redirect: 'manual', headers: { 'user-agent': agent } });

const HTML =
  '<html><body><p>Hello {{ person.email }}</p><a href="https://shop.example/sale?x=1&amp;y=2">Sale</a> <a href="https://docs.example/guide">Guide</a>'
  + '<a data-herald-track="off" href="https://kept.example/raw">Raw</a> <a href="mailto:help@shop.example">Mail us</a>'
  + '<a href="{{ unsubscribe_url }}">Unsubscribe</a> <a href="{{ preferences_url }}">Preferences</a></body></html>';

/** A workspace with the SMTP relay, a person, `configure` applied, then a one-email campaign sent: the mail and the message row. */
async function sendOne(email: string, configure: (ws: { id: string; token: string }) => Promise<void> = async () => {}) {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  const put = await s.req('PUT', `/workspaces/${k.ws.id}/channels/email`, { token: k.ws.token, body: { smtp: { host: '127.0.0.1', port: smtpPort, security: 'none' }, from: { email: 'news@shop.example' } } });
  t.equal(put.status, 200, put.text);
  await configure(k.ws);
  const p = await s.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: email, email }] } });
  t.equal(p.status, 200, p.text);
  const campaignId = await triggerWebhookCampaign(s, k.ws, k.trigger, { id: 'mail', type: 'email', subject: 'Sale', html: HTML });
  const mail = await until(async () => mails.find((m) => m.to.includes(email)));
  const row = await until(async () => (await sql.query('SELECT id, sent_at, links FROM messages WHERE campaign_id = $1 AND sent_at IS NOT NULL', [campaignId])).rows[0]);
  return { ws: k.ws, campaignId, html: htmlOf(mail.data), message: row as { id: string; sent_at: Date; links: string[] } };
}

const statsOf = async (ws: { id: string; token: string }, campaignId: string) =>
  (await s.req('GET', `/campaigns/${campaignId}`, { token: ws.token, headers: { 'x-workspace-id': ws.id } })).body.data.stats as { opened: number; clicked: number };
const messageOf = async (ws: { id: string; token: string }, campaignId: string) =>
  (await s.req('GET', `/workspaces/${ws.id}/campaigns/${campaignId}/messages`, { token: ws.token })).body.messages[0] as { events: { type: string; machine?: true; details: Record<string, unknown> }[]; opens?: number; clicks?: number };

let genuine = { click: '', open: '', ws: { id: '', token: '' } };

t.test('the mail: links wrapped, a pixel; a click is 302 to the stored target, on the message, in the stats, to the webhook', async (t) => {
  const hook = await receiver(t);
  const { ws, campaignId, html, message } = await sendOne('ann@example.com', async (ws) => {
    const e = await s.req('POST', `/workspaces/${ws.id}/webhooks`, { token: ws.token, body: { url: hook.url, event_types: ['message.opened', 'message.clicked'] } });
    t.equal(e.status, 201, e.text);
    hook.secrets.push(e.body.data.secret);
  });
  const links = hrefs(html);
  const tracked = links.filter((h) => h.startsWith(`${PUBLIC}/t/c/`));
  t.equal(tracked.length, 2, 'the two web links are wrapped');
  t.ok(links.includes('https://kept.example/raw'), 'data-herald-track="off" is left as it is');
  t.ok(links.includes('mailto:help@shop.example'), 'mailto is left as it is');
  t.ok(links.some((h) => h.startsWith(`${PUBLIC}/u/`)), 'the unsubscribe link is left as it is');
  t.ok(links.some((h) => h.startsWith(`${PUBLIC}/p/`)), 'the preference link is left as it is');
  t.notOk(links.some((h) => h.startsWith('https://shop.example') || h.startsWith('https://docs.example')), 'no target is linked directly');
  t.same(message.links, ['https://shop.example/sale?x=1&y=2', 'https://docs.example/guide'], 'the targets are stored with the message');
  const pixel = /<img src="([^"]+)" width="1" height="1"/.exec(html)?.[1];
  t.match(pixel, new RegExp(`^${PUBLIC}/t/o/[A-Za-z0-9_-]+$`), 'the open pixel');
  t.match(html, /<img [^>]+><\/body>/, 'before </body>');

  // At once: a scanner's click (within 2 s of the send), recorded as a machine's.
  const first = await follow(tracked[0]!);
  const firstAt = Date.now();
  t.equal(first.status, 302);
  t.equal(first.headers.get('location'), 'https://shop.example/sale?x=1&y=2');
  const early = await until(async () => (await messageOf(ws, campaignId)).events.find((e) => e.type === 'clicked'));
  const fast = firstAt - message.sent_at.getTime() < 2_000;
  if (fast) t.equal(early.machine, true, 'a click within 2 s of the send is a machine\'s');
  else t.comment('the first click came more than 2 s after the send on this machine: recorded as a person\'s');
  // Apple Mail Privacy Protection's prefetch: a bare agent.
  const prefetch = await follow(pixel!, 'Mozilla/5.0');
  t.equal(prefetch.status, 200);
  t.equal(prefetch.headers.get('content-type'), 'image/gif');
  const gif = Buffer.from(await prefetch.arrayBuffer());
  t.equal(gif.subarray(0, 6).toString('latin1'), 'GIF89a', 'a GIF');
  t.equal(gif.readUInt16LE(6), 1, '1 wide');
  t.equal(gif.readUInt16LE(8), 1, '1 high');
  await until(async () => ((await messageOf(ws, campaignId)).events.some((e) => e.type === 'opened') ? true : undefined));
  t.match(await statsOf(ws, campaignId), { opened: 0, clicked: fast ? 0 : 1 }, 'machine opens and clicks are not counted unique');

  // The person, later: an open, a click, and the same link again.
  await until(async () => (Date.now() - message.sent_at.getTime() > 2_100 ? true : undefined));
  t.equal((await follow(pixel!)).status, 200);
  for (const link of [tracked[1]!, tracked[1]!]) {
    const r = await follow(`${link}?url=https://evil.example/`);
    t.equal(r.status, 302);
    t.equal(r.headers.get('location'), 'https://docs.example/guide', 'the stored target, whatever the query says');
  }
  const m = await until(async () => {
    const got = await messageOf(ws, campaignId);
    return got.events.filter((e) => e.type === 'clicked').length === 3 && got.events.filter((e) => e.type === 'opened').length === 2 ? got : undefined;
  });
  t.equal(m.clicks, fast ? 2 : 3, "every person's click counted on the message, repeats included");
  t.equal(m.opens, 1, "the person's open; the prefetch is not");
  t.match(m.events.filter((e) => e.type === 'clicked' && !e.machine).at(-1), { details: { url: 'https://docs.example/guide', link: 1 } });
  t.match(m.events.find((e) => e.type === 'opened' && e.machine), { machine: true }, 'the prefetch is kept, marked');
  t.match(await statsOf(ws, campaignId), { opened: 1, clicked: 1 }, 'unique per message');
  // With NATS_URL the Log's sink writes the person's events a moment after the append.
  const logged = await until(async () => {
    const r = await sql.query(`SELECT type, parameters FROM events WHERE workspace_id = $1 AND type LIKE 'message_%' ORDER BY created_at`, [ws.id]);
    return r.rows.length >= 5 ? r : undefined;
  });
  t.equal(logged.rows.length, 5, "each open and click is the person's event too");
  t.match(logged.rows.at(-1), { type: 'message_clicked', parameters: { message_id: message.id, url: 'https://docs.example/guide', machine: false } });

  t.ok(await hook.until((ds) => ds.filter((d) => d.event?.type === 'message.clicked').length >= 3 && ds.some((d) => d.event?.type === 'message.opened')), 'webhooks delivered');
  t.ok(hook.deliveries.every((d) => d.verifiedBy.length === 1), 'signed');
  t.match(hook.of('message.clicked')[0]!.event!.data, { message_id: message.id });
  genuine = { click: tracked[0]!, open: pixel!, ws };
});

t.test('forged, altered and other workspaces\' tokens are 404: nothing recorded, no redirect', async (t) => {
  const recorded = async () => (await sql.query('SELECT sum(jsonb_array_length(events))::int AS n FROM messages WHERE workspace_id = $1', [genuine.ws.id])).rows[0].n as number;
  const before = await recorded();
  const token = genuine.click.slice(`${PUBLIC}/t/c/`.length);
  const flip = (tok: string, at: number) => tok.slice(0, at) + (tok[at] === 'A' ? 'B' : 'A') + tok.slice(at + 1);
  const other = await sendOne('bob@example.com');
  const foreign = hrefs(other.html).find((h) => h.startsWith(`${PUBLIC}/t/c/`))!.slice(`${PUBLIC}/t/c/`.length);
  const unsubscribe = hrefs(other.html).find((h) => h.startsWith(`${PUBLIC}/u/`))!.slice(`${PUBLIC}/u/`.length);
  const bad = {
    'altered (the MAC)': flip(token, token.length - 3),
    'altered (the link index)': flip(token, 44),
    'altered (the message)': flip(token, 30),
    'another workspace named with this one\'s token': foreign.slice(0, 21) + token.slice(21),
    'made up': 'A'.repeat(token.length),
    'an unsubscribe token': unsubscribe,
    'an open token': genuine.open.slice(`${PUBLIC}/t/o/`.length),
    'too short': token.slice(0, 20),
  };
  for (const [what, tok] of Object.entries(bad)) {
    const r = await fetch(`${s.base}/t/c/${tok}?url=https://evil.example/`, { redirect: 'manual', headers: { 'user-agent': BROWSER } });
    t.equal(r.status, 404, what);
    t.equal(r.headers.get('location'), null, `${what}: no redirect`);
    t.match(await r.text(), /Link not recognised/);
  }
  const pixel = genuine.open.slice(`${PUBLIC}/t/o/`.length);
  t.equal((await fetch(`${s.base}/t/o/${flip(pixel, 40)}`)).status, 404, 'an altered pixel');
  t.equal((await fetch(`${s.base}/t/o/${token}`)).status, 404, 'a click token as a pixel');
  t.equal((await follow(`${PUBLIC}/t/c/${foreign}`)).status, 302, "the other workspace's own token works");
  t.equal(await recorded(), before, 'nothing recorded for the bad tokens');
});

t.test('settings.tracking: off wraps nothing; each key merges on its own', async (t) => {
  const { html } = await sendOne('cy@example.com', async (ws) => {
    const a = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { tracking: { clicks: false } } } });
    t.same(a.body.data.workspace.settings.tracking, { opens: true, clicks: false });
    const b = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { tracking: { opens: false } } } });
    t.same(b.body.data.workspace.settings.tracking, { opens: false, clicks: false }, 'clicks kept off');
    const bad = await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { tracking: { opens: 'yes' } } } });
    t.equal(bad.status, 400, bad.text);
  });
  t.notOk(html.includes('/t/'), 'no tracked link, no pixel');
  t.ok(hrefs(html).includes('https://shop.example/sale?x=1&y=2') && hrefs(html).includes('https://docs.example/guide'), 'the links as written');

  const opensOnly = await sendOne('di@example.com', async (ws) => {
    t.equal((await s.req('PUT', `/workspaces/${ws.id}`, { token: ws.token, body: { settings: { tracking: { clicks: false } } } })).status, 200);
  });
  t.notOk(hrefs(opensOnly.html).some((h) => h.includes('/t/c/')), 'clicks off: links as written');
  t.match(opensOnly.html, new RegExp(`<img src="${PUBLIC}/t/o/`), 'opens on: the pixel');
  t.equal(opensOnly.message.links, null, 'no links stored');
});

t.test("SMS: the body's links wrapped when clicks are on, and followed", async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  const put = await s.req('PUT', `/workspaces/${k.ws.id}/channels/sms`, { token: k.ws.token, body: { twilio: { account_sid: SID, auth_token: 'tw-token', from: '+15005550006' } } });
  t.equal(put.status, 200, put.text);
  t.equal((await s.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: 'eve', phone: '+14155550123' }] } })).status, 200);
  const campaignId = await triggerWebhookCampaign(s, k.ws, k.trigger, { id: 'text', type: 'sms', body: 'Sale today: https://shop.example/sms?a=1. Reply STOP to stop' });
  const sent = await until(async () => twilio.requests.find((r) => r.form.To === '+14155550123'));
  const m = new RegExp(`^Sale today: (${PUBLIC}/t/c/[A-Za-z0-9_-]{67})\\. Reply STOP to stop$`).exec(sent.form.Body ?? '');
  t.ok(m, `the link wrapped, the full stop kept: ${sent.form.Body}`);
  const row = await until(async () => (await sql.query('SELECT body, links FROM messages WHERE campaign_id = $1 AND sent_at IS NOT NULL', [campaignId])).rows[0]);
  t.same(row.links, ['https://shop.example/sms?a=1']);
  t.equal(row.body, 'Sale today: https://shop.example/sms?a=1. Reply STOP to stop', 'the record keeps the body as written');
  const r = await follow(m![1]!);
  t.equal(r.status, 302);
  t.equal(r.headers.get('location'), 'https://shop.example/sms?a=1');
});

t.test("push: a campaign push's web action_url is stored as a tracked link; its click redirects there", async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], all: ['*'] });
  t.equal((await s.req('POST', '/identify', { token: k.all, body: { userId: 'fay' } })).status, 200);
  const device = await s.req('POST', '/people/fay/devices', { token: k.all, body: { token: `tok-${randomBytes(8).toString('hex')}`, platform: 'android' } });
  t.ok(device.status === 200 || device.status === 201, device.text);
  const campaignId = await triggerWebhookCampaign(s, k.ws, k.trigger, [
    { id: 'web', type: 'push', title: 'Sale', body: 'Today', action_url: 'https://shop.example/app?from=push' },
    { id: 'deep', type: 'push', title: 'Sale', body: 'Today', action_url: 'shop://sale' },
  ]);
  const rows = await until(async () => {
    const r = await sql.query(`SELECT id, action_url, links, status FROM messages WHERE campaign_id = $1 AND status = 'sent' ORDER BY action_url`, [campaignId]);
    return r.rows.length === 2 ? r.rows : undefined;
  });
  const [web, deep] = [rows.find((r) => r.action_url.startsWith('https')), rows.find((r) => r.action_url.startsWith('shop'))];
  t.same(web.links, ['https://shop.example/app?from=push'], 'the web link stored; the record keeps action_url as written');
  t.equal(deep.links, null, 'an app link is not wrapped');
  const r = await follow(`${PUBLIC}/t/c/${clickToken(unsubscribeKey(SECRETS_KEY), { workspaceId: k.ws.id, messageId: web.id }, 0)}`);
  t.equal(r.status, 302);
  t.equal(r.headers.get('location'), 'https://shop.example/app?from=push');
});

// Email and SMS campaign nodes (docs/channels.md) sent for real: email to an SMTP server in the
// test (smtp-server, AUTH required, STARTTLS), SMS to a fake Twilio speaking its REST shapes and
// error codes. Checks the skip decisions in §13's order, the Message-ID and RFC 8058 headers,
// the text part derived from html, unsubscribe_url in scope, dead numbers suppressed.
import t from 'tap';
import pg from 'pg';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync, sign } from 'node:crypto';
import { createHmac } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import sendgrid from '@sendgrid/eventwebhook';
import twilioLib from 'twilio';
import { startServer, storeUrl, triggerWebhookCampaign, until, workspaceWithKeys } from '../helpers/server.js';
import { makeTlsCert } from '../fakes/tls.js';
import { ownDatabase } from '../helpers/database.js';
import { startFakeTwilio } from '../fakes/fake-twilio.js';
import { hhmm, localMinutes } from '../helpers/push.js';

const tls = makeTlsCert();
const dir = mkdtempSync(join(tmpdir(), 'herald-smtp-'));
writeFileSync(join(dir, 'ca.pem'), tls.cert);

const mails: { from: string; to: string[]; data: string }[] = [];
let busyAnswered = false;
const smtp = new SMTPServer({
  key: tls.key,
  cert: tls.cert,
  authMethods: ['PLAIN', 'LOGIN'],
  onAuth(auth, _s, cb) {
    cb(auth.username === 'relay' && auth.password === 'relay-pass' ? null : new Error('Invalid username or password'), { user: 'relay' });
  },
  onRcptTo(address, _s, cb) {
    // Busy once: a transient 4xx the sender must retry.
    if (address.address === 'busy@example.com' && !busyAnswered) {
      busyAnswered = true;
      return cb(Object.assign(new Error('4.7.1 Try again later'), { responseCode: 451 }));
    }
    if (address.address.startsWith('nobody@')) return cb(Object.assign(new Error('5.1.1 <nobody@example.com>: Recipient address rejected: User unknown'), { responseCode: 550 }));
    cb();
  },
  onData(stream, session, cb) {
    let data = '';
    stream.on('data', (d: Buffer) => (data += d.toString()));
    stream.on('end', () => {
      mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), data });
      cb();
    });
  },
});
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => smtp.close(() => r())));
const smtpPort = (smtp.server.address() as { port: number }).port;

const SID = `AC${'ab'.repeat(16)}`;
const twilio = await startFakeTwilio({ [SID]: 'tw-token' }, ['+15017122661']);
t.teardown(() => twilio.close());

const PUBLIC = 'https://herald.example.com';
// Its campaigns send: on DATABASE_URL, a database of its own (test/helpers/database.ts).
const DB = await ownDatabase(t);
const s = await startServer({ ...DB, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'), HERALD_TWILIO_ENDPOINT: twilio.url, HERALD_PUBLIC_URL: PUBLIC });
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s, DB) });
await sql.connect();
t.teardown(() => sql.end());

/** What the send tests leave for the callback tests. */
const sentEmail = { ws: { id: '', token: '' }, id: '', unsubscribe: '' };
const sentSms = { ws: { id: '', token: '' }, sid: '' };

/** A request to a route outside /api/v1, as a provider or a mail client sends it. */
const outside = (path: string, init: RequestInit = {}) => fetch(`${s.base}${path}`, { method: 'POST', ...init });

/** A webhook campaign of `node` (or of these nodes, in order) triggered for `people`; done when each node has recorded each person. */
async function runCampaign(node: object | object[], people: { userId: string; email?: string; phone?: string; traits?: Record<string, unknown> }[], configure: (wsId: string, token: string) => Promise<void>) {
  const nodes = Array.isArray(node) ? node : [node];
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  await configure(k.ws.id, k.ws.token);
  const r = await s.req('POST', '/people/batch', { token: k.write, body: { identify: people } });
  t.equal(r.status, 200, r.text);
  const id = await triggerWebhookCampaign(s, k.ws, k.trigger, nodes, { plan: 'Pro' });
  const rows = await until(async () => {
    const q = await sql.query('SELECT m.*, p.external_id AS who FROM messages m JOIN people p ON p.id = m.person_id WHERE m.campaign_id = $1', [id]);
    return q.rows.length === people.length * nodes.length ? q.rows : undefined;
  });
  return { ws: k.ws, campaignId: id, rows, byPerson: new Map(rows.map((x) => [x.who as string, x])) };
}

t.test('email over SMTP (AUTH, STARTTLS): headers, derived text, skips in order, 5.1.1 suppresses', async (t) => {
  const node = { id: 'mail', type: 'email', subject: 'Hi {{ person.email }}', html: '<p>Your {{ trigger.plan }} plan</p><a href="{{ unsubscribe_url }}">Unsubscribe</a>', preheader: 'Plan news' };
  const { ws, byPerson } = await runCampaign(node, [{ userId: 'ok', email: 'ok@example.com' }, { userId: 'none' }, { userId: 'dead', email: 'nobody@example.com' }, { userId: 'busy', email: 'busy@example.com' }], async (id, token) => {
    const r = await s.req('PUT', `/workspaces/${id}/channels/email`, { token, body: { smtp: { host: '127.0.0.1', port: smtpPort, security: 'starttls', username: 'relay', password: 'relay-pass' }, from: { email: 'news@herald.example', name: 'News' } } });
    t.equal(r.status, 200, r.text);
  });
  const ok = byPerson.get('ok');
  sentEmail.ws = ws;
  sentEmail.id = ok.id;
  t.match(ok, { channel: 'email', status: 'sent', provider: 'smtp', address: 'ok@example.com', title: 'Hi ok@example.com' });
  const found = mails.find((m) => m.to.includes('ok@example.com'));
  const mail = found && { ...found, data: found.data.replace(/\r\n[ \t]+/g, ' ') };
  t.ok(mail, 'the SMTP server got it');
  t.match(mail!.data, new RegExp(`Message-ID: <${ok.id}@herald\\.example>`, 'i'));
  t.match(mail!.data, new RegExp(`List-Unsubscribe: <${PUBLIC}/u/[A-Za-z0-9_-]{86}>`));
  t.match(mail!.data, /List-Unsubscribe-Post: List-Unsubscribe=One-Click/);
  sentEmail.unsubscribe = /List-Unsubscribe: <([^>]+)>/.exec(mail!.data)![1]!;
  t.match(mail!.data, /Content-Type: text\/plain[\s\S]*Your Pro plan/, 'the text part derived from html');
  t.match(byPerson.get('none'), { status: 'skipped', skip_reason: 'no_email_address' });
  t.match(byPerson.get('dead'), { status: 'failed', error: /5\.1\.1/ });
  t.match(byPerson.get('busy'), { status: 'sent' }, 'a 451 is retried');
  t.equal(mails.filter((m) => m.to.includes('busy@example.com')).length, 1, 'and delivered once');
  const sup = await sql.query('SELECT address, suppression_type FROM address_suppressions WHERE workspace_id = $1', [ws.id]);
  t.same(sup.rows, [{ address: 'nobody@example.com', suppression_type: 'invalid_address' }]);
});

t.test('email sandbox: the simulator addresses bounce and complain', async (t) => {
  const { ws, byPerson, campaignId } = await runCampaign({ id: 'mail', type: 'email', subject: 'S', text: 'T' }, [
    { userId: 'b', email: 'bounce@simulator.herald.test' },
    { userId: 'c', email: 'complaint@simulator.herald.test' },
    { userId: 'd', email: 'someone@example.com' },
  ], async () => {});
  t.match(byPerson.get('b'), { status: 'bounced', provider: 'sandbox' });
  t.match(byPerson.get('c'), { status: 'complained' });
  t.match(byPerson.get('d'), { status: 'delivered' });
  const got = await s.req('GET', `/campaigns/${campaignId}`, { token: ws.token, headers: { 'x-workspace-id': ws.id } });
  const email = { sent: 3, skipped: 0, policy_suppressed: 0, failed: 0, delivered: 2, bounced: 1, complained: 1, opened: 0, clicked: 0 };
  const none = { sent: 0, skipped: 0, policy_suppressed: 0, failed: 0, delivered: 0, bounced: 0, complained: 0, opened: 0, clicked: 0 };
  t.match(got.body.data.stats, { enrolled: 3, ...email, by_channel: { push: none, email, sms: none } }, 'stats by channel');
  const people = await sql.query('SELECT external_id, status, unsubscribe_reason FROM people WHERE workspace_id = $1 ORDER BY external_id', [ws.id]);
  t.same(people.rows.map((p) => [p.external_id, p.status, p.unsubscribe_reason]), [['b', 'bounced', null], ['c', 'unsubscribed', 'spam_complaint'], ['d', 'active', null]]);
  // The simulator's reports went through the provider callbacks' handling: the events a real
  // provider's callback writes (as the Postmark test below sees them), each a provider event applied once.
  t.same(['b', 'c', 'd'].map((who) => byPerson.get(who).events.map((e: { type: string }) => e.type)), [['hard_bounce'], ['complaint'], ['delivered']]);
  const played = await sql.query(`SELECT event_id FROM provider_events WHERE workspace_id = $1 AND provider = 'sandbox' ORDER BY event_id`, [ws.id]);
  t.same(played.rows.map((r) => r.event_id), [`${byPerson.get('b').id}:hard_bounce`, `${byPerson.get('c').id}:complaint`, `${byPerson.get('d').id}:delivered`].sort());
  const sup = await sql.query('SELECT address, suppression_type FROM address_suppressions WHERE workspace_id = $1 ORDER BY address', [ws.id]);
  t.same(sup.rows, [{ address: 'bounce@simulator.herald.test', suppression_type: 'hard_bounce' }, { address: 'complaint@simulator.herald.test', suppression_type: 'complaint' }]);
});

t.test("SMS sandbox: Twilio's test numbers answered as Twilio answers them, through the same handling", async (t) => {
  const { ws, byPerson } = await runCampaign({ id: 'text', type: 'sms', body: 'Hi' }, [
    { userId: 'invalid', phone: '+15005550001' },
    { userId: 'landline', phone: '+15005550009' },
    { userId: 'ok', phone: '+15017122665' },
  ], async () => {});
  t.match(byPerson.get('invalid'), { status: 'failed', provider: 'sandbox', address: '+15005550001', error: /^twilio 400 21211: / });
  t.match(byPerson.get('landline'), { status: 'failed', error: /^twilio 400 21614: / });
  const ok = byPerson.get('ok');
  t.match(ok, { status: 'delivered', provider_id: /^SM[0-9a-f]{32}$/ });
  t.same(ok.events.map((e: { type: string }) => e.type), ['delivered'], 'the status callback as Twilio would send it');
  const played = await sql.query(`SELECT event_id FROM provider_events WHERE workspace_id = $1 AND provider = 'sandbox'`, [ws.id]);
  t.same(played.rows, [{ event_id: `${ok.id}:delivered` }], 'played through the callback handling');
  const sup = await sql.query('SELECT address, suppression_type FROM address_suppressions WHERE workspace_id = $1 ORDER BY address', [ws.id]);
  t.same(sup.rows, [{ address: '+15005550001', suppression_type: 'invalid_address' }, { address: '+15005550009', suppression_type: 'invalid_address' }]);
  const got = await s.req('GET', `/campaigns/${byPerson.get('ok').campaign_id}`, { token: ws.token, headers: { 'x-workspace-id': ws.id } });
  t.match(got.body.data.stats.by_channel.sms, { sent: 1, failed: 2, delivered: 1 });
});

t.test('SMS through Twilio: E.164 normalisation, error codes, suppression', async (t) => {
  const { ws, byPerson } = await runCampaign({ id: 'text', type: 'sms', body: 'Your {{ trigger.plan }} plan' }, [
    { userId: 'uk', phone: '07400 123456' },
    { userId: 'bad', phone: '+15005550001' },
    { userId: 'stop', phone: '+15005550004' },
    { userId: 'nophone' },
    { userId: 'busy', phone: '+15017122661' },
  ], async (id, token) => {
    const r = await s.req('PUT', `/workspaces/${id}/channels/sms`, { token, body: { twilio: { account_sid: SID, auth_token: 'tw-token', from: '+15005550006' }, default_country: 'GB' } });
    t.equal(r.status, 200, r.text);
  });
  sentSms.ws = ws;
  sentSms.sid = byPerson.get('uk').provider_id;
  t.match(byPerson.get('uk'), { channel: 'sms', status: 'sent', provider: 'twilio', address: '+447400123456', provider_id: /^SM/ });
  const req = twilio.requests.find((x) => x.form.To === '+447400123456');
  t.match(req?.form, { From: '+15005550006', Body: 'Your Pro plan', StatusCallback: `${PUBLIC}/webhooks/sms/${ws.id}/status` });
  t.match(byPerson.get('bad'), { status: 'failed', error: /21211/ });
  t.match(byPerson.get('stop'), { status: 'failed', error: /21610/ });
  t.match(byPerson.get('nophone'), { status: 'skipped', skip_reason: 'no_phone_number' });
  const history = async (who: string) => (await s.req('GET', `/workspaces/${ws.id}/people/${byPerson.get(who).person_id}/messages`, { token: ws.token })).body.messages;
  t.match(await history('uk'), [{ channel: 'sms', to: '+447400123456', status: 'sent' }], 'the message history names the number');
  t.notOk('to' in (await history('nophone'))[0], 'no number, no `to`');
  t.match(byPerson.get('busy'), { status: 'sent' }, 'a 429 is retried after its Retry-After');
  t.equal(twilio.requests.filter((x) => x.form.To === '+15017122661').length, 2, 'two requests: the 429, then the accepted send');
  const sup = await sql.query('SELECT address, suppression_type FROM address_suppressions WHERE workspace_id = $1 ORDER BY address', [ws.id]);
  t.same(sup.rows, [{ address: '+15005550001', suppression_type: 'invalid_address' }, { address: '+15005550004', suppression_type: 'opt_out' }]);
});

t.test("SMS quiet hours: the send policy's, in the recipient's zone, suppress an SMS (quiet_hours); the email in the same window is sent", async (t) => {
  // The window holds the New York person's time now with an hour of margin either side; the
  // policy's own zone (Kolkata, 9.5 to 10.5 hours ahead) is outside it, which decides for a
  // person with no zone of their own.
  const local = localMinutes('America/New_York');
  const quiet = { start: hhmm(local - 60), end: hhmm(local + 60) };
  const { rows } = await runCampaign([{ id: 'text', type: 'sms', body: 'Late news' }, { id: 'mail', type: 'email', subject: 'Late news', text: 'T' }], [
    { userId: 'night', email: 'night@example.com', phone: '+15017122663', traits: { timezone: 'America/New_York' } },
    { userId: 'day', email: 'day@example.com', phone: '+15017122664' },
  ], async (id, token) => {
    const r = await s.req('PUT', `/workspaces/${id}`, { token, body: { settings: { send_policy: { timezone: 'Asia/Kolkata', quiet_hours: quiet } } } });
    t.equal(r.status, 200, r.text);
  });
  const of = (who: string, channel: string) => rows.find((r) => r.who === who && r.channel === channel);
  t.match(of('night', 'sms'), { status: 'policy_suppressed', skip_reason: 'quiet_hours', error: /Quiet hours .*America\/New_York/ }, `inside ${quiet.start}-${quiet.end} New York time`);
  t.match(of('night', 'email'), { status: 'delivered', address: 'night@example.com' }, 'quiet hours do not apply to email');
  t.match(of('day', 'sms'), { status: 'delivered' }, "outside the window in the policy's zone");
  t.match(of('day', 'email'), { status: 'delivered' });
});

t.test('unsubscribe: GET changes nothing, one-click POST unsubscribes with no redirect, a bad token is a 404', async (t) => {
  const path = new URL(sentEmail.unsubscribe).pathname;
  const status = async () => (await sql.query('SELECT p.status, p.unsubscribe_reason FROM people p JOIN messages m ON m.person_id = p.id WHERE m.id = $1', [sentEmail.id])).rows[0];
  const page = await outside(path, { method: 'GET' });
  t.equal(page.status, 200);
  t.match(page.headers.get('content-type'), /text\/html/);
  const html = await page.text();
  t.match(html, /Channels|Test/, 'names the workspace');
  t.match(html, /ok\*\*\*@example\.com/, 'the address masked');
  t.match(html, /<form method="post">/);
  t.same(await status(), { status: 'active', unsubscribe_reason: null }, 'a GET changes nothing');
  // The token's first character changed: changing its last two gave the token itself when they were `BA` already (1 run in 256).
  const cut = path.lastIndexOf('/') + 1;
  const tampered = path.slice(0, cut) + (path[cut] === 'A' ? 'B' : 'A') + path.slice(cut + 1);
  const bad = await outside(tampered, { body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  t.equal(bad.status, 404);
  t.same(await status(), { status: 'active', unsubscribe_reason: null }, 'a bad token changes nothing');
  for (const attempt of ['first', 'repeat']) {
    const r = await outside(path, { body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
    t.equal(r.status, 200, `${attempt}: 200, no redirect`);
    t.notOk(r.headers.get('location'));
  }
  t.same(await status(), { status: 'unsubscribed', unsubscribe_reason: 'unsubscribe_link' });
});

t.test('SendGrid: signed events applied once, verified against the raw bytes', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const key = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  const set = await s.req('PUT', `/workspaces/${sentEmail.ws.id}/channels/email`, { token: sentEmail.ws.token, body: { webhooks: { provider: 'sendgrid', verification_key: key } } });
  t.equal(set.status, 200, set.text);
  const path = `/webhooks/email/${sentEmail.ws.id}`;
  const events = [
    { email: 'ok@example.com', event: 'delivered', sg_event_id: 'ev-1', 'smtp-id': `<${sentEmail.id}@herald.example>`, timestamp: 1 },
    { email: 'ok@example.com', event: 'click', url: 'https://example.com/x', sg_event_id: 'ev-2', 'smtp-id': `<${sentEmail.id}@herald.example>`, timestamp: 2 },
  ];
  const raw = JSON.stringify(events);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = sign('sha256', Buffer.from(timestamp + raw), privateKey).toString('base64');
  const ew = new sendgrid.EventWebhook();
  t.ok(ew.verifySignature(ew.convertPublicKeyToECDSA(key), raw, signature, timestamp), "SendGrid's own helper accepts the signature");
  const headers = { 'content-type': 'application/json', 'X-Twilio-Email-Event-Webhook-Signature': signature, 'X-Twilio-Email-Event-Webhook-Timestamp': timestamp };
  const first = await outside(path, { body: raw, headers });
  t.equal(first.status, 200);
  t.match(await first.json(), { applied: 2, duplicates: 0 });
  const again = await outside(path, { body: raw, headers });
  t.match(await again.json(), { applied: 0, duplicates: 2 }, 'each event applied once');
  // Within one batch too: an event id repeated is applied once, and one naming no message of this
  // workspace's is counted unmatched, the others applied.
  const mixed = JSON.stringify([
    { email: 'ok@example.com', event: 'open', sg_event_id: 'ev-3', 'smtp-id': `<${sentEmail.id}@herald.example>`, timestamp: 3 },
    { email: 'ok@example.com', event: 'open', sg_event_id: 'ev-3', 'smtp-id': `<${sentEmail.id}@herald.example>`, timestamp: 3 },
    { email: 'x@example.com', event: 'delivered', sg_event_id: 'ev-4', 'smtp-id': '<00000000-0000-4000-8000-000000000000@herald.example>', timestamp: 4 },
  ]);
  const mixedSignature = sign('sha256', Buffer.from(timestamp + mixed), privateKey).toString('base64');
  const m = await outside(path, { body: mixed, headers: { ...headers, 'X-Twilio-Email-Event-Webhook-Signature': mixedSignature } });
  t.match(await m.json(), { applied: 1, duplicates: 1, unmatched: 1 });
  const reformatted = await outside(path, { body: JSON.stringify(events, null, 1), headers });
  t.equal(reformatted.status, 401, 'the same JSON in other bytes is not what was signed');
  t.equal((await outside(path, { body: raw, headers: { 'content-type': 'application/json' } })).status, 401, 'no signature');
  const row = (await sql.query('SELECT status, events FROM messages WHERE id = $1', [sentEmail.id])).rows[0];
  t.equal(row.status, 'delivered');
  t.match(row.events, [{ type: 'delivered' }, { type: 'clicked', details: { url: 'https://example.com/x' } }, { type: 'opened' }], 'in the order sent, within a batch and across');
  t.equal(row.events.length, 3);
  const personId = (await sql.query('SELECT person_id FROM messages WHERE id = $1', [sentEmail.id])).rows[0].person_id;
  const history = await s.req('GET', `/workspaces/${sentEmail.ws.id}/people/${personId}/messages`, { token: sentEmail.ws.token });
  t.equal(history.status, 200, history.text);
  t.match(history.body.messages, [{ message_id: sentEmail.id, channel: 'email', to: 'ok@example.com', status: 'delivered', provider: 'smtp', events: [{ type: 'delivered' }, { type: 'clicked' }, { type: 'opened' }] }], 'the message history lists email, with the address');
  t.equal((await outside(`/webhooks/email/00000000-0000-4000-8000-000000000000`, { body: raw, headers })).status, 404, 'no such workspace');
});

t.test('Mailgun and Postmark: a permanent failure bounces and suppresses; a complaint unsubscribes', async (t) => {
  const path = `/webhooks/email/${sentEmail.ws.id}`;
  const signingKey = 'key-mailgun-signing-0123';
  t.equal((await s.req('PUT', `/workspaces/${sentEmail.ws.id}/channels/email`, { token: sentEmail.ws.token, body: { webhooks: { provider: 'mailgun', signing_key: signingKey } } })).status, 200);
  const timestamp = String(Math.floor(Date.now() / 1000));
  const token = 'a'.repeat(50);
  const body = (sig: string) => JSON.stringify({ signature: { timestamp, token, signature: sig }, 'event-data': { id: 'mg-1', event: 'failed', severity: 'permanent', message: { headers: { 'message-id': `${sentEmail.id}@herald.example` } } } });
  t.equal((await outside(path, { body: body('0'.repeat(64)), headers: { 'content-type': 'application/json' } })).status, 401, 'a bad Mailgun signature');
  const good = await outside(path, { body: body(createHmac('sha256', signingKey).update(timestamp + token).digest('hex')), headers: { 'content-type': 'application/json' } });
  t.equal(good.status, 200);
  t.equal((await sql.query('SELECT status FROM messages WHERE id = $1', [sentEmail.id])).rows[0].status, 'bounced');
  const sup = await sql.query(`SELECT address FROM address_suppressions WHERE workspace_id = $1 AND suppression_type = 'hard_bounce'`, [sentEmail.ws.id]);
  t.same(sup.rows, [{ address: 'ok@example.com' }]);

  t.equal((await s.req('PUT', `/workspaces/${sentEmail.ws.id}/channels/email`, { token: sentEmail.ws.token, body: { webhooks: { provider: 'postmark', username: 'pm', password: 'pm-pass' } } })).status, 200);
  const complaint = JSON.stringify({ RecordType: 'SpamComplaint', ID: 42, MessageID: 'pm-id', Headers: [{ Name: 'Message-ID', Value: `<${sentEmail.id}@herald.example>` }] });
  t.equal((await outside(path, { body: complaint, headers: { authorization: `Basic ${Buffer.from('pm:wrong').toString('base64')}` } })).status, 401);
  const pm = await outside(path, { body: complaint, headers: { authorization: `Basic ${Buffer.from('pm:pm-pass').toString('base64')}` } });
  t.equal(pm.status, 200);
  t.equal((await sql.query('SELECT status FROM messages WHERE id = $1', [sentEmail.id])).rows[0].status, 'complained');
});

t.test("Postmark: a SoftBounce is an event on the message only, a HardBounce bounces, suppresses and marks the person; each applied once", async (t) => {
  const { ws, byPerson } = await runCampaign({ id: 'mail', type: 'email', subject: 'S', text: 'T' }, [{ userId: 'soft', email: 'soft@example.com' }, { userId: 'hard', email: 'hard@example.com' }], async (id, token) => {
    const r = await s.req('PUT', `/workspaces/${id}/channels/email`, {
      token,
      body: { smtp: { host: '127.0.0.1', port: smtpPort, security: 'starttls', username: 'relay', password: 'relay-pass' }, from: { email: 'news@herald.example' }, webhooks: { provider: 'postmark', username: 'pm', password: 'pm-pass' } },
    });
    t.equal(r.status, 200, r.text);
  });
  const soft = byPerson.get('soft');
  const hard = byPerson.get('hard');
  t.match([soft.status, hard.status], ['sent', 'sent']);
  // Postmark's bounce webhook as it posts it; MessageID is Herald's when sent with the Message-ID kept.
  const bounce = (id: number, type: string, typeCode: number, messageId: string, email: string) =>
    JSON.stringify({ RecordType: 'Bounce', MessageStream: 'outbound', ID: id, Type: type, TypeCode: typeCode, Name: type, MessageID: messageId, ServerID: 23, Description: 'd', Details: 'smtp;452 4.2.2 Mailbox full', Email: email, From: 'news@herald.example', BouncedAt: new Date().toISOString(), Inactive: type === 'HardBounce', CanActivate: true, Subject: 'S' });
  const post = (body: string, password = 'pm-pass') => outside(`/webhooks/email/${ws.id}`, { body, headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`pm:${password}`).toString('base64')}` } });
  const row = async (id: string) => (await sql.query('SELECT status, events FROM messages WHERE id = $1', [id])).rows[0];
  const person = async (who: string) => (await sql.query('SELECT status FROM people WHERE workspace_id = $1 AND external_id = $2', [ws.id, who])).rows[0].status;
  const suppressed = async () => (await sql.query('SELECT address, suppression_type FROM address_suppressions WHERE workspace_id = $1 ORDER BY address', [ws.id])).rows;

  const softBody = bounce(7001, 'SoftBounce', 4096, soft.id, 'soft@example.com');
  t.equal((await post(softBody, 'wrong')).status, 401, 'not authenticated: refused');
  t.match(await row(soft.id), { status: 'sent', events: [] }, 'and nothing recorded');
  for (const attempt of ['first', 'repeat']) {
    const r = await post(softBody);
    t.equal(r.status, 200, attempt);
    t.match(await r.json(), attempt === 'first' ? { applied: 1, duplicates: 0 } : { applied: 0, duplicates: 1 }, attempt);
  }
  const softRow = await row(soft.id);
  t.equal(softRow.status, 'sent', 'a soft bounce does not change the status');
  t.same(softRow.events.map((e: { type: string }) => e.type), ['soft_bounce'], 'one event on the message');
  t.equal(await person('soft'), 'active', 'the person stays active');
  t.same(await suppressed(), [], 'nothing suppressed');

  const hardBody = bounce(7002, 'HardBounce', 1, `<${hard.id}@herald.example>`, 'hard@example.com');
  for (const attempt of ['first', 'repeat']) t.match(await (await post(hardBody)).json(), attempt === 'first' ? { applied: 1 } : { duplicates: 1 }, attempt);
  const hardRow = await row(hard.id);
  t.equal(hardRow.status, 'bounced');
  t.same(hardRow.events.map((e: { type: string }) => e.type), ['hard_bounce'], 'applied once');
  t.equal(await person('hard'), 'bounced');
  t.same(await suppressed(), [{ address: 'hard@example.com', suppression_type: 'hard_bounce' }]);
});

t.test('Twilio: status callbacks and inbound STOP / START / text, signed as Twilio signs', async (t) => {
  const status = `/webhooks/sms/${sentSms.ws.id}/status`;
  const inbound = `/webhooks/sms/${sentSms.ws.id}/inbound`;
  const post = (path: string, form: Record<string, string>, token = 'tw-token') =>
    outside(path, { body: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': twilioLib.getExpectedTwilioSignature(token, `${PUBLIC}${path}`, form) } });
  const failed = { MessageSid: sentSms.sid, MessageStatus: 'undelivered', ErrorCode: '30003', AccountSid: SID, To: '+447400123456' };
  t.equal((await post(status, failed, 'wrong-token')).status, 401, 'signed with another token');
  const r = await post(status, failed);
  t.equal(r.status, 200);
  t.match((await sql.query('SELECT status, error FROM messages WHERE provider_id = $1', [sentSms.sid])).rows[0], { status: 'failed', error: /30003/ });
  t.match(await (await post(status, failed)).json(), { duplicates: 1 });

  const stop = await post(inbound, { MessageSid: 'SMin1', From: '+447400123456', To: '+15005550006', Body: ' stop ' });
  t.equal(stop.status, 200);
  t.match(stop.headers.get('content-type'), /text\/xml/);
  t.match(await stop.text(), /<Response\/>/);
  const optOut = () => sql.query(`SELECT 1 FROM address_suppressions WHERE workspace_id = $1 AND address = '+447400123456' AND suppression_type = 'opt_out'`, [sentSms.ws.id]);
  t.equal((await optOut()).rowCount, 1, 'STOP suppresses the number');
  t.equal((await post(inbound, { MessageSid: 'SMin2', From: '+447400123456', To: '+15005550006', Body: 'Start' })).status, 200);
  t.equal((await optOut()).rowCount, 0, 'START lifts it');
  t.equal((await post(inbound, { MessageSid: 'SMin3', From: '+447400123456', To: '+15005550006', Body: 'What time do you open?' })).status, 200);
  const ev = await until(async () => (await sql.query(`SELECT e.parameters FROM events e JOIN people p ON p.id = e.person_id WHERE e.workspace_id = $1 AND e.type = 'sms_received'`, [sentSms.ws.id])).rows[0]);
  t.same(ev.parameters, { body: 'What time do you open?', from: '+447400123456' });
});

t.test('activation per channel: email needs a subject and html or text, sms a body; html without unsubscribe_url warns', async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'] });
  const hdr = { token: k.ws.token, headers: { 'x-workspace-id': k.ws.id } };
  const make = (node: object) => s.req('POST', '/campaigns', { ...hdr, body: { name: 'C', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [node] } } });
  const noSubject = await make({ id: 'm', type: 'email', html: '<p>Hi</p>' });
  t.equal(noSubject.status, 201);
  t.same(noSubject.body.data.warnings, ['email node m: its html has no {{ unsubscribe_url }} link (the List-Unsubscribe header is still sent)']);
  const refused = await s.req('PUT', `/campaigns/${noSubject.body.data.campaign.id}`, { ...hdr, body: { status: 'active' } });
  t.equal(refused.status, 400);
  t.match(refused.body.error, { code: 'ACTIVATION_FAILED' });
  t.ok(JSON.stringify(refused.body.error.details).includes('workflow_definition.nodes.0.subject'), refused.text);
  const fixed = await s.req('PUT', `/campaigns/${noSubject.body.data.campaign.id}`, { ...hdr, body: { status: 'active', workflow_definition: { nodes: [{ id: 'm', type: 'email', subject: 'S', html: '<p>Hi</p>' }] } } });
  t.equal(fixed.status, 200, fixed.text);
  t.equal(fixed.body.warnings.length, 1, 'activated, with the warning');
  const sms = await make({ id: 's', type: 'sms' });
  const noBody = await s.req('PUT', `/campaigns/${sms.body.data.campaign.id}`, { ...hdr, body: { status: 'active' } });
  t.equal(noBody.status, 400);
  t.ok(JSON.stringify(noBody.body.error.details).includes('workflow_definition.nodes.0.body'), noBody.text);
  const badLiquid = await make({ id: 's', type: 'sms', body: 'Hi {{ person.first_name ' });
  t.equal((await s.req('PUT', `/campaigns/${badLiquid.body.data.campaign.id}`, { ...hdr, body: { status: 'active' } })).status, 400, 'Liquid that does not parse');
});

t.test("templates per channel: an email template fills an email node (the node's own fields win); another channel's is refused", async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  const path = `/workspaces/${k.ws.id}/templates`;
  const made = await s.req('POST', path, { token: k.ws.token, body: { name: 'Welcome', channel: 'email', subject: 'From the template', html: '<p>Hello {{ person.email }}</p> <a href="{{ unsubscribe_url }}">u</a>', preheader: 'Hi' } });
  t.equal(made.status, 201, made.text);
  t.match(made.body.data.template, { channel: 'email', subject: 'From the template', preheader: 'Hi', title: null });
  t.equal((await s.req('POST', path, { token: k.ws.token, body: { name: 'Bad', channel: 'email', subject: '{{ person.email ' } })).status, 400, 'Liquid that does not parse');
  const sms = await s.req('POST', path, { token: k.ws.token, body: { name: 'Text', channel: 'sms', body: 'Hi' } });
  t.equal(sms.status, 201, sms.text);
  const hdr = { token: k.ws.token, headers: { 'x-workspace-id': k.ws.id } };
  const wrong = await s.req('POST', '/campaigns', { ...hdr, body: { name: 'W', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'm', type: 'email', template_id: sms.body.data.template.id }] } } });
  const refused = await s.req('PUT', `/campaigns/${wrong.body.data.campaign.id}`, { ...hdr, body: { status: 'active' } });
  t.equal(refused.status, 400);
  t.ok(JSON.stringify(refused.body.error.details).includes('names no email template'), refused.text);

  t.equal((await s.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: 't1', email: 't1@example.com' }] } })).status, 200);
  const c = await s.req('POST', '/campaigns', { ...hdr, body: { name: 'T', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'm', type: 'email', template_id: made.body.data.template.id, subject: 'From the node' }] } } });
  t.same(c.body.data.warnings, [], 'the html linking unsubscribe_url is in the template: no warning is due, none given');
  t.equal((await s.req('PUT', `/campaigns/${c.body.data.campaign.id}`, { ...hdr, body: { status: 'active' } })).status, 200);
  t.equal((await s.req('POST', `/campaigns/${c.body.data.campaign.id}/trigger`, { token: k.trigger, body: { workspace_id: k.ws.id } })).status, 202);
  const row = await until(async () => (await sql.query('SELECT status, title, body FROM messages WHERE campaign_id = $1', [c.body.data.campaign.id])).rows[0]);
  t.match(row, { status: 'delivered', title: 'From the node', body: /Hello t1@example\.com/ }, 'sent through the sandbox with the template html rendered to text');
});

t.test("node-messages takes each node type's fields: email subject, html, text, preheader; sms body; another type's field is a 400 naming it", async (t) => {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  const hdr = { token: k.ws.token, headers: { 'x-workspace-id': k.ws.id } };
  const c = await s.req('POST', '/campaigns', { ...hdr, body: { name: 'NM', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'mail', type: 'email' }, { id: 'text', type: 'sms' }] } } });
  t.equal(c.status, 201, c.text);
  const id = c.body.data.campaign.id as string;
  const put = (node: string, body: object) => s.req('PUT', `/workspaces/${k.ws.id}/campaigns/${id}/node-messages/${node}`, { token: k.ws.token, body });
  const mail = await put('mail', { subject: 'Hello {{ person.email }}', html: '<p>Your {{ trigger.plan }} plan</p>', preheader: 'Plan news' });
  t.equal(mail.status, 200, mail.text);
  t.same(mail.body.data, { node_id: 'mail', message: { subject: 'Hello {{ person.email }}', html: '<p>Your {{ trigger.plan }} plan</p>', preheader: 'Plan news' } });
  t.same(mail.body.warnings, ['email node mail: its html has no {{ unsubscribe_url }} link (the List-Unsubscribe header is still sent)']);
  const withText = await put('mail', { text: 'Your {{ trigger.plan }} plan, in text', preheader: null });
  t.same(withText.body.data.message, { subject: 'Hello {{ person.email }}', html: '<p>Your {{ trigger.plan }} plan</p>', text: 'Your {{ trigger.plan }} plan, in text' }, 'null removes, omitted stay');
  const foreign = await put('mail', { title: 'A push title', subject: 'S', custom_data: {} });
  t.equal(foreign.status, 400, foreign.text);
  t.match(foreign.body, { success: false, error: { code: 'VALIDATION_ERROR', message: /title, custom_data/ } });
  t.same(foreign.body.error.details.map((d: { field: string }) => d.field), ['title', 'custom_data'], 'each foreign field named');
  const smsForeign = await put('text', { subject: 'S' });
  t.equal(smsForeign.status, 400, smsForeign.text);
  t.same(smsForeign.body.error.details, [{ field: 'subject', message: 'is not a field of an sms node (an sms node takes body)' }]);
  const badLiquid = await put('text', { body: 'Hi {{ person.email ' });
  t.equal(badLiquid.status, 400);
  t.same(badLiquid.body.error.details.map((d: { field: string }) => d.field), ['body'], 'Liquid that does not parse, named');
  const sms = await put('text', { body: 'Your {{ trigger.plan }} plan by text' });
  t.equal(sms.status, 200, sms.text);
  t.same(sms.body.data, { node_id: 'text', message: { body: 'Your {{ trigger.plan }} plan by text' } });
  const stored = await s.req('GET', `/campaigns/${id}`, hdr);
  t.same(stored.body.data.campaign.workflow_definition.nodes, [
    { id: 'mail', type: 'email', subject: 'Hello {{ person.email }}', html: '<p>Your {{ trigger.plan }} plan</p>', text: 'Your {{ trigger.plan }} plan, in text' },
    { id: 'text', type: 'sms', body: 'Your {{ trigger.plan }} plan by text' },
  ]);

  // Activation uses the content stored: sent through the sandboxes.
  t.equal((await s.req('POST', '/people/batch', { token: k.write, body: { identify: [{ userId: 'nm', email: 'nm@example.com', phone: '+15017122662' }] } })).status, 200);
  const on = await s.req('PUT', `/campaigns/${id}`, { ...hdr, body: { status: 'active' } });
  t.equal(on.status, 200, on.text);
  t.equal((await s.req('POST', `/campaigns/${id}/trigger`, { token: k.trigger, body: { workspace_id: k.ws.id, trigger_data: { plan: 'Pro' } } })).status, 202);
  const rows = await until(async () => {
    const q = await sql.query('SELECT channel, status, title, body FROM messages WHERE campaign_id = $1 ORDER BY channel', [id]);
    return q.rows.length === 2 ? q.rows : undefined;
  });
  t.match(rows, [
    { channel: 'email', status: 'delivered', title: 'Hello nm@example.com', body: 'Your Pro plan, in text' },
    { channel: 'sms', status: 'delivered', body: 'Your Pro plan by text' },
  ]);
});

// Email and SMS campaign nodes (DECISIONS §13) sent for real: email to an SMTP server in the
// test (smtp-server, AUTH required, STARTTLS), SMS to a fake Twilio speaking its REST shapes and
// error codes. Checks the skip decisions in §13's order, the Message-ID and RFC 8058 headers,
// the text part derived from html, unsubscribe_url in scope, dead numbers suppressed.
import t from 'tap';
import pg from 'pg';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { startServer, storeUrl, workspaceWithKeys } from '../helpers/server.js';
import { makeTlsCert } from '../fakes/tls.js';
import { startFakeTwilio } from '../fakes/fake-twilio.js';

const tls = makeTlsCert();
const dir = mkdtempSync(join(tmpdir(), 'herald-smtp-'));
writeFileSync(join(dir, 'ca.pem'), tls.cert);

const mails: { from: string; to: string[]; data: string }[] = [];
const smtp = new SMTPServer({
  key: tls.key,
  cert: tls.cert,
  authMethods: ['PLAIN', 'LOGIN'],
  onAuth(auth, _s, cb) {
    cb(auth.username === 'relay' && auth.password === 'relay-pass' ? null : new Error('Invalid username or password'), { user: 'relay' });
  },
  onRcptTo(address, _s, cb) {
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
const twilio = await startFakeTwilio({ [SID]: 'tw-token' });
t.teardown(() => twilio.close());

const PUBLIC = 'https://herald.example.com';
const s = await startServer({ NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem'), HERALD_TWILIO_ENDPOINT: twilio.url, HERALD_PUBLIC_URL: PUBLIC });
t.teardown(() => s.stop());
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

async function until<T>(f: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function runCampaign(node: object, people: { userId: string; email?: string; phone?: string }[], configure: (wsId: string, token: string) => Promise<void>) {
  const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] });
  await configure(k.ws.id, k.ws.token);
  const r = await s.req('POST', '/people/batch', { token: k.write, body: { identify: people } });
  t.equal(r.status, 200, r.text);
  const hdr = { token: k.ws.token, headers: { 'x-workspace-id': k.ws.id } };
  const c = await s.req('POST', '/campaigns', { ...hdr, body: { name: 'Mail', trigger_type: 'webhook', trigger_config: {}, audience_config: {}, workflow_definition: { nodes: [node] } } });
  t.equal(c.status, 201, c.text);
  const id = c.body.data.campaign.id as string;
  const a = await s.req('PUT', `/campaigns/${id}`, { ...hdr, body: { status: 'active' } });
  t.equal(a.status, 200, a.text);
  const f = await s.req('POST', `/campaigns/${id}/trigger`, { token: k.trigger, body: { workspace_id: k.ws.id, trigger_data: { plan: 'Pro' } } });
  t.equal(f.status, 202, f.text);
  const rows = await until(async () => {
    const q = await sql.query('SELECT m.*, p.external_id AS who FROM push_messages m JOIN people p ON p.id = m.person_id WHERE m.campaign_id = $1', [id]);
    return q.rows.length === people.length ? q.rows : undefined;
  });
  return { ws: k.ws, byPerson: new Map(rows.map((x) => [x.who as string, x])) };
}

t.test('email over SMTP (AUTH, STARTTLS): headers, derived text, skips in order, 5.1.1 suppresses', async (t) => {
  const node = { id: 'mail', type: 'email', subject: 'Hi {{ person.email }}', html: '<p>Your {{ trigger.plan }} plan</p><a href="{{ unsubscribe_url }}">Unsubscribe</a>', preheader: 'Plan news' };
  const { ws, byPerson } = await runCampaign(node, [{ userId: 'ok', email: 'ok@example.com' }, { userId: 'none' }, { userId: 'dead', email: 'nobody@example.com' }], async (id, token) => {
    const r = await s.req('PUT', `/workspaces/${id}/channels/email`, { token, body: { smtp: { host: '127.0.0.1', port: smtpPort, security: 'starttls', username: 'relay', password: 'relay-pass' }, from: { email: 'news@herald.example', name: 'News' } } });
    t.equal(r.status, 200, r.text);
  });
  const ok = byPerson.get('ok');
  t.match(ok, { channel: 'email', status: 'sent', provider: 'smtp', address: 'ok@example.com', title: 'Hi ok@example.com' });
  const found = mails.find((m) => m.to.includes('ok@example.com'));
  const mail = found && { ...found, data: found.data.replace(/\r\n[ \t]+/g, ' ') };
  t.ok(mail, 'the SMTP server got it');
  t.match(mail!.data, new RegExp(`Message-ID: <${ok.id}@herald\\.example>`, 'i'));
  t.match(mail!.data, new RegExp(`List-Unsubscribe: <${PUBLIC}/u/[A-Za-z0-9_-]{86}>`));
  t.match(mail!.data, /List-Unsubscribe-Post: List-Unsubscribe=One-Click/);
  t.match(mail!.data, /Content-Type: text\/plain[\s\S]*Your Pro plan/, 'the text part derived from html');
  t.match(byPerson.get('none'), { status: 'skipped', skip_reason: 'no_email_address' });
  t.match(byPerson.get('dead'), { status: 'failed', error: /5\.1\.1/ });
  const sup = await sql.query('SELECT address, suppression_type FROM address_suppressions WHERE workspace_id = $1', [ws.id]);
  t.same(sup.rows, [{ address: 'nobody@example.com', suppression_type: 'invalid_address' }]);
});

t.test('email sandbox: the simulator addresses bounce and complain', async (t) => {
  const { ws, byPerson } = await runCampaign({ id: 'mail', type: 'email', subject: 'S', text: 'T' }, [
    { userId: 'b', email: 'bounce@simulator.herald.test' },
    { userId: 'c', email: 'complaint@simulator.herald.test' },
    { userId: 'd', email: 'someone@example.com' },
  ], async () => {});
  t.match(byPerson.get('b'), { status: 'bounced', provider: 'sandbox' });
  t.match(byPerson.get('c'), { status: 'complained' });
  t.match(byPerson.get('d'), { status: 'delivered' });
  const people = await sql.query('SELECT external_id, status, unsubscribe_reason FROM people WHERE workspace_id = $1 ORDER BY external_id', [ws.id]);
  t.same(people.rows.map((p) => [p.external_id, p.status, p.unsubscribe_reason]), [['b', 'bounced', null], ['c', 'unsubscribed', 'spam_complaint'], ['d', 'active', null]]);
});

t.test('SMS through Twilio: E.164 normalisation, error codes, suppression', async (t) => {
  const { ws, byPerson } = await runCampaign({ id: 'text', type: 'sms', body: 'Your {{ trigger.plan }} plan' }, [
    { userId: 'uk', phone: '07400 123456' },
    { userId: 'bad', phone: '+15005550001' },
    { userId: 'stop', phone: '+15005550004' },
    { userId: 'nophone' },
  ], async (id, token) => {
    const r = await s.req('PUT', `/workspaces/${id}/channels/sms`, { token, body: { twilio: { account_sid: SID, auth_token: 'tw-token', from: '+15005550006' }, default_country: 'GB' } });
    t.equal(r.status, 200, r.text);
  });
  t.match(byPerson.get('uk'), { channel: 'sms', status: 'sent', provider: 'twilio', address: '+447400123456', provider_id: /^SM/ });
  const req = twilio.requests.find((x) => x.form.To === '+447400123456');
  t.match(req?.form, { From: '+15005550006', Body: 'Your Pro plan', StatusCallback: `${PUBLIC}/webhooks/sms/${ws.id}/status` });
  t.match(byPerson.get('bad'), { status: 'failed', error: /21211/ });
  t.match(byPerson.get('stop'), { status: 'failed', error: /21610/ });
  t.match(byPerson.get('nophone'), { status: 'skipped', skip_reason: 'no_phone_number' });
  const sup = await sql.query('SELECT address, suppression_type FROM address_suppressions WHERE workspace_id = $1 ORDER BY address', [ws.id]);
  t.same(sup.rows, [{ address: '+15005550001', suppression_type: 'invalid_address' }, { address: '+15005550004', suppression_type: 'opt_out' }]);
});

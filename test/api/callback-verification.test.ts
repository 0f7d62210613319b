// Provider callbacks, verified as each provider signs them, refuse what a signature does not make
// genuine (issue 34, findings 2, 4, 5, 8): a Mailgun signature used twice, or signed timestamps
// (Mailgun's, SendGrid's) more than 5 minutes from now; Mailgun signature fields that are not
// text; and validly signed bodies holding what the store cannot keep (U+0000, a null entry)
// are refused 400 with nothing recorded, and a Twilio message refused so is applied when Twilio
// sends it again.
import t from 'tap';
import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import twilioLib from 'twilio';
import { eventually, startServer, triggerWebhookCampaign, workspaceWithKeys, type Res } from '../helpers/server.js';

const PUBLIC = 'https://herald.example.com';
const s = await startServer({ HERALD_PUBLIC_URL: PUBLIC });
t.teardown(() => s.stop());

/** Set-up that must hold: it throws, for the tests below cannot run without it. */
function must(ok: unknown, why: string): void {
  if (!ok) throw new Error(`set-up failed: ${why}`);
}

// One workspace, three people, a sandbox email to two of them and a sandbox text to the third;
// then its channels are configured with the providers' keys.
const k = await workspaceWithKeys(s, { trigger: ['campaigns:trigger'], write: ['people:write'] }, 'Callbacks');
const ws = k.ws;
const people = await s.req('POST', '/people/batch', {
  token: k.write,
  body: { identify: [{ userId: 'ann', email: 'ann@example.com' }, { userId: 'bob', email: 'bob@example.com' }, { userId: 'cat', phone: '+447400123456' }] },
});
must(people.status === 200, people.text);
const personOf = async (userId: string) => {
  const r = await s.req('GET', `/workspaces/${ws.id}/people`, { token: ws.token });
  return (r.body.people as { id: string; external_id: string; status: string }[]).find((p) => p.external_id === userId)!;
};
const mailCampaign = await triggerWebhookCampaign(s, ws, k.trigger, { id: 'mail', type: 'email', subject: 'S', text: 'T' });
const textCampaign = await triggerWebhookCampaign(s, ws, k.trigger, { id: 'text', type: 'sms', body: 'Hi' });
type Message = { message_id: string; status: string; to?: string; provider_id: string; events?: { type: string }[] };
const messagesOf = async (campaignId: string, n: number) =>
  eventually(async () => {
    const r = await s.req('GET', `/workspaces/${ws.id}/campaigns/${campaignId}/messages`, { token: ws.token });
    return r.body?.messages?.length === n ? (r.body.messages as Message[]) : undefined;
  }, 20_000);
// Each campaign records a message for every person: the one without the address is skipped.
const mails = await messagesOf(mailCampaign, 3);
must(mails, 'the emails were not sent');
const texts = await messagesOf(textCampaign, 3);
must(texts, 'the text was not sent');
const mailTo = (address: string) => mails!.find((m) => m.to === address)!;
const text = texts!.find((m) => m.to === '+447400123456')!;

/** A message as the workspace's history shows it now. */
async function message(id: string): Promise<Message> {
  for (const who of ['ann', 'bob', 'cat']) {
    const r = await s.req('GET', `/workspaces/${ws.id}/people/${(await personOf(who)).id}/messages`, { token: ws.token });
    const m = (r.body.messages as Message[]).find((x) => x.message_id === id);
    if (m) return m;
  }
  throw new Error(`no message ${id}`);
}

const emailUrl = `${s.base}/webhooks/email/${ws.id}`;
const setEmailHooks = async (webhooks: object) => {
  const r = await s.req('PUT', `/workspaces/${ws.id}/channels/email`, { token: ws.token, body: { smtp: { host: '127.0.0.1', port: 2525, security: 'none' }, from: { email: 'news@herald.example' }, webhooks } });
  must(r.status === 200, r.text);
};
const now = () => Math.floor(Date.now() / 1000);

t.test('Mailgun: a signature is spent once, and only within 5 minutes of its timestamp', async (t) => {
  const key = 'key-mailgun-signing-0123';
  await setEmailHooks({ provider: 'mailgun', signing_key: key });
  const signature = (timestamp: number, token: string) => ({ timestamp: String(timestamp), token, signature: createHmac('sha256', key).update(`${timestamp}${token}`).digest('hex') });
  const bounce = (id: string, messageId: string) => ({ id, event: 'failed', severity: 'permanent', message: { headers: { 'message-id': `${messageId}@herald.example` } } });
  const complaint = (id: string, messageId: string) => ({ id, event: 'complained', message: { headers: { 'message-id': `${messageId}@herald.example` } } });
  const post = (body: object) => s.req('POST', emailUrl, { raw: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

  const captured = signature(now(), 'a'.repeat(50));
  const first = await post({ signature: captured, 'event-data': bounce('mg-1', mailTo('ann@example.com').message_id) });
  t.equal(first.status, 200, first.text);
  t.match(first.body, { applied: 1 });
  t.equal((await message(mailTo('ann@example.com').message_id)).status, 'bounced');

  const replayed = await post({ signature: captured, 'event-data': complaint('mg-2', mailTo('bob@example.com').message_id) });
  t.equal(replayed.status, 401, 'the same signature with other event-data');
  t.same(replayed.body, { error: 'Missing or bad signature' });
  t.equal((await message(mailTo('bob@example.com').message_id)).status, 'delivered', 'nothing recorded');
  t.equal((await personOf('bob')).status, 'active', 'the person is not unsubscribed');
  t.equal((await post({ signature: captured, 'event-data': bounce('mg-1', mailTo('ann@example.com').message_id) })).status, 401, 'the same request again');

  for (const [label, at] of [['from the year 2000', 946_684_800], ['6 minutes old', now() - 360], ['6 minutes ahead', now() + 360]] as const) {
    const r = await post({ signature: signature(at, `b${at}`.padEnd(50, 'x')), 'event-data': complaint(`mg-${at}`, mailTo('bob@example.com').message_id) });
    t.equal(r.status, 401, `a timestamp ${label}`);
  }
  t.equal((await message(mailTo('bob@example.com').message_id)).status, 'delivered', 'nothing recorded');
  const recent = await post({ signature: signature(now() - 240, 'c'.repeat(50)), 'event-data': { id: 'mg-3', event: 'opened', message: { headers: { 'message-id': `${mailTo('bob@example.com').message_id}@herald.example` } } } });
  t.equal(recent.status, 200, 'a timestamp 4 minutes old is fresh');
  t.match(recent.body, { applied: 1 });
  const other = await post({ signature: signature(now(), 'd'.repeat(50)), 'event-data': { id: 'mg-4', event: 'accepted' } });
  t.equal(other.status, 200, 'an event Herald does not apply is answered');
  t.equal((await post({ signature: signature(now(), 'd'.repeat(50)), 'event-data': complaint('mg-5', mailTo('bob@example.com').message_id) })).status, 401, 'and spends its signature');
});

t.test('Mailgun: signature fields that are not text are a 401, never a 500', async (t) => {
  await setEmailHooks({ provider: 'mailgun', signing_key: 'key-mailgun-signing-0123' });
  const blocks: unknown[] = [
    { timestamp: 1, token: 2, signature: 'x' },
    { timestamp: true, token: false, signature: 'x' },
    { timestamp: String(now()), token: 2, signature: 'x' },
    { timestamp: String(now()), token: 'a'.repeat(50), signature: 7 },
    { timestamp: [now()], token: { a: 1 }, signature: null },
    'signed',
    null,
  ];
  for (const block of blocks) {
    const r = await s.req('POST', emailUrl, { raw: JSON.stringify({ signature: block }), headers: { 'content-type': 'application/json' } });
    t.equal(r.status, 401, `${JSON.stringify(block)}: ${r.text}`);
    t.same(r.body, { error: 'Missing or bad signature' });
  }
});

t.test("SendGrid: the signed timestamp is fresh within 5 minutes, as Mailgun's", async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  await setEmailHooks({ provider: 'sendgrid', verification_key: publicKey.export({ type: 'spki', format: 'der' }).toString('base64') });
  const raw = JSON.stringify([{ email: 'bob@example.com', event: 'open', sg_event_id: 'sg-fresh', 'smtp-id': `<${mailTo('bob@example.com').message_id}@herald.example>`, timestamp: now() }]);
  const post = (timestamp: number) =>
    s.req('POST', emailUrl, {
      raw,
      headers: {
        'content-type': 'application/json',
        'X-Twilio-Email-Event-Webhook-Timestamp': String(timestamp),
        'X-Twilio-Email-Event-Webhook-Signature': sign('sha256', Buffer.from(`${timestamp}${raw}`), privateKey).toString('base64'),
      },
    });
  t.equal((await post(now() - 360)).status, 401, '6 minutes old');
  t.equal((await post(now() + 360)).status, 401, '6 minutes ahead');
  t.equal((await post(946_684_800)).status, 401, 'the year 2000');
  const fresh = await post(now());
  t.equal(fresh.status, 200, fresh.text);
  t.match(fresh.body, { applied: 1 }, 'the stale ones recorded nothing');
});

t.test('validly signed bodies the store cannot keep are a 400, nothing recorded', async (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  await setEmailHooks({ provider: 'sendgrid', verification_key: publicKey.export({ type: 'spki', format: 'der' }).toString('base64') });
  const bob = mailTo('bob@example.com').message_id;
  const before = (await message(bob)).events?.length ?? 0;
  const sendgrid = (events: unknown[]) => {
    const raw = JSON.stringify(events);
    const timestamp = String(now());
    return s.req('POST', emailUrl, {
      raw,
      headers: { 'content-type': 'application/json', 'X-Twilio-Email-Event-Webhook-Timestamp': timestamp, 'X-Twilio-Email-Event-Webhook-Signature': sign('sha256', Buffer.from(timestamp + raw), privateKey).toString('base64') },
    });
  };
  const ok = { email: 'bob@example.com', event: 'click', url: 'https://example.com/a', sg_event_id: 'sg-ok', 'smtp-id': `<${bob}@herald.example>`, timestamp: now() };
  const refused = (r: Res, label: string) => {
    t.equal(r.status, 400, `${label}: ${r.text}`);
    t.same(r.body, { error: 'Malformed callback body' });
  };
  refused(await sendgrid([ok, { ...ok, sg_event_id: 'sg-\u0000' }]), 'SendGrid: U+0000 in sg_event_id');
  refused(await sendgrid([ok, { ...ok, sg_event_id: 'sg-nul-url', url: 'https://example.com/\u0000' }]), 'SendGrid: U+0000 in url');
  refused(await sendgrid([ok, null]), 'SendGrid: a null entry');
  refused(await sendgrid([ok, { ...ok, sg_event_id: 'sg-lone', url: 'https://example.com/\ud800' }]), 'SendGrid: an unpaired surrogate');
  refused(await sendgrid([ok, { ...ok, sg_event_id: 'x'.repeat(3000) }]), 'SendGrid: an event id longer than any provider makes');
  t.equal((await message(bob)).events?.length ?? 0, before, 'nothing recorded on the message');
  const applied = await sendgrid([ok]);
  t.match(applied.body, { applied: 1 }, 'not even the valid event of those batches');

  await setEmailHooks({ provider: 'postmark', username: 'pm', password: 'pm-pass' });
  const postmark = (body: object) => s.req('POST', emailUrl, { raw: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from('pm:pm-pass').toString('base64')}` } });
  const click = { RecordType: 'Click', ID: 'pm-1', MessageID: bob, OriginalLink: 'https://example.com/b', Headers: [{ Name: 'Message-ID', Value: `<${bob}@herald.example>` }] };
  refused(await postmark({ ...click, Headers: [null] }), 'Postmark: null inside Headers');
  refused(await postmark({ ...click, Headers: [{ Name: 'Message-ID', Value: `<${bob}@herald.example>` }, 'x'] }), 'Postmark: a header that is not an object');
  refused(await postmark({ ...click, ID: 'pm-\u0000' }), 'Postmark: U+0000 in ID');
  t.equal((await message(bob)).events?.length ?? 0, before + 1, 'nothing recorded on the message');
  t.match((await postmark(click)).body, { applied: 1 }, 'the same event, well formed, applies');

  const sid = `AC${'ab'.repeat(16)}`;
  const sms = await s.req('PUT', `/workspaces/${ws.id}/channels/sms`, { token: ws.token, body: { twilio: { account_sid: sid, auth_token: 'tw-token', from: '+15005550006' } } });
  t.equal(sms.status, 200, sms.text);
  const statusPath = `/webhooks/sms/${ws.id}/status`;
  const twilio = (path: string, form: Record<string, string>) =>
    s.req('POST', `${s.base}${path}`, { raw: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': twilioLib.getExpectedTwilioSignature('tw-token', `${PUBLIC}${path}`, form) } });
  refused(await twilio(statusPath, { MessageSid: `${text.provider_id}\u0000`, MessageStatus: 'undelivered', ErrorCode: '30003', AccountSid: sid }), 'Twilio: U+0000 in MessageSid');
  t.equal((await message(text.message_id)).status, 'delivered', 'nothing recorded');
  const status = await twilio(statusPath, { MessageSid: text.provider_id, MessageStatus: 'undelivered', ErrorCode: '30003', AccountSid: sid });
  t.match(status.body, { applied: 1 });
  t.equal((await message(text.message_id)).status, 'failed');
});

t.test("Twilio inbound: a message refused 400 is remembered only once applied, so Twilio's retry is not dropped", async (t) => {
  const path = `/webhooks/sms/${ws.id}/inbound`;
  // As Twilio posts it (TwiML answers are read as text).
  const inbound = async (form: Record<string, string>) => {
    const r = await fetch(`${s.base}${path}`, { method: 'POST', body: new URLSearchParams(form).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', 'X-Twilio-Signature': twilioLib.getExpectedTwilioSignature('tw-token', `${PUBLIC}${path}`, form) } });
    return { status: r.status, text: await r.text() };
  };
  const nul = { MessageSid: 'SMnul1', From: '+447400123456', To: '+15005550006', Body: 'Open at\u0000 9?' };
  const first = await inbound(nul);
  t.equal(first.status, 400, first.text);
  const retry = await inbound(nul);
  t.equal(retry.status, 400, "Twilio's retry of it is refused as it was, not answered 200 and dropped");
  const fixed = await inbound({ ...nul, Body: 'Open at 9?' });
  t.equal(fixed.status, 200, fixed.text);
  t.match(fixed.text, /<Response\/>/);
  const cat = await personOf('cat');
  const received = async () => {
    const r = await s.req('GET', `/workspaces/${ws.id}/people/${cat.id}/events`, { token: ws.token });
    return (r.body?.events as { type: string; parameters: { body: string } }[] | undefined)?.filter((e) => e.type === 'sms_received').map((e) => e.parameters.body) ?? [];
  };
  t.equal((await inbound({ ...nul, Body: 'Open at 9?' })).status, 200, 'a repeat is answered');
  // Events reach the store in order (through the Log's sink with NATS_URL): once a later one is
  // there, so is any the repeat added.
  t.equal((await inbound({ MessageSid: 'SMlater', From: '+447400123456', To: '+15005550006', Body: 'Later' })).status, 200);
  const seen = await eventually(async () => ((await received()).includes('Later') ? received() : undefined), 20_000);
  t.same(seen?.filter((b) => b !== 'Later'), ['Open at 9?'], 'the message with that id is applied, once');
});

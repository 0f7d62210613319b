// Email and SMS channels (docs/channels.md): PUT /workspaces/{id}/channels/email|sms and GET
// /workspaces/{id}/channels. Secrets never echoed (nor stored in plain text), partial updates
// keep what is omitted, null removes, the merged settings must be complete, the SMTP host
// passes the destination guard, the callback URLs are built on HERALD_PUBLIC_URL, members only
// read, an API key is refused.
import t, { type Test } from 'tap';
import pg from 'pg';
import { generateKeyPairSync } from 'node:crypto';
import { newKey, newWorkspace, storeUrl, uniqueUser, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';
import { FORBIDDEN } from '../helpers/assert.js';

const PUBLIC = 'https://herald.example.com';
// smtp.example.com resolves nowhere (a host name is resolved when set): listed, it is taken as is.
const s = await sharedServer({ HERALD_PUBLIC_URL: `${PUBLIC}/`, HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1,smtp.example.com' });
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

const SMTP_PASSWORD = 'smtp-pass-Qx8r2';
const AUTH_TOKEN = 'twilio-token-9f8e7d6c5b4a';
const POSTMARK_PASSWORD = 'postmark-hook-pass-77';
const SID = `AC${'0123456789abcdef'.repeat(2)}`;
const SECRETS = [SMTP_PASSWORD, AUTH_TOKEN, POSTMARK_PASSWORD];

const smtp = { host: 'smtp.example.com', port: 587, security: 'starttls', username: 'apikey', password: SMTP_PASSWORD };
const sendgridKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

function leaksNothing(t: Test, text: string) {
  for (const secret of SECRETS) t.notOk(text.includes(secret), 'no secret echoed');
}

t.test('unconfigured: GET /channels says so, with the sandbox and the callback URLs', async (t) => {
  const ws = await newWorkspace(s, 'Channels none');
  const r = await s.req('GET', `/workspaces/${ws.id}/channels`, { token: ws.token });
  t.equal(r.status, 200, r.text);
  t.same(r.body, {
    success: true,
    data: {
      push: { fcm: { configured: false }, apns: { configured: false } },
      email: { configured: false, sandbox: true },
      sms: { configured: false, sandbox: true, status_callback_url: `${PUBLIC}/webhooks/sms/${ws.id}/status`, inbound_url: `${PUBLIC}/webhooks/sms/${ws.id}/inbound` },
    },
  });
});

t.test('email: set, partial update, webhooks per provider, remove', async (t) => {
  const ws = await newWorkspace(s, 'Channels email');
  const path = `/workspaces/${ws.id}/channels/email`;
  const set = await s.req('PUT', path, { token: ws.token, body: { smtp, from: { email: 'news@example.com', name: 'News' }, reply_to: 'help@example.com', webhooks: { provider: 'sendgrid', verification_key: sendgridKey } } });
  t.equal(set.status, 200, set.text);
  leaksNothing(t, set.text);
  t.same(set.body.data.email, {
    configured: true,
    readable: true,
    smtp: { host: 'smtp.example.com', port: 587, security: 'starttls', username: 'apikey', max_connections: 5, rate_per_second: null },
    from: { email: 'news@example.com', name: 'News' },
    reply_to: 'help@example.com',
    webhooks: { provider: 'sendgrid', url: `${PUBLIC}/webhooks/email/${ws.id}` },
    sandbox: false,
  });
  const row = await sql.query<{ email: Buffer }>('SELECT email FROM message_channels WHERE workspace_id = $1', [ws.id]);
  t.notOk(row.rows[0]!.email.toString('latin1').includes(SMTP_PASSWORD), 'stored sealed');

  // Partial: the port changes, the password is kept (a later send authenticates with it), reply_to removed.
  const partial = await s.req('PUT', path, { token: ws.token, body: { smtp: { port: 465, security: 'tls', rate_per_second: 20 }, reply_to: null } });
  t.equal(partial.status, 200, partial.text);
  t.match(partial.body.data.email, { smtp: { host: 'smtp.example.com', port: 465, security: 'tls', username: 'apikey', rate_per_second: 20 }, reply_to: null, webhooks: { provider: 'sendgrid' } });

  // Another provider: its own fields are required, the SendGrid key is not kept.
  const noPass = await s.req('PUT', path, { token: ws.token, body: { webhooks: { provider: 'postmark', username: 'hooks' } } });
  t.equal(noPass.status, 400, noPass.text);
  t.match(noPass.body.error.details, [{ field: 'webhooks.password' }]);
  const postmark = await s.req('PUT', path, { token: ws.token, body: { webhooks: { provider: 'postmark', username: 'hooks', password: POSTMARK_PASSWORD } } });
  t.equal(postmark.status, 200, postmark.text);
  leaksNothing(t, postmark.text);
  t.same(postmark.body.data.email.webhooks, { provider: 'postmark', url: `${PUBLIC}/webhooks/email/${ws.id}` });

  const removed = await s.req('PUT', path, { token: ws.token, body: { smtp: null } });
  t.equal(removed.status, 200);
  t.same(removed.body.data.email, { configured: false, sandbox: true });
});

t.test('email: refused settings name the field', async (t) => {
  const ws = await newWorkspace(s, 'Channels email refused');
  const path = `/workspaces/${ws.id}/channels/email`;
  const cases: [string, Record<string, unknown>, string][] = [
    ['nothing stored to complete it from', { from: { email: 'a@example.com' } }, 'smtp.host'],
    ['no sender', { smtp }, 'from'],
    ['a private address', { smtp: { ...smtp, host: '10.1.2.3' }, from: { email: 'a@example.com' } }, 'smtp.host'],
    ['metadata address', { smtp: { ...smtp, host: '169.254.169.254' }, from: { email: 'a@example.com' } }, 'smtp.host'],
    ['a SendGrid key that is not one', { smtp, from: { email: 'a@example.com' }, webhooks: { provider: 'sendgrid', verification_key: 'bm90IGEga2V5' } }, 'webhooks.verification_key'],
    ['an unknown security', { smtp: { ...smtp, security: 'ssl' }, from: { email: 'a@example.com' } }, 'smtp.security'],
    ['an unknown field', { smtp: { ...smtp, pasword: 'x' }, from: { email: 'a@example.com' } }, 'smtp'],
  ];
  for (const [what, body, field] of cases) {
    const r = await s.req('PUT', path, { token: ws.token, body });
    t.equal(r.status, 400, `${what}: ${r.text}`);
    t.equal(r.body.error.code, 'VALIDATION_ERROR');
    t.ok((r.body.error.details as { field: string }[]).some((d) => d.field.startsWith(field)), `${what} names ${field}: ${r.text}`);
  }
  t.equal((await s.req('PUT', path, { token: ws.token, body: { smtp: { ...smtp, host: '127.0.0.1' }, from: { email: 'a@example.com' } } })).status, 200, 'an allowed private host');
});

t.test('sms: set, partial, one of from / messaging_service_sid, remove', async (t) => {
  const ws = await newWorkspace(s, 'Channels sms');
  const path = `/workspaces/${ws.id}/channels/sms`;
  const noFrom = await s.req('PUT', path, { token: ws.token, body: { twilio: { account_sid: SID, auth_token: AUTH_TOKEN } } });
  t.equal(noFrom.status, 400, noFrom.text);
  t.match(noFrom.body.error.details, [{ field: 'twilio.from' }]);
  t.equal((await s.req('PUT', path, { token: ws.token, body: { twilio: { account_sid: SID, auth_token: AUTH_TOKEN, from: '15005550006' } } })).status, 400, 'from not E.164');
  const set = await s.req('PUT', path, { token: ws.token, body: { twilio: { account_sid: SID, auth_token: AUTH_TOKEN, from: '+15005550006' }, default_country: 'GB' } });
  t.equal(set.status, 200, set.text);
  leaksNothing(t, set.text);
  t.same(set.body.data.sms, {
    configured: true,
    readable: true,
    twilio: { account_sid: SID, from: '+15005550006', messaging_service_sid: null },
    default_country: 'GB',
    sandbox: false,
    status_callback_url: `${PUBLIC}/webhooks/sms/${ws.id}/status`,
    inbound_url: `${PUBLIC}/webhooks/sms/${ws.id}/inbound`,
  });
  const service = `MG${'fedcba9876543210'.repeat(2)}`;
  const swapped = await s.req('PUT', path, { token: ws.token, body: { twilio: { from: null, messaging_service_sid: service }, default_country: null } });
  t.equal(swapped.status, 200, swapped.text);
  t.match(swapped.body.data.sms, { twilio: { account_sid: SID, from: null, messaging_service_sid: service }, default_country: null });
  const onlyFromRemoved = await s.req('PUT', path, { token: ws.token, body: { twilio: { messaging_service_sid: null } } });
  t.equal(onlyFromRemoved.status, 400, 'removing the last sender is refused');
  const removed = await s.req('PUT', path, { token: ws.token, body: { twilio: null } });
  t.equal(removed.status, 200);
  t.match(removed.body.data.sms, { configured: false, sandbox: true });
});

t.test('roles and credentials: members read, API keys and other workspaces refused', async (t) => {
  const ws = await newWorkspace(s, 'Channels roles');
  const other = await newWorkspace(s, 'Channels theirs');
  const member = uniqueUser('member');
  t.equal((await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: member, role: 'member' } })).status, 201);
  const memberToken = await s.session(member);
  const body = { smtp, from: { email: 'a@example.com' } };
  const refused = await s.req('PUT', `/workspaces/${ws.id}/channels/email`, { token: memberToken, body });
  t.equal(refused.status, 403);
  t.same(refused.body, FORBIDDEN);
  t.equal((await s.req('GET', `/workspaces/${ws.id}/channels`, { token: memberToken })).status, 200, 'a member reads');
  const key = await newKey(s, ws, { permissions: ['*'] });
  for (const [method, path] of [['PUT', 'channels/email'], ['PUT', 'channels/sms'], ['GET', 'channels']] as const) {
    const byKey = await s.req(method, `/workspaces/${ws.id}/${path}`, { token: key.key, body: method === 'PUT' ? body : undefined });
    t.equal(byKey.status, 403, `${method} ${path} with an API key`);
    t.same(byKey.body, FORBIDDEN);
    t.equal((await s.req(method, `/workspaces/${other.id}/${path}`, { token: ws.token, body: method === 'PUT' ? body : undefined })).status, 403, `${method} ${path} on another workspace`);
  }
});

t.test('address suppressions: add by hand, list by channel, lift; members read; keys refused', async (t) => {
  const ws = await newWorkspace(s, 'Suppressions');
  const path = `/workspaces/${ws.id}/suppressions`;
  const mail = await s.req('POST', path, { token: ws.token, body: { channel: 'email', address: 'Someone@Example.com', suppression_type: 'manual', reason: 'asked by phone' } });
  t.equal(mail.status, 201, mail.text);
  t.match(mail.body.suppression, { channel: 'email', address: 'someone@example.com', suppression_type: 'manual', reason: 'asked by phone' });
  const again = await s.req('POST', path, { token: ws.token, body: { channel: 'email', address: 'someone@example.com', suppression_type: 'manual' } });
  t.equal(again.body.suppression.id, mail.body.suppression.id, 'once per address and type');
  const sms = await s.req('POST', path, { token: ws.token, body: { channel: 'sms', address: '+44 7400 123456', suppression_type: 'manual' } });
  t.equal(sms.status, 201, sms.text);
  t.equal(sms.body.suppression.address, '+447400123456');
  t.equal((await s.req('POST', path, { token: ws.token, body: { channel: 'sms', address: 'not a number', suppression_type: 'manual' } })).status, 400);
  t.equal((await s.req('POST', path, { token: ws.token, body: { channel: 'sms', address: '+447400123456', suppression_type: 'hard_bounce' } })).status, 400, 'only manual by hand');
  const all = await s.req('GET', path, { token: ws.token });
  t.equal(all.body.total, 2);
  const onlySms = await s.req('GET', `${path}?channel=sms`, { token: ws.token });
  t.same(onlySms.body.suppressions.map((x: { address: string }) => x.address), ['+447400123456']);
  const key = await newKey(s, ws, { permissions: ['*'] });
  t.equal((await s.req('GET', path, { token: key.key })).status, 403, 'an API key');
  const lifted = await s.req('DELETE', `${path}/${mail.body.suppression.id}`, { token: ws.token });
  t.equal(lifted.status, 200, lifted.text);
  t.equal((await s.req('DELETE', `${path}/${mail.body.suppression.id}`, { token: ws.token })).status, 404);
  t.equal((await s.req('GET', path, { token: ws.token })).body.total, 1);
});

t.test('what is not an address or a country is refused: 400 VALIDATION_ERROR naming the field, nothing stored', async (t) => {
  const ws = await newWorkspace(s, 'Addresses refused');
  const refused = (t: Test, r: Res, field: string, what: string) => {
    t.equal(r.status, 400, `${what}: ${r.text}`);
    t.equal(r.body?.error?.code, 'VALIDATION_ERROR', what);
    t.same(r.body?.error?.details?.map((d: { field: string }) => d.field), [field], `${what}: names ${field}`);
  };
  const path = `/workspaces/${ws.id}/suppressions`;
  for (const address of ['nope', 'a@', '@example.com', 'two@at@example.com', 'spaced out@example.com']) {
    refused(t, await s.req('POST', path, { token: ws.token, body: { channel: 'email', address, suppression_type: 'manual' } }), 'address', `email address ${JSON.stringify(address)}`);
  }
  refused(t, await s.req('POST', path, { token: ws.token, body: { channel: 'sms', address: 'nope', suppression_type: 'manual' } }), 'address', 'sms number "nope"');
  t.equal((await s.req('GET', path, { token: ws.token })).body.total, 0, 'none stored');

  const sms = `/workspaces/${ws.id}/channels/sms`;
  const twilio = { account_sid: SID, auth_token: AUTH_TOKEN, from: '+15005550006' };
  for (const country of ['XX', 'ZZ', 'AA']) refused(t, await s.req('PUT', sms, { token: ws.token, body: { twilio, default_country: country } }), 'default_country', `default_country ${country}`);
  t.match((await s.req('GET', `/workspaces/${ws.id}/channels`, { token: ws.token })).body.data.sms, { configured: false }, 'no SMS channel saved');
  t.equal((await s.req('PUT', sms, { token: ws.token, body: { twilio, default_country: 'FR' } })).status, 200, 'a real country is kept');
  refused(t, await s.req('PUT', sms, { token: ws.token, body: { default_country: 'XX' } }), 'default_country', 'default_country XX on its own');
  t.match((await s.req('GET', `/workspaces/${ws.id}/channels`, { token: ws.token })).body.data.sms, { default_country: 'FR' }, 'the stored country stays');
});

t.test('address suppressions: q keeps the addresses starting with it (any case), with channel and paging; this workspace only', async (t) => {
  const ws = await newWorkspace(s, 'Suppressions search');
  const other = await newWorkspace(s, 'Suppressions elsewhere');
  const path = `/workspaces/${ws.id}/suppressions`;
  const add = async (w: { id: string; token: string }, channel: string, address: string) =>
    t.equal((await s.req('POST', `/workspaces/${w.id}/suppressions`, { token: w.token, body: { channel, address, suppression_type: 'manual' } })).status, 201);
  for (const address of ['ann@example.com', 'anna@example.org', 'bob@example.com', 'an_x@example.com']) await add(ws, 'email', address);
  await add(ws, 'sms', '+447400123456');
  await add(other, 'email', 'ann@elsewhere.com');
  const search = async (query: string) => (await s.req('GET', `${path}?${query}`, { token: ws.token })).body;
  const addresses = (b: { suppressions: { address: string }[] }) => b.suppressions.map((x) => x.address).sort();
  t.same(addresses(await search('q=AN')), ['an_x@example.com', 'ann@example.com', 'anna@example.org'], 'a prefix in any case, this workspace only');
  t.same(addresses(await search('q=an_')), ['an_x@example.com'], '_ is a character, not a wildcard');
  t.same(addresses(await search('q=ann%')), [], '% is a character, not a wildcard');
  t.same(addresses(await search('q=example')), [], 'a prefix, not a substring');
  t.same(addresses(await search(`q=${encodeURIComponent('+4474')}`)), ['+447400123456']);
  t.same(addresses(await search(`q=${encodeURIComponent('+4474')}&channel=email`)), [], 'with channel');
  const page = await search('q=an&limit=2&offset=2');
  t.equal(page.total, 3, 'the total counts the matches');
  t.equal(page.suppressions.length, 1, 'paged within the matches');
  t.equal((await s.req('GET', `${path}?q=`, { token: ws.token })).status, 400, 'an empty q is refused');
});

// A tenant's SMTP host is a destination inside the operator's network (docs/isolation.md): what a
// test send and the message history tell of a failure is a classified reason, never the peer's
// own text unless it is an SMTP reply to a command Herald sent (a NATS INFO line, a banner, a
// closed port's ECONNREFUSED are not shown); a slow relay is answered `smtp_timeout` within the
// request's deadline; ports outside 25, 465, 587 and 2525 need the host in
// HERALD_ALLOWED_PRIVATE_HOSTS, where `host:port` narrows it to one port, checked when the
// channel is saved and again at connect time; a host name is resolved when saved too, and a name
// that resolves to a private address is refused exactly as one that does not resolve.
import t, { type Test } from 'tap';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { SMTPServer } from 'smtp-server';
import { newKey, newWorkspace, startServer, type TestServer } from '../helpers/server.js';
import { ownDatabase } from '../helpers/database.js';

t.setTimeout(240_000);

/** What no answer may repeat: the peers' own words, the socket's, the resolver's, the guard's. */
const LEAKS = /SECRET|NDXQ|ECONNREFUSED|ENOTFOUND|getaddrinfo|ProFTPD|private|loopback|\b127\.0\.0\.1\b|:\d{4,5}\b/i;

/** A TCP service that is not SMTP: says `banner` (if any) on connect, answers every line with `reply`. */
async function service(banner: string | null, reply: string): Promise<{ port: number; connections: () => number }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    if (banner !== null) socket.write(banner);
    socket.on('data', () => socket.write(reply));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { port: (server.address() as net.AddressInfo).port, connections: () => sockets.size };
}

// The NATS server's first line (its real shape: server id and version), a PostgreSQL-like
// banner, an FTP server (a "220" greeting, then refusals of EHLO and HELO), a Redis-like
// service (silent until spoken to).
const nats = await service('INFO {"server_id":"NDXQSECRETSERVERID","server_name":"nats-SECRET","version":"2.10.14","go":"go1.22","host":"0.0.0.0","port":4222,"max_payload":1048576}\r\n', '-ERR \'Unknown Protocol Operation\'\r\n');
const postgres = await service('PostgreSQL 16.2 SECRET-cluster ready\r\n', 'E SECRET\r\n');
const ftp = await service('220 ProFTPD 1.3.8 Server (SECRET ftp)\r\n', "500 'EHLO': command not understood (SECRET)\r\n");
const redis = await service(null, "-ERR unknown command 'EHLO', with args beginning with: SECRET\r\n");

/** A port nothing listens on (bound, then released). */
const closedPort = await new Promise<number>((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address() as net.AddressInfo;
    s.close(() => resolve(port));
  });
});

// A real SMTP relay: AUTH required (user relay / relay-pass), no STARTTLS; refuses one mailbox.
const relayGot: string[] = [];
const relay = new SMTPServer({
  disabledCommands: ['STARTTLS'],
  authMethods: ['PLAIN', 'LOGIN'],
  onAuth: (auth, _s, cb) => cb(auth.username === 'relay' && auth.password === 'relay-pass' ? null : Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }), { user: 'relay' }),
  onRcptTo: (address, _s, cb) => (address.address.startsWith('nobody@') ? cb(Object.assign(new Error('5.1.1 <nobody@example.com>: Recipient address rejected: User unknown'), { responseCode: 550 })) : cb()),
  onData(stream, session, cb) {
    stream.resume();
    stream.on('end', () => {
      relayGot.push(...session.envelope.rcptTo.map((r) => r.address));
      cb();
    });
  },
});
relay.on('error', () => {});
await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => relay.close(() => r())));
const relayPort = (relay.server.address() as net.AddressInfo).port;

// A slow relay: its greeting comes a minute after the connection.
const slow = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], onConnect: (_s, cb) => void setTimeout(() => cb(), 60_000).unref() });
slow.on('error', () => {});
await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => slow.close(() => r())));
const slowPort = (slow.server.address() as net.AddressInfo).port;

const REQUEST_TIMEOUT_MS = 8_000;
const DB = await ownDatabase(t);
const dir = mkdtempSync(join(tmpdir(), 'herald-smtp-dest-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const common = { ...DB, HERALD_SECRETS_KEY: randomBytes(32).toString('hex'), HERALD_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS) };
// First with 127.0.0.1 on every port and two names (so channels naming them can be saved), then
// restarted on the same data with only the relay's port of 127.0.0.1.
let s: TestServer = await startServer({ ...common, HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1,localhost,nowhere.invalid' }, { keepDataDir: dir });
t.teardown(() => s.stop());

interface Tenant {
  ws: { id: string; token: string };
  campaignId: string;
  personId: string;
}

/** A workspace whose email channel is `smtp`, with a draft campaign of one email node and one person to test-send it to. */
async function tenant(t: Test, smtp: Record<string, unknown>, email = 'someone@example.com'): Promise<Tenant> {
  const ws = await newWorkspace(s, 'SMTP destinations');
  const set = await s.req('PUT', `/workspaces/${ws.id}/channels/email`, { token: ws.token, body: { smtp: { security: 'none', ...smtp }, from: { email: 'news@herald.example' } } });
  t.equal(set.status, 200, set.text);
  const key = await newKey(s, ws, { permissions: ['people:write'] });
  const person = await s.req('POST', '/identify', { token: key.key, body: { userId: 'p', email } });
  t.equal(person.status, 200, person.text);
  const c = await s.req('POST', '/campaigns', { token: ws.token, headers: { 'x-workspace-id': ws.id }, body: { name: 'Test send', trigger_type: 'webhook', trigger_config: {}, workflow_definition: { nodes: [{ id: 'mail', type: 'email', subject: 'S', text: 'T' }] } } });
  t.equal(c.status, 201, c.text);
  return { ws, campaignId: c.body.data.campaign.id, personId: person.body.person.id };
}

/** A test send of the tenant's email node: the answer's data, and the message as the person's history shows it. */
async function testSend(t: Test, x: Tenant) {
  const r = await s.req('POST', `/workspaces/${x.ws.id}/campaigns/${x.campaignId}/test-send`, { token: x.ws.token, body: { node_id: 'mail', person_id: x.personId } });
  t.equal(r.status, 200, r.text);
  const history = await s.req('GET', `/workspaces/${x.ws.id}/people/${x.personId}/messages`, { token: x.ws.token });
  const recorded = history.body.messages.find((m: { message_id: string }) => m.message_id === r.body.data?.message_id);
  t.ok(recorded, 'recorded in the message history');
  t.equal(recorded?.error ?? null, r.body.data?.error, 'the history shows what the answer said');
  return r.body.data as { status: string; error: string | null };
}

t.test('a failure says its class, never what the peer said (a NATS INFO line, a banner, a closed port)', async (t) => {
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['NATS', { host: '127.0.0.1', port: nats.port }, /^smtp_protocol_error: /],
    ['a PostgreSQL-like banner', { host: '127.0.0.1', port: postgres.port }, /^smtp_protocol_error: /],
    ['an FTP server (a 220 greeting, EHLO and HELO refused)', { host: '127.0.0.1', port: ftp.port }, /^smtp_protocol_error: /],
    ['a closed port', { host: '127.0.0.1', port: closedPort }, /^smtp_unreachable: /],
    ['TLS to a relay without it', { host: '127.0.0.1', port: relayPort, security: 'tls' }, /^smtp_tls_failed: /],
    ['a service silent until spoken to (Redis)', { host: '127.0.0.1', port: redis.port }, /^smtp_timeout: /],
  ];
  for (const [what, smtp, reason] of cases) {
    const sent = await testSend(t, await tenant(t, smtp));
    t.equal(sent.status, 'failed', what);
    t.match(sent.error, reason, `${what}: ${sent.error}`);
    t.notMatch(sent.error, LEAKS, `${what}: nothing of the peer, the socket or the address`);
  }
});

t.test("an SMTP relay's replies to Herald's commands are shown, with their code", async (t) => {
  const badAuth = await testSend(t, await tenant(t, { host: '127.0.0.1', port: relayPort, username: 'relay', password: 'wrong' }));
  t.match(badAuth, { status: 'failed', error: /^smtp_auth_failed 535: .*Authentication credentials invalid/ });
  const unknown = await testSend(t, await tenant(t, { host: '127.0.0.1', port: relayPort, username: 'relay', password: 'relay-pass' }, 'nobody@example.com'));
  t.match(unknown, { status: 'failed', error: /^smtp_rejected 550: 5\.1\.1 <nobody@example\.com>: Recipient address rejected/ });
  const ok = await testSend(t, await tenant(t, { host: '127.0.0.1', port: relayPort, username: 'relay', password: 'relay-pass' }, 'ok@example.com'));
  t.match(ok, { status: 'sent', error: null });
  t.ok(relayGot.includes('ok@example.com'), 'the relay got it');
});

t.test('8 test sends to a relay that greets after a minute: each answered `failed` (smtp_timeout) within the deadline, recorded', async (t) => {
  const x = await tenant(t, { host: '127.0.0.1', port: slowPort });
  const started = Date.now();
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => s.req('POST', `/workspaces/${x.ws.id}/campaigns/${x.campaignId}/test-send`, { token: x.ws.token, body: { node_id: 'mail', person_id: x.personId } })),
  );
  const took = Date.now() - started;
  t.comment(`8 test sends to the slow relay answered in ${took} ms (request timeout ${REQUEST_TIMEOUT_MS} ms)`);
  t.same(answers.map((r) => r.status), Array(8).fill(200), 'no 503');
  for (const r of answers) t.match(r.body.data, { status: 'failed', error: /^smtp_timeout: / });
  const history = await s.req('GET', `/workspaces/${x.ws.id}/people/${x.personId}/messages`, { token: x.ws.token });
  const ids = new Set(answers.map((r) => r.body.data.message_id));
  t.equal(history.body.messages.filter((m: { message_id: string; status: string }) => ids.has(m.message_id) && m.status === 'failed').length, 8, 'the 8 records were written before the answers');
});

t.test('ports: 25, 465, 587 and 2525 for any public host; another one needs the host in HERALD_ALLOWED_PRIVATE_HOSTS', async (t) => {
  const ws = await newWorkspace(s, 'SMTP ports');
  const put = (smtp: Record<string, unknown>) => s.req('PUT', `/workspaces/${ws.id}/channels/email`, { token: ws.token, body: { smtp: { security: 'starttls', ...smtp }, from: { email: 'news@herald.example' } } });
  for (const port of [25, 465, 587, 2525]) t.equal((await put({ host: '8.8.8.8', port })).status, 200, `port ${port}`);
  for (const port of [22, 2526, 6379]) {
    const r = await put({ host: '8.8.8.8', port });
    t.equal(r.status, 400, `port ${port}: ${r.text}`);
    t.same(r.body.error.details.map((d: { field: string }) => d.field), ['smtp.port'], 'names the port');
  }
  t.equal((await put({ host: '127.0.0.1', port: 6379 })).status, 200, 'a host listed without a port: any port');
});

t.test('restarted with `127.0.0.1:<relay port>` only, and names checked as connections are', async (t) => {
  // Saved under the first allow-list: a channel on another port of 127.0.0.1, and two names it listed.
  const otherPort = await tenant(t, { host: '127.0.0.1', port: nats.port });
  const onRelay = await tenant(t, { host: '127.0.0.1', port: relayPort, username: 'relay', password: 'relay-pass' }, 'again@example.com');
  const internal = await tenant(t, { host: 'localhost', port: 587 });
  const missing = await tenant(t, { host: 'nowhere.invalid', port: 587 });
  await s.stop();
  s = await startServer({ ...common, HERALD_ALLOWED_PRIVATE_HOSTS: `127.0.0.1:${relayPort}` }, { keepDataDir: dir });

  const natsBefore = nats.connections();
  const refused = await testSend(t, otherPort);
  t.match(refused, { status: 'failed', error: /^smtp_unreachable: / }, 'another port of the listed host is refused at connect time');
  t.equal(nats.connections(), natsBefore, 'without a connection');
  t.match(await testSend(t, onRelay), { status: 'sent' }, 'the listed port is reached');

  // A name that resolves to a loopback address and one that does not resolve: one refusal, word for word.
  const a = await testSend(t, internal);
  const b = await testSend(t, missing);
  t.match(a, { status: 'failed', error: /^smtp_unreachable: / });
  t.equal(a.error, b.error, 'localhost and an unknown name fail alike');
  t.notMatch(a.error, LEAKS);

  const put = (host: string, port: number) => s.req('PUT', `/workspaces/${internal.ws.id}/channels/email`, { token: internal.ws.token, body: { smtp: { host, port, security: 'none' } } });
  const savedLocal = await put('localhost', 587);
  const savedMissing = await put('nowhere.invalid', 587);
  t.equal(savedLocal.status, 400, `localhost is refused when saved: ${savedLocal.text}`);
  t.equal(savedMissing.status, 400, savedMissing.text);
  t.same(savedLocal.body.error.details, savedMissing.body.error.details, 'with the same words as an unknown name');
  t.same(savedLocal.body.error.details.map((d: { field: string }) => d.field), ['smtp.host']);
  t.match(savedLocal.body.error.details[0].message, /HERALD_ALLOWED_PRIVATE_HOSTS/, 'saying what a local relay needs');
  t.notMatch(savedLocal.body.error.details[0].message, /\b127\.0\.0\.1\b|::1/, 'not what the name resolves to');
  const otherPortSaved = await put('127.0.0.1', nats.port);
  t.equal(otherPortSaved.status, 400, 'another port of the listed host is refused when saved');
  t.equal((await put('127.0.0.1', relayPort)).status, 200, 'the listed port is saved');
});

// Outbound webhooks (docs/webhooks.md) against real receivers run here: every delivery is
// checked with the `standardwebhooks` package as an integrator's receiver would. Endpoints
// (create, read, change, delete, rotate, permissions, bad input), events from the places their
// changes are committed (people, messages, campaigns), retries on the configured schedule, a
// receiver that fails, times out, answers 410, or is stopped and started again, and a resend.
import t from 'tap';
import { NO_LIMITS, ISO_MS, UUID, sessionError } from '../helpers/assert.js';
import pg from 'pg';
import { newWorkspace, startServer, storeUrl, triggerWebhookCampaign, uniqueUser, workspaceWithKeys, type Herald } from '../helpers/server.js';
import { receiver, type Receiver } from '../helpers/webhook-receiver.js';
import { ownDatabase } from '../helpers/database.js';

// Retries a second apart, a delivery's deadline 1.5 s, and an endpoint disabled after 6 s of failures.
// A database of its own on DATABASE_URL: another file's server would deliver these workspaces' events.
const s = await startServer({ ...NO_LIMITS, ...(await ownDatabase(t)), HERALD_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s', HERALD_WEBHOOK_TIMEOUT_MS: '1500', HERALD_WEBHOOK_DISABLE_AFTER_MS: '6000' });
t.teardown(() => { if (process.env.SHOW_STDERR) console.error(s.stderr().slice(-3000)); return s.stop(); });

type Ws = { id: string; token: string };

async function endpoint(s: Herald, ws: Ws, r: Receiver, body: Record<string, unknown> = {}): Promise<{ id: string; secret: string }> {
  const res = await s.req('POST', `/workspaces/${ws.id}/webhooks`, { token: ws.token, body: { url: r.url, event_types: ['*'], ...body } });
  if (res.status !== 201) throw new Error(`endpoint create failed: ${res.status} ${res.text}`);
  r.secrets.push(res.body.data.secret);
  return { id: res.body.data.endpoint.id, secret: res.body.data.secret };
}

async function identify(s: Herald, key: string, userId: string, traits: Record<string, unknown> = {}): Promise<void> {
  const r = await s.req('POST', '/identify', { token: key, body: { userId, traits } });
  if (r.status !== 200) throw new Error(`identify failed: ${r.status} ${r.text}`);
}

const attemptsOf = async (ws: Ws, id: string) => (await s.req('GET', `/workspaces/${ws.id}/webhooks/${id}/attempts`, { token: ws.token })).body.data.attempts as Array<Record<string, unknown>>;

/** An endpoint's attempts once `pred` holds of them: an attempt is recorded after its answer
 * arrives, so a receiver can see a try before the attempts list shows it. */
async function attemptsWhen(ws: Ws, id: string, pred: (as: Array<Record<string, unknown>>) => boolean): Promise<Array<Record<string, unknown>>> {
  for (let i = 0; ; i++) {
    const as = await attemptsOf(ws, id);
    if (pred(as) || i === 100) return as;
    await new Promise((res) => setTimeout(res, 50));
  }
}

t.test('endpoints: create answers the secret once; read, list, change, delete', async (t) => {
  const ws = await newWorkspace(s);
  const r = await receiver(t);
  const created = await s.req('POST', `/workspaces/${ws.id}/webhooks`, { token: ws.token, body: { url: r.url, event_types: ['message.sent', 'person.created'], description: 'CRM' } });
  t.equal(created.status, 201, created.text);
  const e = created.body.data.endpoint;
  t.match(created.body.data.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  t.match(e, { url: r.url, event_types: ['message.sent', 'person.created'], description: 'CRM', enabled: true, disabled_reason: null });
  t.match(e.id, UUID);
  t.match(e.created_at, ISO_MS);
  const got = await s.req('GET', `/workspaces/${ws.id}/webhooks/${e.id}`, { token: ws.token });
  t.same(got.body.data.endpoint, e, 'read back the same, without the secret');
  t.notOk(JSON.stringify(got.body).includes(created.body.data.secret), 'the secret is never answered again');
  const listed = await s.req('GET', `/workspaces/${ws.id}/webhooks`, { token: ws.token });
  t.same(listed.body.data.endpoints.map((x: { id: string }) => x.id), [e.id]);
  const changed = await s.req('PUT', `/workspaces/${ws.id}/webhooks/${e.id}`, { token: ws.token, body: { event_types: ['*'], enabled: false } });
  t.equal(changed.status, 200, changed.text);
  t.match(changed.body.data.endpoint, { event_types: ['*'], enabled: false, description: 'CRM', url: r.url });
  const deleted = await s.req('DELETE', `/workspaces/${ws.id}/webhooks/${e.id}`, { token: ws.token });
  t.equal(deleted.status, 200);
  sessionError(t, await s.req('GET', `/workspaces/${ws.id}/webhooks/${e.id}`, { token: ws.token }), 404, 'NOT_FOUND');
});

t.test('permissions: members read, only owners and admins write; another workspace sees nothing', async (t) => {
  const ws = await newWorkspace(s);
  const r = await receiver(t);
  const e = await endpoint(s, ws, r);
  const member = uniqueUser('member');
  const admin = uniqueUser('admin');
  for (const [user, role] of [[member, 'member'], [admin, 'admin']]) {
    const add = await s.req('POST', `/workspaces/${ws.id}/members`, { token: ws.token, body: { user_id: user, role } });
    t.equal(add.status, 201, add.text);
  }
  const m = await s.session(member);
  t.equal((await s.req('GET', `/workspaces/${ws.id}/webhooks`, { token: m })).status, 200, 'a member lists');
  t.equal((await s.req('GET', `/workspaces/${ws.id}/webhooks/${e.id}/attempts`, { token: m })).status, 200, 'a member reads attempts');
  for (const [method, path, body] of [
    ['POST', '', { url: r.url, event_types: ['*'] }],
    ['PUT', `/${e.id}`, { enabled: false }],
    ['DELETE', `/${e.id}`, undefined],
    ['POST', `/${e.id}/rotate-secret`, undefined],
    ['POST', `/${e.id}/test`, undefined],
  ] as const) {
    const res = await s.req(method, `/workspaces/${ws.id}/webhooks${path}`, { token: m, body });
    t.equal(res.status, 403, `a member cannot ${method} ${path || '/'}`);
  }
  const a = await s.session(admin);
  t.equal((await s.req('PUT', `/workspaces/${ws.id}/webhooks/${e.id}`, { token: a, body: { description: 'by admin' } })).status, 200, 'an admin changes');
  // An endpoint id of another workspace is 404 there, even for that workspace's owner.
  const other = await newWorkspace(s);
  sessionError(t, await s.req('GET', `/workspaces/${other.id}/webhooks/${e.id}`, { token: other.token }), 404, 'NOT_FOUND');
  sessionError(t, await s.req('PUT', `/workspaces/${other.id}/webhooks/${e.id}`, { token: other.token, body: { enabled: false } }), 404, 'NOT_FOUND');
  sessionError(t, await s.req('DELETE', `/workspaces/${other.id}/webhooks/${e.id}`, { token: other.token }), 404, 'NOT_FOUND');
  sessionError(t, await s.req('POST', `/workspaces/${other.id}/webhooks/${e.id}/test`, { token: other.token }), 404, 'NOT_FOUND');
  t.equal((await s.req('GET', `/workspaces/${ws.id}/webhooks`, { token: other.token })).status, 403, 'a stranger cannot list');
});

t.test('bad input: URLs refused, unknown event types, malformed ids', async (t) => {
  const ws = await newWorkspace(s);
  const post = (body: Record<string, unknown>) => s.req('POST', `/workspaces/${ws.id}/webhooks`, { token: ws.token, body });
  // 127.0.0.1 is allowed to the tests (HERALD_ALLOWED_PRIVATE_HOSTS); other private addresses are not.
  for (const url of ['http://10.0.0.5/hook', 'http://169.254.169.254/latest', 'http://[::1]:8080/', 'http://0.0.0.0/', 'ftp://example.com/', 'not a url', 'https://user:pw@example.com/']) {
    sessionError(t, await post({ url, event_types: ['*'] }), 400, 'VALIDATION_ERROR', 'url');
  }
  sessionError(t, await post({ url: 'http://127.0.0.1:9/x', event_types: ['message.exploded'] }), 400, 'VALIDATION_ERROR');
  sessionError(t, await post({ url: 'http://127.0.0.1:9/x', event_types: [] }), 400, 'VALIDATION_ERROR');
  sessionError(t, await post({ url: 'http://127.0.0.1:9/x' }), 400, 'VALIDATION_ERROR');
  sessionError(t, await s.req('GET', `/workspaces/${ws.id}/webhooks/not-a-uuid`, { token: ws.token }), 404, 'NOT_FOUND');
  const ok = await post({ url: 'http://127.0.0.1:9/x', event_types: ['person.created'] });
  t.equal(ok.status, 201, ok.text);
  sessionError(t, await s.req('PUT', `/workspaces/${ws.id}/webhooks/${ok.body.data.endpoint.id}`, { token: ws.token, body: { url: 'http://192.168.1.1/' } }), 400, 'VALIDATION_ERROR', 'url');
});

t.test('events: people, messages and campaigns arrive once each, signed, to the subscribed endpoints only', async (t) => {
  const { ws, all } = await workspaceWithKeys(s, { all: ['*'] });
  const everything = await receiver(t);
  const sentOnly = await receiver(t);
  await endpoint(s, ws, everything);
  await endpoint(s, ws, sentOnly, { event_types: ['message.sent'] });
  // A workspace nobody listens to writes no outbox rows and sends nothing anywhere.
  const quiet = await workspaceWithKeys(s, { all: ['*'] });
  await identify(s, quiet.all, 'q1');

  await identify(s, all, 'ann', { plan: 'free' });
  await identify(s, all, 'ann', { plan: 'pro' });
  await identify(s, all, 'ann', { plan: 'pro' }); // no change: no event
  t.ok(await everything.until((ds) => ds.filter((d) => d.event?.type === 'person.updated').length >= 1));
  const created = everything.of('person.created');
  t.equal(created.length, 1, 'person.created once');
  t.match(created[0]!.event!.data, { external_id: 'ann', traits: { plan: 'free' } });
  t.equal(everything.of('person.updated').length, 1, 'person.updated once (the repeat changed nothing)');
  t.match(everything.of('person.updated')[0]!.event!.data, { traits: { plan: 'pro' } });

  const person = await s.req('GET', '/people/ann', { token: all });
  const pid = person.body.person?.id ?? person.body.id;
  const unsub = await s.req('PATCH', `/workspaces/${ws.id}/people/${pid}`, { token: ws.token, body: { status: 'unsubscribed' } });
  t.equal(unsub.status, 200, unsub.text);
  const resub = await s.req('PATCH', `/workspaces/${ws.id}/people/${pid}`, { token: ws.token, body: { status: 'active' } });
  t.equal(resub.status, 200, resub.text);
  t.ok(await everything.until(() => everything.of('person.resubscribed').length === 1), 'person.resubscribed');
  t.equal(everything.of('person.unsubscribed').length, 1, 'person.unsubscribed');

  // A push through the sandbox: message.sent to both endpoints.
  const device = await s.req('POST', '/people/ann/devices', { token: all, body: { token: 'a'.repeat(64), platform: 'ios' } });
  t.ok(device.status === 201 || device.status === 200, device.text);
  const send = await s.req('POST', `/workspaces/${ws.id}/push/send`, { token: all, body: { external_id: 'ann', title: 'Hi', body: 'There' } });
  t.equal(send.status, 200, send.text);
  const messageId = send.body.message_id ?? send.body.data?.message_id;
  t.ok(await sentOnly.until(() => sentOnly.of('message.sent').length === 1), 'message.sent to the subscribed endpoint');
  t.ok(await everything.until(() => everything.of('message.sent').length === 1), 'and to "*"');
  t.match(sentOnly.of('message.sent')[0]!.event!.data, { channel: 'push', status: 'sent', external_id: 'ann', title: 'Hi', person_id: pid });
  if (messageId) t.equal(sentOnly.of('message.sent')[0]!.event!.data.message_id, messageId);
  t.notOk('node_id' in sentOnly.of('message.sent')[0]!.event!.data, 'a single send has no node');
  
  // A campaign going live, and its email to a person with an address.
  // The sandbox email plays the provider's later reports: delivered, a hard bounce, a complaint.
  await identify(s, all, 'bob', { email: 'bob@example.com' });
  await identify(s, all, 'carl', { email: 'bounce@simulator.herald.test' });
  await identify(s, all, 'dana', { email: 'complaint@simulator.herald.test' });
  const campaignId = await triggerWebhookCampaign(s, ws, all, { id: 'mail', type: 'email', subject: 'S', text: 'T' });
  t.ok(await everything.until(() => everything.of('campaign.activated').length === 1), 'campaign.activated');
  t.equal(everything.of('campaign.activated')[0]!.event!.data.campaign_id, campaignId);
  const emailOf = (type: string, who: string) => everything.of(type).filter((d) => d.event!.data.channel === 'email' && d.event!.data.external_id === who);
  const outcomes: [string, string][] = [['message.sent', 'bob'], ['message.delivered', 'bob'], ['message.sent', 'carl'], ['message.bounced', 'carl'], ['message.sent', 'dana'], ['message.complained', 'dana'], ['message.skipped', 'ann']];
  t.ok(await everything.until(() => outcomes.every(([type, who]) => emailOf(type, who).length > 0), 15_000), 'every outcome of the campaign email arrives');
  for (const [type, who] of outcomes) t.equal(emailOf(type, who).length, 1, `${type} for ${who} once`);
  t.match(emailOf('message.sent', 'bob')[0]!.event!.data, { campaign_id: campaignId, node_id: 'mail', to: 'bob@example.com', status: 'sent' });
  t.match(emailOf('message.delivered', 'bob')[0]!.event!.data, { campaign_id: campaignId, status: 'delivered', message_id: emailOf('message.sent', 'bob')[0]!.event!.data.message_id });
  t.ok(await everything.until(() => everything.of('person.unsubscribed').some((d) => d.event!.data.external_id === 'dana')), 'the complaint unsubscribes dana: person.unsubscribed');

  // Deleting the person.
  const del = await s.req('DELETE', '/people/ann', { token: all });
  t.equal(del.status, 200, del.text);
  t.ok(await everything.until(() => everything.of('person.deleted').length === 1), 'person.deleted');

  await new Promise((r) => setTimeout(r, 500));
  t.ok(sentOnly.deliveries.every((d) => d.event?.type === 'message.sent'), 'the message.sent endpoint got nothing else');
  for (const d of everything.deliveries) {
    t.equal(d.verifiedBy.length, 1, `${d.event?.type}: verified with the endpoint's secret`);
    t.match(d.id, /^msg_/);
    t.match(d.event!.timestamp, ISO_MS);
  }
  t.equal(new Set(everything.deliveries.map((d) => d.id)).size, everything.deliveries.length, 'each event once (no retries: every answer was 2xx)');
});

t.test('a receiver that fails the first tries, then answers: retried on the schedule with the same webhook-id; attempts newest first', async (t) => {
  const { ws, all } = await workspaceWithKeys(s, { all: ['*'] });
  const r = await receiver(t);
  r.answer = (n) => (n < 2 ? 500 : 200);
  const e = await endpoint(s, ws, r, { event_types: ['person.created'] });
  await identify(s, all, 'retry-me');
  t.ok(await r.until((ds) => ds.length === 3, 10_000), 'three tries');
  t.equal(new Set(r.deliveries.map((d) => d.id)).size, 1, 'one webhook-id for every try');
  t.ok(r.deliveries.every((d) => d.verifiedBy.length === 1), 'each try verified');
  const gap = r.deliveries[1]!.at - r.deliveries[0]!.at;
  t.ok(gap >= 900, `the retry waited the schedule's 1 s (${gap} ms)`);
  const attempts = await attemptsWhen(ws, e.id, (as) => as.length === 3);
  t.same(attempts.map((a) => a.attempt), [3, 2, 1], 'newest first');
  t.match(attempts[2], { status_code: 500, error: 'HTTP 500', event_type: 'person.created', message_id: r.deliveries[0]!.id });
  t.match(attempts[2]!.next_attempt_at, ISO_MS);
  t.match(attempts[0], { status_code: 200, error: null, next_attempt_at: null });
  const got = await s.req('GET', `/workspaces/${ws.id}/webhooks/${e.id}`, { token: ws.token });
  t.equal(got.body.data.endpoint.enabled, true, 'a success clears the failures');
});

t.test('a receiver that times out, then one that answers 410: the timeout is retried, 410 disables the endpoint', async (t) => {
  const { ws, all } = await workspaceWithKeys(s, { all: ['*'] });
  const r = await receiver(t);
  r.answer = (n) => (n === 0 ? 'hang' : n === 1 ? 'drip' : 410);
  const e = await endpoint(s, ws, r, { event_types: ['person.created'] });
  await identify(s, all, 'slow');
  t.ok(await r.until((ds) => ds.length === 3, 12_000), 'hang, drip, then 410');
  const attempts = await attemptsWhen(ws, e.id, (as) => as.length === 3);
  t.match(attempts[2], { status_code: null, error: /^timed out/ });
  t.match(attempts[1], { error: /^timed out/ }, 'an answer dripped a byte at a time is cut at the deadline');
  t.match(attempts[0], { status_code: 410, next_attempt_at: null });
  const got = await s.req('GET', `/workspaces/${ws.id}/webhooks/${e.id}`, { token: ws.token });
  t.match(got.body.data.endpoint, { enabled: false, disabled_reason: /410/ });
  await identify(s, all, 'after-410');
  await new Promise((res) => setTimeout(res, 1500));
  t.equal(r.deliveries.length, 3, 'a disabled endpoint gets nothing more');
  // Enabled again by hand: the reason goes, new events arrive.
  r.answer = () => 200;
  const enabled = await s.req('PUT', `/workspaces/${ws.id}/webhooks/${e.id}`, { token: ws.token, body: { enabled: true } });
  t.match(enabled.body.data.endpoint, { enabled: true, disabled_reason: null });
  await identify(s, all, 'after-enable');
  t.ok(await r.until(() => r.deliveries.some((d) => d.event?.data.external_id === 'after-enable')));
});

t.test('a receiver stopped and started again gets the event on a retry', async (t) => {
  const { ws, all } = await workspaceWithKeys(s, { all: ['*'] });
  const r = await receiver(t);
  const e = await endpoint(s, ws, r, { event_types: ['person.created'] });
  await r.stop();
  await identify(s, all, 'while-down');
  // The first try finds nobody listening.
  const first = (await attemptsWhen(ws, e.id, (as) => as.length > 0))[0]!;
  t.match(first, { status_code: null, error: /^unreachable/ });
  await r.start();
  t.ok(await r.until((ds) => ds.some((d) => d.event?.data.external_id === 'while-down'), 6000), 'arrives once the receiver is back');
});

t.test('rotation: both secrets sign for 24 hours', async (t) => {
  const ws = await newWorkspace(s);
  const r = await receiver(t);
  const e = await endpoint(s, ws, r);
  const rotated = await s.req('POST', `/workspaces/${ws.id}/webhooks/${e.id}/rotate-secret`, { token: ws.token });
  t.equal(rotated.status, 200, rotated.text);
  const fresh = rotated.body.data.secret as string;
  t.not(fresh, e.secret);
  r.secrets = [fresh, e.secret];
  const sent = await s.req('POST', `/workspaces/${ws.id}/webhooks/${e.id}/test`, { token: ws.token });
  t.equal(sent.status, 202, sent.text);
  t.ok(await r.until((ds) => ds.length === 1));
  const d = r.deliveries[0]!;
  t.equal(d.event?.type, 'webhook.test');
  t.equal(d.id, sent.body.data.message_id);
  t.same(d.verifiedBy, [fresh, e.secret], 'verified with the new secret and with the old one');
  t.equal(d.signature.split(' ').length, 2, 'two v1 signatures');

  // The old secret signs for 24 hours from the rotation, then no more: its end moved to the past
  // stands for the day gone by.
  const sql = new pg.Client({ connectionString: storeUrl(s) });
  await sql.connect();
  t.teardown(() => sql.end());
  const until = (await sql.query<{ hours: number }>('SELECT extract(epoch FROM previous_secret_until - now()) / 3600 AS hours FROM webhook_endpoints WHERE id = $1', [e.id])).rows[0]!.hours;
  t.ok(until > 23.9 && until <= 24, `the old secret ends 24 hours after the rotation (${until} h)`);
  await sql.query(`UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second' WHERE id = $1`, [e.id]);
  const later = await s.req('POST', `/workspaces/${ws.id}/webhooks/${e.id}/test`, { token: ws.token });
  t.equal(later.status, 202, later.text);
  t.ok(await r.until((ds) => ds.length === 2));
  t.same(r.deliveries[1]!.verifiedBy, [fresh], 'after the 24 hours, the new secret alone');
  t.equal(r.deliveries[1]!.signature.split(' ').length, 1, 'one v1 signature');
});

t.test('resend: a failed attempt is sent again with its webhook-id; a pending one is refused', async (t) => {
  const { ws, all } = await workspaceWithKeys(s, { all: ['*'] });
  const r = await receiver(t);
  r.answer = () => 503;
  const e = await endpoint(s, ws, r, { event_types: ['person.created'] });
  await identify(s, all, 'resend-me');
  t.ok(await r.until((ds) => ds.length === 1));
  const pending = (await attemptsWhen(ws, e.id, (as) => as.length === 1))[0]!;
  sessionError(t, await s.req('POST', `/workspaces/${ws.id}/webhooks/${e.id}/attempts/${pending.id as string}/resend`, { token: ws.token }), 409, 'DELIVERY_PENDING');
  // 1 + 3 retries, then failed.
  t.ok(await r.until((ds) => ds.length === 4, 10_000), 'tried on the whole schedule');
  const last = (await attemptsWhen(ws, e.id, (as) => as.length === 4))[0]!;
  t.match(last, { attempt: 4, next_attempt_at: null, status_code: 503 });
  r.answer = () => 200;
  const resent = await s.req('POST', `/workspaces/${ws.id}/webhooks/${e.id}/attempts/${last.id as string}/resend`, { token: ws.token });
  t.equal(resent.status, 202, resent.text);
  t.ok(await r.until((ds) => ds.length === 5));
  t.equal(r.deliveries[4]!.id, r.deliveries[0]!.id, 'the same webhook-id');
  sessionError(t, await s.req('POST', `/workspaces/${ws.id}/webhooks/${e.id}/attempts/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/resend`, { token: ws.token }), 404, 'NOT_FOUND');
});

t.test('an endpoint failing for longer than HERALD_WEBHOOK_DISABLE_AFTER_MS is disabled with its reason', async (t) => {
  const { ws, all } = await workspaceWithKeys(s, { all: ['*'] });
  const r = await receiver(t);
  r.answer = () => 500;
  const e = await endpoint(s, ws, r, { event_types: ['person.created'] });
  // Events keep coming: each fails its tries, the clock runs from the first failure.
  for (let i = 0; i < 5; i++) {
    await identify(s, all, `failing-${i}`);
    await new Promise((res) => setTimeout(res, 1500));
  }
  let endpointNow: Record<string, unknown> = {};
  for (let i = 0; i < 40; i++) {
    endpointNow = (await s.req('GET', `/workspaces/${ws.id}/webhooks/${e.id}`, { token: ws.token })).body.data.endpoint;
    if (!endpointNow.enabled) break;
    await new Promise((res) => setTimeout(res, 250));
  }
  t.match(endpointNow, { enabled: false, disabled_reason: /failed since/ });
});

// The Segment-compatible source (README, Segment-compatible source; docs/ingest.md) driven by
// the real client libraries, unmodified, pointed at a test Herald by their host option only:
// @segment/analytics-node and @rudderstack/rudder-sdk-node (which gzips its batches). Every
// message type arrives and maps; their batching (flushAt 100) sends 100 messages a request; a
// TCP proxy that drops Herald's first answer after it stored makes each client retry, and
// nothing is doubled (messageId); a campaign a Segment track triggers fires once. Bad input
// through plain HTTP: a wrong key, a key without events:write, an over-limit body, a message
// without userId and anonymousId, an unknown type in a batch, a messageId over 100 characters:
// each its documented 4xx, nothing stored; a batch keeps its valid messages. Every answer the
// test reads itself is checked against the OpenAPI document.
import t from 'tap';
import net from 'node:net';
import pg from 'pg';
import { gzipSync } from 'node:zlib';
import { randomUUID } from 'node:crypto';
import { Analytics as SegmentAnalytics } from '@segment/analytics-node';
import RudderAnalytics from '@rudderstack/rudder-sdk-node';
import { eventually, newKey, newWorkspace, storeUrl, uniqueUser, type Res } from '../helpers/server.js';
import { sharedServer } from '../helpers/shared-server.js';

const s = await sharedServer();
const sql = new pg.Client({ connectionString: storeUrl(s) });
await sql.connect();
t.teardown(() => sql.end());

interface W {
  ws: { id: string; owner: string; token: string };
  key: string;
}

async function workspace(permissions: string[] = ['*']): Promise<W> {
  const ws = await newWorkspace(s, 'Segment source');
  return { ws, key: (await newKey(s, ws, { permissions })).key };
}

const basic = (key: string) => `Basic ${Buffer.from(`${key}:`).toString('base64')}`;

/** A request to the source at the root (the helper checks the answer against the OpenAPI document). */
function post(path: string, key: string | null, body: unknown, headers: Record<string, string> = {}): Promise<Res> {
  return s.req('POST', `${s.base}${path}`, { body, headers: { ...(key === null ? {} : { authorization: basic(key) }), ...headers } });
}

interface StoredEvent {
  type: string;
  parameters: Record<string, unknown>;
  created_at: Date;
}

async function eventsOf(w: W, externalId: string): Promise<StoredEvent[]> {
  const r = await sql.query('SELECT e.type, e.parameters, e.created_at FROM events e JOIN people p ON p.id = e.person_id WHERE p.workspace_id = $1 AND p.external_id = $2 ORDER BY e.created_at, e.id', [w.ws.id, externalId]);
  return r.rows;
}

/** Waits until `n` events of the person are stored, then a moment for any extra (a double) to show. */
async function settled(w: W, externalId: string, n: number): Promise<StoredEvent[]> {
  await eventually(async () => (await eventsOf(w, externalId)).length >= n, 15_000).catch(() => undefined);
  await new Promise((r) => setTimeout(r, 400));
  return eventsOf(w, externalId);
}

async function personOf(w: W, externalId: string): Promise<{ id: string; traits: Record<string, unknown>; first_name: string | null; email: string | null } | undefined> {
  const r = await sql.query('SELECT id::text, traits, first_name, email FROM people WHERE workspace_id = $1 AND external_id = $2', [w.ws.id, externalId]);
  return r.rows[0];
}

async function countEvents(w: W): Promise<number> {
  return Number((await sql.query('SELECT count(*) AS n FROM events WHERE workspace_id = $1', [w.ws.id])).rows[0].n);
}

/**
 * A TCP proxy in front of Herald that counts the requests passing through and, while `drops`
 * is above zero, drops Herald's next answer (closing both sides) after it was sent: Herald
 * stored the messages, the client sees a broken connection and retries.
 */
async function proxy(): Promise<{ url: string; requests: () => number; drop: (n: number) => void; dropped: () => number; close: () => Promise<void> }> {
  let requests = 0;
  let drops = 0;
  let dropped = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(s.port, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (d: Buffer) => {
      requests += d.toString('latin1').match(/^POST \/v1\//gm)?.length ?? 0;
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      if (drops > 0) {
        drops--;
        dropped++;
        client.destroy();
        upstream.destroy();
        return;
      }
      client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    drop: (n) => (drops = n),
    dropped: () => dropped,
    close: () => {
      for (const sock of sockets) sock.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

const segment = (w: W, host: string, flushAt = 100) => new SegmentAnalytics({ writeKey: w.key, host, flushAt, flushInterval: 200, maxRetries: 3 });
const rudder = (w: W, dataPlaneUrl: string, flushAt = 100) => new RudderAnalytics(w.key, { dataPlaneUrl, flushAt, flushInterval: 200, retryCount: 3, logLevel: 'error' });

/** Calls a RudderStack method and resolves when its message was sent (the callback). */
function rudderCall(client: RudderAnalytics, method: 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias', message: Record<string, unknown>): Promise<void> {
  return new Promise((resolve, reject) => (client[method] as (m: unknown, cb: (err?: Error) => void) => void)(message, (err) => (err ? reject(err) : resolve())));
}

t.test('@segment/analytics-node: identify, track, page, screen, group and alias arrive and map', async (t) => {
  const w = await workspace();
  const user = uniqueUser('seg');
  const anon = `anon-${randomUUID()}`;
  const analytics = segment(w, s.base);
  const failures: unknown[] = [];
  analytics.on('error', (err) => failures.push(err));
  analytics.track({ anonymousId: anon, event: 'browsed', properties: { sku: 'A-1' } });
  analytics.identify({ userId: user, traits: { email: `${user}@example.com`, firstName: 'Ada', plan: 'pro' } });
  analytics.track({ userId: user, event: 'purchase', properties: { total: 12.5 }, context: { ip: '203.0.113.9' }, timestamp: new Date('2025-03-04T05:06:07.000Z') });
  analytics.page({ userId: user, category: 'Docs', name: 'Pricing', properties: { path: '/pricing' } });
  analytics.screen({ userId: user, name: 'Home', properties: { tab: 1 } });
  analytics.group({ userId: user, groupId: 'acme', traits: { employees: 20 } });
  await analytics.closeAndFlush({ timeout: 10_000 });
  t.same(failures, [], 'the client reported no failure');

  const events = await settled(w, user, 3);
  t.same(events.map((e) => e.type).sort(), ['page_viewed', 'purchase', 'screen_viewed'], 'track, page and screen are events');
  const purchase = events.find((e) => e.type === 'purchase')!;
  t.equal(purchase.parameters.total, 12.5, 'properties are the parameters');
  t.equal((purchase.parameters.context as Record<string, unknown>).ip, '203.0.113.9', 'context is kept on the event');
  t.equal(purchase.created_at.toISOString(), '2025-03-04T05:06:07.000Z', 'timestamp is the event time');
  const page = events.find((e) => e.type === 'page_viewed')!;
  t.match(page.parameters, { name: 'Pricing', category: 'Docs', path: '/pricing' }, 'page: name, category and properties as parameters');
  t.match(events.find((e) => e.type === 'screen_viewed')!.parameters, { name: 'Home', tab: 1 }, 'screen: name and properties');

  const p = await personOf(w, user);
  t.ok(p, 'identify wrote the person');
  t.equal(p!.email, `${user}@example.com`, 'the email trait sets the dedicated field');
  t.equal(p!.first_name, 'Ada', "Segment's firstName is Herald's first_name");
  t.match(p!.traits, { plan: 'pro', group_id: 'acme', group: { employees: 20 } }, 'group: the traits group_id and group');
  t.same((await eventsOf(w, anon)).map((e) => e.type), ['browsed'], 'a track with only an anonymousId is about that id');

  // alias: previousId's person folds into userId's.
  const later = new SegmentAnalytics({ writeKey: w.key, host: s.base, flushAt: 1 });
  later.alias({ previousId: anon, userId: user });
  await later.closeAndFlush({ timeout: 10_000 });
  await eventually(async () => (await personOf(w, anon)) === undefined, 10_000).catch(() => undefined);
  t.equal(await personOf(w, anon), undefined, 'the previous person is merged away');
  t.ok((await eventsOf(w, user)).some((e) => e.type === 'browsed'), 'and their events are the user\'s');
});

t.test('@rudderstack/rudder-sdk-node (gzip bodies, originalTimestamp and sentAt): every type arrives and maps', async (t) => {
  const w = await workspace();
  const user = uniqueUser('rudder');
  const client = rudder(w, s.base, 1);
  await rudderCall(client, 'identify', { userId: user, traits: { email: `${user}@example.com`, plan: 'team' } });
  await rudderCall(client, 'track', { userId: user, event: 'signed_up', properties: { via: 'ads' } });
  await rudderCall(client, 'page', { userId: user, name: 'Home', category: 'Web', properties: { path: '/' } });
  await rudderCall(client, 'screen', { userId: user, name: 'Settings' });
  await rudderCall(client, 'group', { userId: user, groupId: 'g-7', traits: { name: 'Seven' } });
  const before = Date.now();
  const events = await settled(w, user, 3);
  t.same(events.map((e) => e.type).sort(), ['page_viewed', 'screen_viewed', 'signed_up']);
  t.equal(events.find((e) => e.type === 'signed_up')!.parameters.via, 'ads');
  for (const e of events) t.ok(Math.abs(e.created_at.getTime() - before) < 60_000, 'originalTimestamp corrected by sentAt is about now');
  const p = await personOf(w, user);
  t.match(p!.traits, { plan: 'team', group_id: 'g-7', group: { name: 'Seven' } });
  const anon = `r-anon-${randomUUID()}`;
  await rudderCall(client, 'track', { anonymousId: anon, event: 'browsed' });
  await settled(w, anon, 1);
  await rudderCall(client, 'alias', { previousId: anon, userId: user });
  await eventually(async () => (await personOf(w, anon)) === undefined, 10_000).catch(() => undefined);
  t.equal(await personOf(w, anon), undefined, 'alias merged the previous person');
});

t.test('batching: flushAt 100 sends 100 messages a request (both clients)', async (t) => {
  const w = await workspace();
  const p = await proxy();
  t.teardown(() => p.close());
  const user = uniqueUser('batched');
  const analytics = segment(w, p.url, 100);
  for (let i = 0; i < 250; i++) analytics.track({ userId: user, event: 'tick', properties: { i } });
  await analytics.closeAndFlush({ timeout: 15_000 });
  t.equal((await settled(w, user, 250)).length, 250, 'every message stored once');
  t.equal(p.requests(), 3, 'Segment: 250 messages in 3 requests');

  const ruser = uniqueUser('rbatched');
  const client = rudder(w, p.url, 100);
  // The client sends its first message at once, alone.
  await rudderCall(client, 'track', { userId: ruser, event: 'first' });
  const before = p.requests();
  const sent = Array.from({ length: 200 }, (_, i) => rudderCall(client, 'track', { userId: ruser, event: 'tock', properties: { i } }));
  await Promise.all(sent);
  t.equal((await settled(w, ruser, 201)).length, 201, 'every message stored once');
  t.equal(p.requests() - before, 2, 'RudderStack: 200 messages in 2 requests');
});

t.test("retries: Herald's answer lost after it stored; the client retries and nothing is doubled", async (t) => {
  const w = await workspace();
  const p = await proxy();
  t.teardown(() => p.close());

  const user = uniqueUser('seg-retry');
  p.drop(1);
  const analytics = segment(w, p.url, 100);
  const failures: unknown[] = [];
  analytics.on('error', (err) => failures.push(err));
  for (let i = 0; i < 5; i++) analytics.track({ userId: user, event: 'paid', properties: { i } });
  analytics.identify({ userId: user, traits: { plan: 'gold' } });
  await analytics.closeAndFlush({ timeout: 20_000 });
  t.equal(p.dropped(), 1, 'one answer was dropped');
  t.ok(p.requests() >= 2, `Segment retried (${p.requests()} requests)`);
  t.same(failures, [], 'and reported success');
  t.equal((await settled(w, user, 5)).length, 5, 'five events, none doubled');

  const ruser = uniqueUser('rudder-retry');
  const before = p.requests();
  p.drop(1);
  const client = rudder(w, p.url, 3);
  await Promise.all([1, 2, 3].map((i) => rudderCall(client, 'track', { userId: ruser, event: 'paid', properties: { i } })));
  t.equal(p.dropped(), 2, 'one more answer was dropped');
  t.ok(p.requests() - before >= 2, 'RudderStack retried');
  t.equal((await settled(w, ruser, 3)).length, 3, 'three events, none doubled');
});

t.test('a campaign triggered by a Segment track fires once, retry included', async (t) => {
  const w = await workspace();
  const hdr = { token: w.ws.token, headers: { 'x-workspace-id': w.ws.id } };
  const c = await s.req('POST', '/campaigns', {
    ...hdr,
    body: { name: 'On purchase', trigger_type: 'event', trigger_config: { event_names: ['purchase'] }, workflow_definition: { nodes: [{ id: 'hello', type: 'push', title: 'Thanks', body: 'Thanks' }] } },
  });
  t.equal(c.status, 201, c.text);
  const campaignId = c.body.data.campaign.id as string;
  const a = await s.req('PUT', `/campaigns/${campaignId}`, { ...hdr, body: { status: 'active' } });
  t.equal(a.status, 200, a.text);
  const user = uniqueUser('buyer');
  const p = await proxy();
  t.teardown(() => p.close());
  p.drop(1);
  const analytics = segment(w, p.url, 1);
  analytics.track({ userId: user, event: 'purchase', properties: { item: 'hat' } });
  await analytics.closeAndFlush({ timeout: 20_000 });
  t.equal(p.dropped(), 1, 'the first answer was lost, so the track was sent twice');
  t.equal((await settled(w, user, 1)).length, 1, 'one event');
  const person = await personOf(w, user);
  const enrolled = await sql.query('SELECT count(*) AS n FROM campaign_enrolments WHERE campaign_id = $1 AND person_id = $2', [campaignId, person!.id]);
  t.equal(Number(enrolled.rows[0].n), 1, 'enrolled once');
});

t.test('bad input: each its documented 4xx, nothing stored; a batch keeps its valid messages', async (t) => {
  const w = await workspace();
  const user = uniqueUser('bad');
  const track = { userId: user, event: 'ok', messageId: randomUUID() };

  const none = await post('/v1/track', null, track);
  t.equal(none.status, 401, 'no write key');
  t.equal(none.body.success, false);
  const wrong = await post('/v1/track', 'ws_live_00000000_AAAAAAAA.' + '0'.repeat(64), track);
  t.equal(wrong.status, 401, 'a write key that is not a key');
  const garbage = await post('/v1/track', 'not-a-key', track);
  t.equal(garbage.status, 401, 'garbage');
  const reader = await newKey(s, w.ws, { permissions: ['people:read'] });
  const forbidden = await post('/v1/track', reader.key, track);
  t.equal(forbidden.status, 403, 'a key without events:write');
  t.match(forbidden.body, { success: false, error: /events:write/ });
  const tracker = await newKey(s, w.ws, { permissions: ['events:write'] });
  t.equal((await post('/v1/identify', tracker.key, { userId: user, traits: { a: 1 } })).status, 403, 'identify needs people:identify or people:write');
  const identifier = await newKey(s, w.ws, { permissions: ['people:identify'] });
  t.equal((await post('/v1/identify', identifier.key, { userId: user, traits: { a: 1 } })).status, 403, 'and events:write');
  t.equal(await personOf(w, user), undefined, 'no one written');

  const big = await post('/v1/track', w.key, { ...track, properties: { blob: 'x'.repeat(33 * 1024) } });
  t.equal(big.status, 413, 'a message over 32 KB');
  const bigBatch = await post('/v1/batch', w.key, { batch: Array.from({ length: 20 }, () => ({ type: 'track', ...track, properties: { blob: 'x'.repeat(30 * 1024) } })) });
  t.equal(bigBatch.status, 413, 'a batch over 500 KB');
  const bomb = gzipSync(Buffer.from(JSON.stringify({ batch: [{ type: 'track', ...track, properties: { blob: 'y'.repeat(600 * 1024) } }] })));
  const bombed = await s.req('POST', `${s.base}/v1/batch`, { raw: bomb, headers: { authorization: basic(w.key), 'content-type': 'application/json', 'content-encoding': 'gzip' } });
  t.equal(bombed.status, 413, 'a gzip body over 500 KB once decoded');

  const anonymous = await post('/v1/track', w.key, { event: 'ok', messageId: randomUUID() });
  t.equal(anonymous.status, 400, 'no userId and no anonymousId');
  t.match(anonymous.body, { success: false, error: /userId or an anonymousId/ });
  const longId = await post('/v1/track', w.key, { ...track, messageId: 'm'.repeat(101) });
  t.equal(longId.status, 400, 'a messageId over 100 characters');
  t.equal(await countEvents(w), 0, 'nothing stored');

  const mixed = await post('/v1/batch', w.key, {
    batch: [
      { type: 'track', userId: user, event: 'kept_1', messageId: randomUUID() },
      { type: 'sneeze', userId: user, messageId: randomUUID() },
      { type: 'track', event: 'no_one', messageId: randomUUID() },
      { type: 'identify', userId: user, traits: { kept: true }, messageId: randomUUID() },
      { type: 'track', userId: user, event: 'long_id', messageId: 'm'.repeat(101) },
      { type: 'page', userId: user, name: 'Kept', messageId: randomUUID() },
    ],
  });
  t.equal(mixed.status, 400, mixed.text);
  t.same(mixed.body.errors.map((e: { index: number }) => e.index), [1, 2, 4], 'the answer names the bad messages');
  t.match(mixed.body.errors[0].error, /Unknown message type "sneeze"/);
  t.same((await settled(w, user, 2)).map((e) => e.type).sort(), ['kept_1', 'page_viewed'], 'the valid events are stored');
  t.match((await personOf(w, user))!.traits, { kept: true }, 'and the valid identify');

  const identifyOnly = await post('/v1/batch', tracker.key, { batch: [{ type: 'identify', userId: user, traits: { no: 1 }, messageId: randomUUID() }, { type: 'track', userId: user, event: 'by_tracker', messageId: randomUUID() }] });
  t.equal(identifyOnly.status, 400, 'a batch identify with a key lacking the people permissions is refused alone');
  t.same(identifyOnly.body.errors.map((e: { index: number }) => e.index), [0]);
  const oneBig = await post('/v1/batch', w.key, { batch: [{ type: 'track', ...track, messageId: randomUUID(), properties: { blob: 'x'.repeat(33 * 1024) } }, { type: 'track', ...track, messageId: randomUUID() }] });
  t.equal(oneBig.status, 400, 'a batch holding a message over 32 KB');
  t.match(oneBig.body.errors, [{ index: 0, error: /over 32768 bytes/ }], 'that message refused by its index, the other stored');
});

t.test('writeKey in the body; a repeat messageId is answered 200 and stores nothing', async (t) => {
  const w = await workspace();
  const user = uniqueUser('bodykey');
  const body = { writeKey: w.key, userId: user, event: 'keyed', messageId: randomUUID() };
  const first = await post('/v1/track', null, body);
  t.equal(first.status, 200, first.text);
  t.same(first.body, { success: true });
  const again = await post('/v1/track', null, body);
  t.equal(again.status, 200, 'a repeat is accepted');
  t.equal((await settled(w, user, 1)).length, 1, 'and stored once');
  const zipped = await s.req('POST', `${s.base}/v1/batch`, {
    raw: gzipSync(Buffer.from(JSON.stringify({ writeKey: w.key, batch: [{ type: 'track', userId: user, event: 'zipped', messageId: randomUUID() }] }))),
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
  });
  t.equal(zipped.status, 200, `writeKey inside a gzip body: ${zipped.text}`);
  // A client clock an hour behind: originalTimestamp corrected by sentAt is receipt − 1 h.
  const clocked = uniqueUser('clock');
  const sent = Date.now();
  const skewed = await post('/v1/page', w.key, { userId: clocked, name: 'Late', originalTimestamp: '2020-01-01T00:00:00.000Z', sentAt: '2020-01-01T01:00:00.000Z', messageId: randomUUID() });
  t.equal(skewed.status, 200, skewed.text);
  const [late] = await settled(w, clocked, 1);
  t.ok(late && Math.abs(late.created_at.getTime() - (sent - 3_600_000)) < 30_000, `the event time is receipt minus sentAt − originalTimestamp (${late?.created_at.toISOString()})`);
  const openapi = await s.req('GET', '/openapi.json');
  t.ok(openapi.body.paths['/v1/batch']?.post, 'the OpenAPI document covers /v1/batch');
  t.same(openapi.body.paths['/v1/track'].post.security, [{ writeKey: [] }], 'with Basic auth');
});

// The browser SDK (sdk/web, docs/sdk-web.md) in Chromium against a real Herald. A page served by
// this test loads the script-tag bundle from Herald (/dashboard/sdk/herald.js, as the snippet
// does) and talks to Herald through a proxy of this test, which records every request and can
// lose the answer to one (Herald stores it, the browser gets a 503). Checked: identify, track
// and page arrive with the anonymous id kept across reloads and merged by identify; a send
// whose answer was lost is retried with the same messageIds and stored once; what waits when
// the page is hidden arrives by sendBeacon with the public key in `?key=`; reset() gives a new
// anonymous id; registerPush stores a web device. And the server side of `?key=`: read on the
// ingest routes only, and only for a public key. The dashboard's API keys page shows the snippet,
// and the ES module bundle exports the same calls as the script tag's global.
import t from 'tap';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { launch, openPage } from '../helpers/browser.js';
import { eventually, newKey, newWorkspace, startServer, uniqueUser } from '../helpers/server.js';

const s = await startServer({ HERALD_RATE_LIMITS: 'ip-public=100000:100000,edge=100000:100000' });
t.teardown(() => s.stop());
const browser = await launch(t);
const ws = await newWorkspace(s, 'Browser SDK');
const publicKey = (await newKey(s, ws, { key_type: 'public' })).key;
const secretKey = (await newKey(s, ws, { permissions: ['*'] })).key;

/** What went through the proxy: each request's method, URL, Authorization header, body and the answer Herald gave. */
interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  body: string;
  answer: string;
  lost: boolean;
}
const seen: Seen[] = [];
/** Paths whose next answer the proxy loses (after Herald has answered it). */
const loseNext = new Set<string>();

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => resolve(body));
  });

const proxy = await listen(
  createServer((req: IncomingMessage, res: ServerResponse) => {
    void read(req).then((body) => {
      const path = (req.url ?? '').split('?')[0]!;
      const headers = { ...req.headers, host: `127.0.0.1:${s.port}` };
      const up = httpRequest(`${s.base}${req.url}`, { method: req.method, headers }, (answer) => {
        void read(answer).then((text) => {
          const lost = req.method === 'POST' && loseNext.delete(path);
          seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body, answer: text, lost });
          if (lost) {
            res.writeHead(503, { 'access-control-allow-origin': '*', 'content-type': 'text/plain' }).end('answer lost');
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers).end(text);
        });
      });
      up.end(body);
    });
  }),
);

/** The test page: loads the bundle from Herald, as the README's snippet does, and inits it against the proxy. */
const site = await listen(
  createServer((req, res) => {
    if (req.url === '/herald.mjs') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(new URL('../../dist/dashboard/sdk/herald.mjs', import.meta.url)));
      return;
    }
    const q = new URL(req.url ?? '/', 'http://x').searchParams;
    const flushInterval = Number(q.get('flushInterval') ?? 50);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html><head><title>SDK test page</title>
<script src="${s.base}/dashboard/sdk/herald.js"></script>
<script>herald.init(${JSON.stringify({ writeKey: publicKey, host: proxy, flushInterval })});</script>
</head><body><h1>SDK test page</h1></body></html>`);
  }),
);

const { context, page, problems } = await openPage(browser);
t.teardown(() => context.close());

const anonymous = (p: Page = page) => p.evaluate(() => herald.anonymousId());

interface StoredEvent {
  type: string;
  parameters: Record<string, unknown>;
}

/** The person's events as Herald answers them, once `ready` holds of them (events reach the store shortly after the answer). */
async function eventsOf(userId: string, ready: (names: string[]) => boolean = (n) => n.length > 0): Promise<StoredEvent[]> {
  const get = async () => {
    const r = await s.req('GET', `/people/${encodeURIComponent(userId)}/events?limit=100`, { token: secretKey });
    return r.status === 200 ? (r.body.events as StoredEvent[]) : [];
  };
  await eventually(async () => ready((await get()).map((e) => e.type)), 10_000);
  // A pause for any later (doubled) event to land.
  await new Promise((r) => setTimeout(r, 300));
  return get();
}

const named = (events: StoredEvent[], name: string) => events.filter((e) => e.type === name);

t.test('identify, track and page arrive; the anonymous id is kept across reloads and merged by identify', async (t) => {
  await page.goto(`${site}/`);
  const anon = await anonymous();
  t.match(anon, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, 'a v4 UUID');
  await page.reload();
  t.equal(await anonymous(), anon, 'the same anonymous id after a reload');
  t.equal(await page.evaluate(() => herald.userId()), null, 'no userId yet');

  await page.evaluate(async () => {
    herald.track('clicked', { button: 'buy' });
    herald.page('Home', { section: 'top' });
    await herald.flush();
  });
  const before = await eventsOf(anon, (n) => n.includes('clicked') && n.includes('page_viewed'));
  t.same(named(before, 'clicked').map((e) => e.parameters), [{ button: 'buy' }], 'track: its properties');
  const viewed = named(before, 'page_viewed');
  t.equal(viewed.length, 1, 'page: one page_viewed');
  t.match(viewed[0]?.parameters, { name: 'Home', section: 'top', path: '/', title: 'SDK test page', url: `${site}/` }, 'page: name, properties and the page');
  const batch = seen.find((r) => r.url === '/api/v1/track/batch' && r.method === 'POST');
  t.equal(batch?.authorization, `Bearer ${publicKey}`, 'sent with the public key as a Bearer token');
  const sentEvents = JSON.parse(batch?.body ?? '{}').events as { messageId?: string; timestamp?: string }[];
  t.equal(sentEvents.length, 2, 'both in one batch');
  t.ok(sentEvents.every((e) => typeof e.messageId === 'string' && e.messageId.length > 0 && typeof e.timestamp === 'string'), 'each with a messageId and a timestamp');

  const user = uniqueUser('sdk');
  await page.evaluate(async (user) => {
    herald.identify(user, { plan: 'pro' });
    herald.track('after_identify');
    await herald.flush();
  }, user);
  t.equal(await page.evaluate(() => herald.userId()), user, 'userId kept');
  await page.reload();
  t.equal(await page.evaluate(() => herald.userId()), user, 'userId kept across a reload');
  const person = await s.req('GET', `/people/${encodeURIComponent(user)}`, { token: secretKey });
  t.equal(person.status, 200, person.text);
  t.equal(person.body.person.traits.plan, 'pro', 'identify: the traits');
  const merged = await eventsOf(user, (n) => n.includes('clicked') && n.includes('after_identify'));
  t.equal(named(merged, 'clicked').length, 1, 'the anonymous events merged into the identified person, once');
  t.equal(named(merged, 'after_identify').length, 1, 'a track after identify is about the user');
});

t.test('a send whose answer is lost is retried with the same messageIds and stored once', async (t) => {
  const user = uniqueUser('retry');
  await page.goto(`${site}/`);
  await page.evaluate((user) => herald.identify(user), user);
  await page.evaluate(() => herald.flush());
  const from = seen.length;
  loseNext.add('/api/v1/track/batch');
  await page.evaluate(() => {
    herald.track('retried', { n: 1 });
    herald.track('retried', { n: 2 });
    return herald.flush();
  });
  const sends = await eventually(async () => {
    const b = seen.slice(from).filter((r) => r.url === '/api/v1/track/batch' && r.method === 'POST');
    return b.length >= 2 ? b : null;
  }, 10_000);
  t.ok(sends, 'sent again after the lost answer');
  const [first, again] = sends ?? [];
  t.equal(first?.lost, true, 'the first answer was lost');
  t.equal(JSON.parse(first?.answer ?? '{}').processed, 2, 'Herald had stored both');
  const ids = (r: Seen | undefined) => (JSON.parse(r?.body ?? '{}').events as { messageId: string }[]).map((e) => e.messageId);
  t.same(ids(again), ids(first), 'the retry carries the same messageIds');
  const results = JSON.parse(again?.answer ?? '{}').results as { duplicate?: boolean }[];
  t.ok(results.length === 2 && results.every((r) => r.duplicate === true), 'answered as duplicates');
  const events = await eventsOf(user, (n) => n.filter((x) => x === 'retried').length >= 2);
  t.same(named(events, 'retried').map((e) => e.parameters.n).sort(), [1, 2], 'each event stored once');
  t.equal(await page.evaluate(() => localStorage.getItem('herald:queue')), null, 'nothing left queued');
});

t.test('what waits when the page is hidden arrives by sendBeacon, the public key in ?key=', async (t) => {
  const user = uniqueUser('beacon');
  const hidden = await openPage(browser);
  t.teardown(() => hidden.context.close());
  // Sent only after a minute: nothing but the page-hide beacon sends it in this test.
  await hidden.page.goto(`${site}/?flushInterval=60000`);
  await hidden.page.evaluate((user) => {
    herald.identify(user, { via: 'beacon' });
    herald.track('left_page', { n: 1 });
  }, user);
  t.equal(JSON.parse((await hidden.page.evaluate(() => localStorage.getItem('herald:queue'))) ?? '[]').length, 2, 'two messages wait');
  const from = seen.length;
  await hidden.page.goto('about:blank');
  const beacons = await eventually(async () => {
    const b = seen.slice(from).filter((r) => r.url.startsWith('/api/v1/track/batch?') || r.url.startsWith('/api/v1/identify?'));
    return b.length >= 2 ? b : null;
  }, 10_000);
  t.ok(beacons, 'both sent on page hide');
  for (const b of beacons ?? []) {
    t.equal(b.authorization, undefined, `${b.url.split('?')[0]}: no Authorization header`);
    t.equal(new URL(b.url, 'http://x').searchParams.get('key'), publicKey, `${b.url.split('?')[0]}: the public key in ?key=`);
  }
  const events = await eventsOf(user, (n) => n.includes('left_page'));
  t.equal(named(events, 'left_page').length, 1, 'the event stored');
  const person = await eventually(async () => {
    const r = await s.req('GET', `/people/${encodeURIComponent(user)}`, { token: secretKey });
    return r.status === 200 ? r : null;
  });
  t.equal(person?.body.person.traits.via, 'beacon', 'the identify stored');
  // Handed to the browser, so not queued for the next page: it sends nothing again.
  const before = seen.length;
  await hidden.page.goto(`${site}/?flushInterval=60000`);
  t.equal(await hidden.page.evaluate(() => localStorage.getItem('herald:queue')), null, 'nothing left queued for the next page');
  await new Promise((r) => setTimeout(r, 500));
  t.same(seen.slice(before).filter((r) => r.method === 'POST').map((r) => r.url), [], 'the next page sends nothing');
});

t.test('reset() gives a new anonymous id and forgets the user', async (t) => {
  await page.goto(`${site}/`);
  await page.evaluate(() => herald.identify('someone'));
  const before = await anonymous();
  await page.evaluate(() => herald.reset());
  const after = await anonymous();
  t.not(after, before, 'a new anonymous id');
  t.equal(await page.evaluate(() => herald.userId()), null, 'no userId');
  await page.reload();
  t.equal(await anonymous(), after, 'the new one is kept');
  await page.evaluate(async () => {
    herald.track('after_reset');
    await herald.flush();
  });
  t.equal(named(await eventsOf(after), 'after_reset').length, 1, 'later events are about the new anonymous visitor');
});

t.test('registerPush registers the web push token as a device of the current person', async (t) => {
  await page.goto(`${site}/`);
  const user = uniqueUser('push');
  const token = `fcm-web-token-${user}`;
  await page.evaluate((user) => herald.identify(user), user);
  const answer = await page.evaluate((token) => herald.registerPush({ getToken: async () => token, deviceName: 'Chromium' }), token);
  t.match(answer, { device_id: /^[0-9a-f-]{36}$/ }, 'the device id');
  const devices = await s.req('GET', `/people/${encodeURIComponent(user)}/devices`, { token: secretKey });
  t.equal(devices.status, 200, devices.text);
  t.match(devices.body.devices, [{ device_token: token, platform: 'web', device_name: 'Chromium', is_active: true }], 'stored as a web device');
  const refused = await page.evaluate(() => herald.registerPush({ getToken: () => 'short' }).then(() => 'registered', (e: Error) => e.message));
  t.match(refused, /answered 400/, 'a refused token rejects the promise');
});

t.test('?key=: read on the ingest routes, for a public key only', async (t) => {
  const user = uniqueUser('query-key');
  const post = (path: string, key: string, body: unknown) => fetch(`${s.base}/api/v1${path}?key=${encodeURIComponent(key)}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'text/plain;charset=UTF-8' } });
  const tracked = await post('/track', publicKey, { event: 'by_query', userId: user });
  t.equal(tracked.status, 201, 'a public key: /track accepted');
  t.equal((await post('/identify', publicKey, { userId: user })).status, 200, 'a public key: /identify accepted');
  const secret = await post('/track', secretKey, { event: 'by_query', userId: user });
  t.equal(secret.status, 401, 'a secret key is not read from the query');
  t.match(await secret.json(), { error: 'Unauthorized', details: /public key/ });
  const device = await post(`/people/${user}/devices`, publicKey, { token: 'a-web-push-token', platform: 'web' });
  t.equal(device.status, 401, 'not read on other routes');
  t.equal((await eventsOf(user)).length, 1, 'one event stored');
});

t.test("the dashboard's API keys page shows the snippet for this host and a public key", async (t) => {
  const dash = await openPage(browser);
  t.teardown(() => dash.context.close());
  await dash.page.goto(`${s.base}/dashboard/#token=${ws.token}`);
  await dash.page.getByRole('heading', { level: 1 }).waitFor();
  await dash.page.goto(`${s.base}/dashboard/w/${ws.id}/keys`);
  const snippet = await dash.page.getByRole('region', { name: 'The browser SDK snippet' }).textContent();
  t.match(snippet, `<script src="${s.base}/dashboard/sdk/herald.js"></script>`, 'the script tag, from this host');
  t.match(snippet, `herald.init({ writeKey: '${publicKey.split('.')[0]}.…', host: '${s.base}' })`, 'init with the public key and the host');
  t.same(dash.problems, [], 'no console errors');
});

t.test('the ES module bundle exports the same API', async (t) => {
  await page.goto(`${site}/`);
  // A URL the page resolves, not a module of this program.
  const exported = await page.evaluate(async (url) => Object.keys((await import(url)) as object).sort(), '/herald.mjs');
  t.same(exported, Object.keys(await page.evaluate(() => ({ ...herald }))).sort(), 'as the script tag');
  t.same(exported, ['anonymousId', 'flush', 'identify', 'init', 'page', 'registerPush', 'reset', 'track', 'userId'], 'the documented calls');
});

t.test('the page saw no errors', async (t) => {
  t.same(problems.filter((p) => !p.includes('503') && !p.includes('400')), [], 'no console or page errors but the lost answer and the refused token');
});

declare global {
  // The script-tag bundle's global, as the test page loads it.
  const herald: typeof import('../../sdk/web/src/index.js');
}

// The actor host (src/actors/host.ts) with a stand-in actor thread (test/fixtures/echo-actor.mjs).
import t from 'tap';
import { ActorHost, type ActorHostOptions } from '../../src/actors/host.js';
import { shardOf } from '../../src/util/shard.js';
import type { ActorRequest } from '../../src/actors/protocol.js';
import type { Reply } from '../../src/handlers/reply.js';

const SCRIPT = new URL('../fixtures/echo-actor.mjs', import.meta.url);

function host(over: Partial<ActorHostOptions> = {}): ActorHost {
  const h = new ActorHost({
    count: 2,
    script: SCRIPT,
    store: { url: 'unused', poolSize: 1 },
    secretsKey: Buffer.alloc(32),
    publicUrl: 'http://127.0.0.1:1',
    requestTimeoutMs: 30_000,
    unavailable: (why: string): Reply => ({ status: 503, body: why }),
    ...over,
  });
  return h;
}

const req = (route: string, extra: Partial<Omit<ActorRequest, 'id'>> = {}): Omit<ActorRequest, 'id' | 'deadline'> => ({
  route: route as ActorRequest['route'],
  params: {},
  query: '',
  headers: {},
  body: null,
  upload: null,
  principal: { kind: 'key', keyId: 'k', workspaceId: 'w', permissions: [] },
  workspaceId: null,
  ip: '127.0.0.1',
  ...extra,
});

interface Echo {
  route: string;
  params: Record<string, string>;
  query: string;
  actor: number;
  thread: number;
  store: unknown;
}
const echo = (r: Reply): Echo => JSON.parse(r.body ?? 'null') as Echo;

/** Two keys that land on the same actor, and one that lands on the other, of `n`. */
function keysFor(n: number, actor: number, count: number): string[] {
  const out: string[] = [];
  for (let i = 0; out.length < count; i++) if (shardOf(`ws-${i}`, n) === actor) out.push(`ws-${i}`);
  return out;
}

t.test('shardOf is stable, in range and spreads', async (t) => {
  t.equal(shardOf('', 7), 0x811c9dc5 % 7, 'the FNV-1a offset basis for an empty key');
  t.equal(shardOf('a', 1_000_000), 0xe40c292c % 1_000_000, 'FNV-1a 32 of "a"');
  t.equal(shardOf('workspace-1', 4), shardOf('workspace-1', 4), 'same key, same actor');
  t.same(new Set(Array.from({ length: 100 }, (_, i) => shardOf(`k${i}`, 1))), new Set([0]), 'one actor owns everything');

  const n = 4;
  const counts = new Array<number>(n).fill(0);
  const outOfRange: number[] = [];
  for (let i = 0; i < 4000; i++) {
    const s = shardOf(`0192f3a4-b5c6-7d8e-9f01-${i.toString(16).padStart(12, '0')}`, n);
    if (!(Number.isInteger(s) && s >= 0 && s < n)) outOfRange.push(s);
    else counts[s]!++;
  }
  t.same(outOfRange, [], 'every shard is an integer in [0, n)');
  for (const c of counts) t.ok(c > 700 && c < 1300, `each of 4 actors gets a fair share of 4000 uuids: ${counts.join(', ')}`);
});

t.test('dispatch: each request is answered by the actor that owns its key', async (t) => {
  const h = host({ count: 3 });
  await h.start();
  t.teardown(() => h.stop(1000));
  t.equal(h.size, 3);

  const keys = ['ws-a', 'ws-b', 'ws-c', 'ws-d', 'ws-e', 'ws-f', 'ws-g', 'ws-h'];
  const replies = await Promise.all(keys.map((k, i) => h.dispatch(k, req(`route-${i}`, { params: { k }, query: `q=${i}` }))));
  const threads = new Map<number, number>();
  replies.forEach((r, i) => {
    t.equal(r.status, 200);
    const e = echo(r);
    t.equal(e.route, `route-${i}`, 'the reply of this request, not another');
    t.same(e.params, { k: keys[i] });
    t.equal(e.query, `q=${i}`);
    t.equal(e.actor, shardOf(keys[i]!, 3), `${keys[i]} answered by actor ${shardOf(keys[i]!, 3)}`);
    t.same(e.store, { url: 'unused', poolSize: 1 }, 'the store link reaches the actor');
    // One thread per actor index.
    if (threads.has(e.actor)) t.equal(e.thread, threads.get(e.actor));
    threads.set(e.actor, e.thread);
  });
  t.equal(h.inFlight, 0, 'nothing left pending');
});

t.test('dispatch: many concurrent requests each get their own reply', async (t) => {
  const h = host();
  await h.start();
  t.teardown(() => h.stop(1000));
  const n = 500;
  const replies = await Promise.all(Array.from({ length: n }, (_, i) => h.dispatch(`ws-${i % 17}`, req(`r${i}`))));
  t.same(replies.map((r) => echo(r).route), Array.from({ length: n }, (_, i) => `r${i}`));
  t.equal(h.inFlight, 0);
});

t.test('a crashed actor answers its requests in flight with 503 and is restarted', async (t) => {
  const h = host({ count: 2 });
  await h.start();
  t.teardown(() => h.stop(1000));

  const [k1, k2] = keysFor(2, 0, 2) as [string, string];
  const [other] = keysFor(2, 1, 1) as [string];
  const before = echo(await h.dispatch(k1, req('hello')));
  const otherBefore = echo(await h.dispatch(other, req('hello')));

  const hanging = h.dispatch(k2, req('hang')); // in flight on actor 0
  const slowOther = h.dispatch(other, req('slow', { query: '200' })); // in flight on actor 1
  const crash = h.dispatch(k1, req('crash'));

  t.same(await crash, { status: 503, body: 'actor restarted' }, 'the crashing request answers 503');
  t.same(await hanging, { status: 503, body: 'actor restarted' }, 'another request in flight on that actor answers 503');
  const o = await slowOther;
  t.equal(o.status, 200, 'a request on another actor is unaffected');
  t.equal(echo(o).route, 'slow');

  const after = await h.dispatch(k1, req('again'));
  t.equal(after.status, 200, 'the actor serves again after the restart');
  t.equal(echo(after).route, 'again');
  t.equal(echo(after).actor, 0);
  t.not(echo(after).thread, before.thread, 'on a new thread');
  t.equal(echo(await h.dispatch(other, req('x'))).thread, otherBefore.thread, 'the other actor was not restarted');

  // It can crash and come back more than once.
  t.same(await h.dispatch(k2, req('crash')), { status: 503, body: 'actor restarted' });
  const third = await h.dispatch(k2, req('third'));
  t.equal(third.status, 200);
  t.equal(echo(third).route, 'third');
  t.equal(h.inFlight, 0);
});

t.test('a request never answered gets 503 after requestTimeoutMs', async (t) => {
  const h = host({ count: 1, requestTimeoutMs: 300 });
  await h.start();
  t.teardown(() => h.stop(1000));
  const started = Date.now();
  const hang = h.dispatch('ws', req('hang'));
  const ok = await h.dispatch('ws', req('fine'));
  t.equal(ok.status, 200, 'the actor answers other requests meanwhile');
  t.same(await hang, { status: 503, body: 'request timed out' });
  t.ok(Date.now() - started >= 300, 'not before the timeout');
  t.equal(h.inFlight, 0, 'the timed-out request is no longer pending');
  const later = await h.dispatch('ws', req('later'));
  t.equal(later.status, 200, 'the actor was not restarted and still serves');
});

t.test('stop() waits for requests in flight, then ends every actor', async (t) => {
  const h = host({ count: 2 });
  await h.start();
  const [k0] = keysFor(2, 0, 1) as [string];
  const [k1] = keysFor(2, 1, 1) as [string];
  const slow0 = h.dispatch(k0, req('slow', { query: '300' }));
  const slow1 = h.dispatch(k1, req('slow', { query: '150' }));
  t.equal(h.inFlight, 2);

  let slowDone = false;
  void slow0.then(() => (slowDone = true));
  await h.stop(10_000);
  t.equal(slowDone, true, 'stop() resolved only after the request in flight was answered');
  t.equal((await slow0).status, 200, 'the request in flight got its real reply');
  t.equal((await slow1).status, 200);
  t.equal(h.inFlight, 0);

  const workers = (h as unknown as { workers: { threadId: number }[] }).workers;
  t.equal(workers.length, 2);
  for (const w of workers) t.equal(w.threadId, -1, 'the worker thread has exited');

  t.same(await h.dispatch(k0, req('late')), { status: 503, body: 'shutting down' }, 'no new requests after stop');
});

t.test('stop() gives up waiting after its timeout and answers what is left with 503', async (t) => {
  const h = host({ count: 1 });
  await h.start();
  const hang = h.dispatch('ws', req('hang'));
  await h.stop(200);
  t.same(await hang, { status: 503, body: 'actor restarted' });
  t.equal(h.inFlight, 0);
  const workers = (h as unknown as { workers: { threadId: number }[] }).workers;
  t.equal(workers[0]!.threadId, -1, 'not restarted after stop');
});

t.test("every 503 is built for the request's route (so it takes that route's error shape)", async (t) => {
  // Long enough that a crash on a loaded machine is seen as one before the timeout (200 ms was not).
  const h = host({ count: 1, requestTimeoutMs: 2000, unavailable: (why: string, route: string): Reply => ({ status: 503, body: `${route}: ${why}` }) });
  await h.start();
  t.same(await h.dispatch('ws', req('hang')), { status: 503, body: 'hang: request timed out' }, 'timed out');
  t.same(await h.dispatch('ws', req('crash')), { status: 503, body: 'crash: actor restarted' }, 'actor restarted');
  await h.stop(1000);
  t.same(await h.dispatch('ws', req('late')), { status: 503, body: 'late: shutting down' }, 'shutting down');
});

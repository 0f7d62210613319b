// The outbox: messages wait in localStorage (a reload loses none) and go out in order: a run of
// tracks, at most 100, in one /track/batch request; each identify alone on /identify. Every
// message got its messageId when it was queued, so whatever sends it again (a retry after a
// lost answer, the page-hide beacon of a request still in flight) is answered by Herald as a
// duplicate and stored once.
import { load, save } from './saved.js';

export interface Message {
  kind: 'identify' | 'track';
  body: { messageId: string } & Record<string, unknown>;
}

export interface Target {
  host: string;
  writeKey: string;
}

/** Herald's most events in one /track/batch. */
const BATCH = 100;
/** A browser holds at most 64 KiB of beacons in flight for a page. */
const BEACON_BYTES = 60_000;
/** Past this the oldest are dropped: a page that never reaches Herald must not fill its storage. */
const MAX_QUEUED = 1000;
const MAX_BACKOFF_MS = 60_000;

interface Request {
  path: string;
  sent: Message[];
  data: string;
}

/** The request for the head of `list`: the identify there alone, or the run of (at most `most`) tracks there. */
function requestFor(list: Message[], most: number): Request {
  const head = list[0]!;
  if (head.kind === 'identify') return { path: '/identify', sent: [head], data: JSON.stringify(head.body) };
  let n = 1;
  while (n < list.length && n < most && list[n]!.kind === 'track') n++;
  const sent = list.slice(0, n);
  return { path: '/track/batch', sent, data: JSON.stringify({ events: sent.map((m) => m.body) }) };
}

/** What a failed send waits before the next try: doubling from 1 s to a minute, with jitter; at least what Retry-After asks. */
const backoff = (failures: number, retryAfterMs: number) =>
  Math.max(retryAfterMs, Math.min(MAX_BACKOFF_MS, 500 * 2 ** failures) * (0.5 + Math.random() / 2));

export function createOutbox(target: Target, flushAt: number, flushInterval: number) {
  let queue: Message[] = load<Message[]>('queue') ?? [];
  let running: Promise<void> | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let failures = 0;
  const url = (path: string) => `${target.host}/api/v1${path}`;

  function later(ms: number): void {
    clearTimeout(timer);
    timer = setTimeout(() => void flush(), ms);
  }

  function remove(sent: Message[]): void {
    queue = queue.filter((m) => !sent.includes(m));
    save('queue', queue.length ? queue : null);
  }

  async function drain(): Promise<void> {
    while (queue.length) {
      const r = requestFor(queue, BATCH);
      let status = 0;
      let retryAfter = 0;
      try {
        const res = await fetch(url(r.path), {
          method: 'POST',
          headers: { authorization: `Bearer ${target.writeKey}`, 'content-type': 'application/json' },
          body: r.data,
        });
        status = res.status;
        retryAfter = Number(res.headers.get('retry-after')) * 1000 || 0;
      } catch {
        // No answer (offline, reset, timeout): status 0, tried again.
      }
      if (status === 0 || status === 408 || status === 429 || status >= 500) {
        later(backoff(++failures, retryAfter));
        return;
      }
      // Stored (2xx: a 207 names the entries Herald refused) or refused as a whole (4xx):
      // sending it again would get the same answer.
      if (status >= 300) console.warn(`herald: ${r.path} answered ${status}; ${r.sent.length} message(s) dropped`);
      failures = 0;
      remove(r.sent);
    }
  }

  /** Sends what waits now (a send already under way carries on to the end of the queue). */
  function flush(): Promise<void> {
    clearTimeout(timer);
    timer = undefined;
    return (running ??= drain().finally(() => (running = null)));
  }

  function push(m: Message): void {
    queue.push(m);
    if (queue.length > MAX_QUEUED) queue.splice(0, queue.length - MAX_QUEUED);
    save('queue', queue);
    // After a failure the back-off's timer sends it.
    if (failures) return;
    if (queue.length >= flushAt) void flush();
    else timer ??= setTimeout(() => void flush(), flushInterval);
  }

  /**
   * The page is being hidden, maybe for good: what waits is handed to navigator.sendBeacon,
   * which delivers it even after the page is gone. A beacon sends no headers, so the key goes
   * in `?key=`, which Herald reads only for a public key (with a secret key what waits stays
   * queued for the next page). What the browser does not take stays queued too.
   */
  function beacon(): void {
    if (!target.writeKey.startsWith('pk_') || typeof navigator.sendBeacon !== 'function') return;
    const handed: Message[] = [];
    let rest = queue;
    let most = BATCH;
    while (rest.length) {
      const r = requestFor(rest, most);
      if (new Blob([r.data]).size > BEACON_BYTES) {
        if (r.sent.length === 1) break;
        most = r.sent.length >> 1;
        continue;
      }
      if (!navigator.sendBeacon(`${url(r.path)}?key=${encodeURIComponent(target.writeKey)}`, r.data)) break;
      handed.push(...r.sent);
      rest = rest.slice(r.sent.length);
      most = BATCH;
    }
    remove(handed);
  }

  if (queue.length) later(0);
  return { push, flush, beacon };
}

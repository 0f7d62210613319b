// Herald's browser SDK (docs/sdk-web.md). Everything goes through Herald's own ingest routes
// with a public API key: identify and track are queued in the outbox (outbox.ts) and sent in
// batches; registerPush registers the page's web push token as a device of the current person.
// An anonymous visitor is the person whose userId is the anonymous id; identify names the
// real userId with that anonymous id, and Herald merges the anonymous person into it.
import { createOutbox, type Message } from './outbox.js';
import { uuid } from './ids.js';
import { load, save } from './saved.js';

export interface Options {
  /** A public API key (pk_live_…) holding events:write, people:identify and devices:register. */
  writeKey: string;
  /** Where Herald is, e.g. `https://herald.example.com`; default this page's origin. */
  host?: string;
  /** Send once this many messages wait (default 20)... */
  flushAt?: number;
  /** ...or this many milliseconds after the first of them was queued (default 1000). */
  flushInterval?: number;
}

type Props = Record<string, unknown>;

let state: { writeKey: string; host: string; outbox: ReturnType<typeof createOutbox> } | null = null;

function ready() {
  if (!state) throw new Error('herald: call herald.init({ writeKey, host }) first');
  return state;
}

/** The anonymous id of this browser, made on first use and kept in localStorage until reset(). */
export function anonymousId(): string {
  let id = load<string>('anonymousId');
  if (!id) save('anonymousId', (id = uuid()));
  return id;
}

/** The userId given to identify(), until reset(); null while the visitor is anonymous. */
export function userId(): string | null {
  return load<string>('userId');
}

/** Who the messages are about: the identified user, else the anonymous visitor. */
const person = () => userId() ?? anonymousId();

function enqueue(kind: Message['kind'], body: Props): void {
  ready().outbox.push({ kind, body: { ...body, timestamp: new Date().toISOString(), messageId: uuid() } });
}

export function init(options: Options): void {
  if (state) return;
  const host = (options.host ?? location.origin).replace(/\/+$/, '');
  const outbox = createOutbox({ host, writeKey: options.writeKey }, options.flushAt ?? 20, options.flushInterval ?? 1000);
  state = { writeKey: options.writeKey, host, outbox };
  // `visibilitychange` to hidden is the last event a page is sure to get (a phone's browser may
  // never fire `pagehide` or `unload`); `pagehide` covers browsers that skip the former.
  document.addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && outbox.beacon());
  addEventListener('pagehide', () => outbox.beacon());
}

/** Names the visitor: later messages are about `id`, and Herald merges the anonymous visitor's events and devices into that person. */
export function identify(id: string, traits: Props = {}): void {
  ready();
  save('userId', id);
  enqueue('identify', { userId: id, anonymousId: anonymousId(), traits });
}

export function track(event: string, properties: Props = {}): void {
  enqueue('track', { event, userId: person(), properties });
}

/** The event `page_viewed`, with the page's name (when given), URL, path, title and referrer. */
export function page(name?: string, properties: Props = {}): void {
  track('page_viewed', {
    ...(name === undefined ? {} : { name }),
    url: location.href,
    path: location.pathname,
    title: document.title,
    referrer: document.referrer,
    ...properties,
  });
}

/** Sends what waits now; resolves when the queue is empty or a send failed (it is then retried later). */
export function flush(): Promise<void> {
  return ready().outbox.flush();
}

/** Forgets the user (on sign-out): a new anonymous id, no userId. Messages already queued keep whom they were about. */
export function reset(): void {
  save('userId', null);
  save('anonymousId', uuid());
}

export interface PushOptions {
  /**
   * The page's web push registration token, e.g. Firebase's
   * `() => getToken(messaging, { vapidKey, serviceWorkerRegistration })`; its library, the VAPID
   * public key and the notification permission stay with the page.
   */
  getToken: () => Promise<string> | string;
  deviceName?: string;
  appVersion?: string;
}

/**
 * Registers this browser's web push token as a device (platform `web`) of the current person.
 * Resolves with Herald's answer (`device_id`); a second registration of the same token is an
 * update, so calling it on every page load is fine.
 */
export async function registerPush(options: PushOptions): Promise<{ device_id: string }> {
  const { host, writeKey } = ready();
  const token = await options.getToken();
  const res = await fetch(`${host}/api/v1/people/${encodeURIComponent(person())}/devices`, {
    method: 'POST',
    headers: { authorization: `Bearer ${writeKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ token, platform: 'web', device_name: options.deviceName, app_version: options.appVersion }),
  });
  const answer = (await res.json()) as { device_id: string; message?: string };
  if (!res.ok) throw new Error(`herald: device registration answered ${res.status}: ${answer.message ?? ''}`);
  return { device_id: answer.device_id };
}

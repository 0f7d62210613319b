// How a change to an API key reaches the key cache of every replica. The replica that made the
// change drops the key itself, then publishes its prefix before answering; every replica
// drops the prefixes it receives (its own included). The bus is NATS core pub/sub (subject
// `<prefix>.keys`) with NATS_URL, else PostgreSQL NOTIFY (channel `herald_key_changes`).
// Both deliver at most once: a replica whose connection to the bus dropped clears its whole
// cache once it is back, and the cache's TTL bounds whatever is still missed.
import type { NatsConnection } from '@nats-io/transport-node';
import type { Db } from '../store/db.js';
import { subscribe } from '../store/pg.js';
import type { KeyCache } from './key-cache.js';
import { logger } from '../logger.js';

export interface KeyChanges {
  /** Tells every replica to drop these prefixes. Never rejects: the TTL covers a failed send. */
  publish(prefixes: readonly string[]): Promise<void>;
  close(): Promise<void>;
}

const KEY_CHANGES_CHANNEL = 'herald_key_changes';
/** How long a publish may hold the response it precedes. */
const PUBLISH_WAIT_MS = 1000;
const PREFIX = /^[A-Za-z0-9_]{1,64}$/;

/** Prefixes travel as one comma-separated string (a prefix holds no comma). */
const encode = (prefixes: readonly string[]) => prefixes.join(',');
const decode = (payload: string) => payload.split(',').filter((p) => PREFIX.test(p));

function received(keys: KeyCache, payload: string): void {
  const prefixes = decode(payload);
  if (prefixes.length > 0) keys.invalidate(prefixes);
}

function resynchronise(keys: KeyCache, bus: string): void {
  keys.clear();
  logger.info('key-change bus (re)connected: key cache cleared', { bus });
}

async function bounded(send: Promise<unknown>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((r) => (timer = setTimeout(() => r('not sent within 1 s'), PUBLISH_WAIT_MS)));
  const outcome = await Promise.race([send.then(() => null, (err: Error) => err.message), late]);
  clearTimeout(timer);
  if (outcome) logger.warn('key change not announced to the other replicas; their caches expire it within HERALD_KEY_CACHE_TTL_MS', { what, err: outcome });
}

/** With NATS_URL: core pub/sub on `<natsPrefix>.keys`, on the front's connection. */
export async function natsKeyChanges(nc: NatsConnection, natsPrefix: string, keys: KeyCache): Promise<KeyChanges> {
  const subject = `${natsPrefix}.keys`;
  const sub = nc.subscribe(subject, {
    callback: (err, msg) => {
      if (!err) received(keys, msg.string());
    },
  });
  // The loop ends when the connection closes.
  void (async () => {
    for await (const s of nc.status()) if (s.type === 'reconnect') resynchronise(keys, 'nats');
  })();
  // The server has the subscription before the first request is served.
  await nc.flush();
  return {
    async publish(prefixes) {
      try {
        nc.publish(subject, encode(prefixes));
      } catch (err) {
        return bounded(Promise.reject(err), prefixes.join(','));
      }
      // Once flushed the server has it: every replica drops the key within milliseconds.
      await bounded(nc.flush(), prefixes.join(','));
    },
    async close() {
      sub.unsubscribe();
    },
  };
}

/**
 * Without NATS_URL: NOTIFY through the front's pool, LISTEN on a connection of its own.
 * Resolves once listening (or after `waitMs`, the listener retrying on its own).
 */
export async function pgKeyChanges(db: Db, url: string, keys: KeyCache, waitMs = 5000): Promise<KeyChanges> {
  let listened = false;
  let ready = () => {};
  const listening = new Promise<void>((r) => (ready = r));
  const subscription = subscribe(url, KEY_CHANGES_CHANNEL, {
    notification: (payload) => received(keys, payload),
    listening: () => {
      if (listened) resynchronise(keys, 'postgres');
      else keys.clear(); // keys cached before the first LISTEN was in place
      listened = true;
      ready();
    },
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([listening, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
  clearTimeout(timer);
  if (!listened) logger.warn('not yet listening for key changes; retrying', { channel: KEY_CHANGES_CHANNEL });
  return {
    publish: (prefixes) => bounded(db.query('SELECT pg_notify($1, $2)', [KEY_CHANGES_CHANNEL, encode(prefixes)]), prefixes.join(',')),
    close: () => subscription.close(),
  };
}

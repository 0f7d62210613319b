// The production/embedded choice, made in one place. With NATS_URL the Log is JetStream (whose
// sinks feed the store and ClickHouse), and the Idempotency-Key claims, the key-change channel
// and the cross-replica rate-limit counters live in NATS; without it, the store (PostgreSQL) is
// all of them: its Log's appends write the events (no sinks), claims and key changes are its
// table and LISTEN/NOTIFY, and a replica's budgets are its own. Every thread calls `backends`:
// the front takes the sinks, key changes and counters; each actor the Log, claims and counters.
import type { Config } from './config.js';
import type { Db } from './store/db.js';
import type { Store } from './store/open.js';
import { storeLog, type Log } from './eventlog/event-log.js';
import { connectNats, ensureEventStream, jetStreamLog, streamNames } from './eventlog/jetstream.js';
import { clickHouseSink, jetStreamSink, type Sink } from './eventlog/event-sink.js';
import type { AnalyticsStore } from './analytics/clickhouse.js';
import { natsTriggerClaims, pgTriggerClaims, type TriggerClaims } from './campaigns/index.js';
import { natsKeyChanges, pgKeyChanges, type KeyChanges } from './auth/key-changes.js';
import type { KeyCache } from './auth/key-cache.js';
import { SharedBuckets } from './ratelimit/shared.js';
import type { Limits } from './ratelimit/limits.js';

export interface Backends {
  /** `log_kind` in /healthz. */
  readonly logKind: 'jetstream' | 'store';
  /** The Log an actor appends to, over its own pool. */
  log(db: Db): Log;
  /** Where the webhook trigger's Idempotency-Key claims live; one in progress longer than `staleMs` may be taken over. */
  triggerClaims(db: Db, staleMs: number): Promise<TriggerClaims>;
  /** How a change to a key reaches every front (and the front's own `keys` cache). */
  keyChanges(store: Store, keys: KeyCache): Promise<KeyChanges>;
  /** Workspace budgets counted across replicas as well; null when a replica's own count is the count. */
  sharedBuckets(limits: Limits): Promise<SharedBuckets | null>;
  /**
   * The front's sinks, started: the events from the Log into the store (on a pool of their
   * own, so the front's key lookups and health probes never wait behind a batch) and, with
   * `analytics`, into ClickHouse. `stop` finishes their batches in hand.
   */
  startSinks(store: Store, analytics: AnalyticsStore | null): Promise<{ stop(): Promise<void> }>;
  /** Resolves when the Log answers (health). */
  ping(): Promise<unknown>;
  close(): Promise<void>;
}

/** `thread` names this thread's connection (e.g. `herald-actor-2`). */
export async function backends(cfg: Config, thread: string): Promise<Backends> {
  if (!cfg.natsUrl) return storeBackends();
  const nats = await connectNats(cfg.natsUrl, thread);
  const names = streamNames(cfg.natsPrefix);
  return {
    logKind: 'jetstream',
    log: (db) => jetStreamLog(nats, names, db),
    triggerClaims: (_db, staleMs) => natsTriggerClaims(nats, cfg.natsPrefix, staleMs),
    keyChanges: (_store, keys) => natsKeyChanges(nats, cfg.natsPrefix, keys),
    sharedBuckets: (limits) => SharedBuckets.open(nats, cfg.natsPrefix, limits),
    async startSinks(store, analytics) {
      await ensureEventStream(nats, names, analytics !== null);
      const sinkDb = store.openPool(cfg.sinkStatements);
      // Without ClickHouse, the store is the analytics store too.
      const sinks: Sink[] = [jetStreamSink(sinkDb, nats, names, analytics === null, cfg.sinkStatements)];
      if (analytics) sinks.push(clickHouseSink(analytics, store.db, nats, names, cfg.sinkStatements));
      for (const s of sinks) s.start();
      return {
        async stop() {
          await Promise.all(sinks.map((s) => s.stop()));
          await sinkDb.close();
        },
      };
    },
    ping: () => nats.flush(),
    close: () => nats.drain(),
  };
}

function storeBackends(): Backends {
  return {
    logKind: 'store',
    log: (db) => storeLog(db),
    triggerClaims: async (db, staleMs) => pgTriggerClaims(db, staleMs),
    keyChanges: (store, keys) => pgKeyChanges(store.db, store.link.url, keys),
    sharedBuckets: async () => null,
    // The store's Log writes the events where they are read: nothing to sink.
    startSinks: async () => ({ stop: async () => {} }),
    ping: async () => {},
    close: async () => {},
  };
}

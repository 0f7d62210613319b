// The production Log on NATS JetStream (file storage). Appends of one tick are published as
// few messages as fit under the payload limit (many events per message: one publisher tops
// out near 40k acknowledged messages/s here), each acknowledged by the server once stored.
// The stream keeps a message until the store sink has acknowledged it (interest retention).
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType, type JetStreamClient } from '@nats-io/jetstream';
import { GroupCommitLog, type Log } from './event-log.js';
import type { EventRecord } from '../domain/events.js';
import { logger } from '../logger.js';

/** Names of one deployment's stream, subject and consumer; replicas of it share them. */
export function streamNames(prefix: string) {
  return { stream: `${prefix}-events`, subject: `${prefix}.events`, storeSink: `${prefix}-store-sink`, analyticsSink: `${prefix}-analytics-sink` };
}
export type StreamNames = ReturnType<typeof streamNames>;
const MAX_MESSAGE_BYTES = 512 * 1024;
/** Publishes awaiting their acks at once: enough to hide the round trip, few enough to batch. */
const PUBLISHES_IN_FLIGHT = 4;
const ns = (ms: number) => ms * 1_000_000;

export function connectNats(url: string, name: string): Promise<NatsConnection> {
  // Reconnect forever: while NATS is away appends fail (503) and recover when it returns.
  return connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, waitOnFirstConnect: false });
}

/**
 * Creates or updates the stream and the sinks' durable consumers: the store sink's always, the
 * ClickHouse sink's when `analytics` is set. Interest retention keeps a message until every
 * consumer has acknowledged it, so an analytics consumer no longer read is removed.
 */
export async function ensureEventStream(nc: NatsConnection, names: StreamNames, analytics: boolean): Promise<void> {
  const jsm = await jetstreamManager(nc);
  const config = { name: names.stream, subjects: [names.subject], storage: StorageType.File, retention: RetentionPolicy.Interest, duplicate_window: ns(120_000) };
  const exists = await jsm.streams.info(names.stream).then(() => true, () => false);
  if (exists) await jsm.streams.update(names.stream, config);
  else await jsm.streams.add(config);
  const consumer = { ack_policy: AckPolicy.Explicit, ack_wait: ns(30_000), max_ack_pending: 20_000 };
  await jsm.consumers.add(names.stream, { durable_name: names.storeSink, ...consumer });
  if (analytics) await jsm.consumers.add(names.stream, { durable_name: names.analyticsSink, ...consumer });
  else if (await jsm.consumers.info(names.stream, names.analyticsSink).then(() => true, () => false)) {
    logger.warn('CLICKHOUSE_URL is unset: removing the ClickHouse sink consumer; events it had not read stay out of ClickHouse', { consumer: names.analyticsSink });
    await jsm.consumers.delete(names.stream, names.analyticsSink);
  }
}

/** Packs groups into messages of at most MAX_MESSAGE_BYTES (a group is never split). */
function messages(groups: EventRecord[][]): { data: string; firstId: string }[] {
  const out: { data: string; firstId: string }[] = [];
  let parts: string[] = [];
  let firstId = '';
  let size = 2;
  for (const g of groups) {
    if (g.length === 0) continue;
    const text = JSON.stringify(g).slice(1, -1);
    if (parts.length > 0 && size + text.length + 1 > MAX_MESSAGE_BYTES) {
      out.push({ data: `[${parts.join(',')}]`, firstId });
      parts = [];
      size = 2;
    }
    if (parts.length === 0) firstId = g[0]!.id;
    parts.push(text);
    size += text.length + 1;
  }
  if (parts.length > 0) out.push({ data: `[${parts.join(',')}]`, firstId });
  return out;
}

/** The Log on `nc`; the caller owns (and drains) the connection. */
export function jetStreamLog(nc: NatsConnection, names: StreamNames): Log {
  const js: JetStreamClient = jetstream(nc, { timeout: 3000 });
  return new GroupCommitLog(async (groups) => {
    // msgID (the first event id) lets JetStream drop a duplicate of a retried publish.
    await Promise.all(messages(groups).map((m) => js.publish(names.subject, m.data, { msgID: m.firstId })));
  }, PUBLISHES_IN_FLIGHT);
}

// The production Log on NATS JetStream (file storage). Appends of one tick are published as
// few messages as fit under the payload limit (many events per message: one publisher tops
// out near 40k acknowledged messages/s here), each acknowledged by the server once stored.
// The stream keeps a message until the store sink has acknowledged it (interest retention).
import { connect, InvalidArgumentError, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, jetstream, jetstreamManager, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { createHash } from 'node:crypto';
import { GroupCommitLog, repeated, type Group, type Log, type LogRecord, type PersonOf, type Persons, type Refusal } from './event-log.js';
import type { Db } from '../store/db.js';
import { firstEvents } from '../store/ingest-messages.js';
import { resolvePerson } from '../store/person-resolver.js';
import { DomainError } from '../domain/errors.js';
import { logger } from '../logger.js';

/** Names of one deployment's stream, subject and consumer; replicas of it share them. */
export function streamNames(prefix: string) {
  return { stream: `${prefix}-events`, subject: `${prefix}.events`, storeSink: `${prefix}-store-sink`, analyticsSink: `${prefix}-analytics-sink` };
}
export type StreamNames = ReturnType<typeof streamNames>;
export const MAX_MESSAGE_BYTES = 512 * 1024;
/**
 * About what a sink fetches at once (event-sink.ts sizes each fetch by the messages it just
 * took). Fetching 200 messages whatever their size, a sink held up to 100 MB of JSON, several
 * times that parsed, and applied it in one statement; both sinks do this in the main thread.
 */
export const SINK_FETCH_BYTES = 8 * MAX_MESSAGE_BYTES;
/** Publishes awaiting their acks at once: enough to hide the round trip, few enough to batch. */
const PUBLISHES_IN_FLIGHT = 4;
const ns = (ms: number) => ms * 1_000_000;
/**
 * How long a sink's consumer waits for an acknowledgement before delivering a message again:
 * what a crashed sink's messages wait before another fetch gets them. A sink applying a batch
 * for longer tells JetStream it is still working on it (event-sink.ts), so a slow batch is not
 * redelivered under its feet.
 */
export const SINK_ACK_WAIT_MS = 5000;

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
  await ensureConsumer(jsm, names.stream, names.storeSink);
  if (analytics) await ensureConsumer(jsm, names.stream, names.analyticsSink);
  else if (await jsm.consumers.info(names.stream, names.analyticsSink).then(() => true, () => false)) {
    logger.warn('CLICKHOUSE_URL is unset: removing the ClickHouse sink consumer; events it had not read stay out of ClickHouse', { consumer: names.analyticsSink });
    await jsm.consumers.delete(names.stream, names.analyticsSink);
  }
}

/** Creates a sink's durable consumer, or brings an existing one (e.g. made with a 30 s ack_wait) to this configuration. */
async function ensureConsumer(jsm: JetStreamManager, stream: string, durable: string): Promise<void> {
  const config = { ack_wait: ns(SINK_ACK_WAIT_MS), max_ack_pending: 20_000 };
  const existing = await jsm.consumers.info(stream, durable).catch((err: unknown) => {
    if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound) return null;
    throw err;
  });
  if (!existing) await jsm.consumers.add(stream, { durable_name: durable, ack_policy: AckPolicy.Explicit, ...config });
  else if (existing.config.ack_wait !== config.ack_wait || existing.config.max_ack_pending !== config.max_ack_pending) {
    await jsm.consumers.update(stream, durable, config);
    logger.info('sink consumer updated', { consumer: durable, ackWaitMs: SINK_ACK_WAIT_MS });
  }
}

/** Packs groups into messages of at most MAX_MESSAGE_BYTES (a group is never split). */
function messages(groups: Group[]): { data: string; firstId: string }[] {
  const out: { data: string; firstId: string }[] = [];
  let parts: string[] = [];
  let firstId = '';
  let size = 2;
  for (const g of groups) {
    if (g.records.length === 0) continue;
    const text = g.json.slice(1, -1);
    if (parts.length > 0 && size + text.length + 1 > MAX_MESSAGE_BYTES) {
      out.push({ data: `[${parts.join(',')}]`, firstId });
      parts = [];
      size = 2;
    }
    if (parts.length === 0) firstId = g.records[0]!.id;
    parts.push(text);
    size += text.length + 1;
  }
  if (parts.length > 0) out.push({ data: `[${parts.join(',')}]`, firstId });
  return out;
}

/** How long a repeat JetStream dropped waits for the store sink to have applied its first (docs/ingest.md, messageId). */
const FIRST_WAIT_MS = 5000;
const FIRST_POLL_MS = 20;

const messageKey = (r: LogRecord) => `${r.workspace_id}\0${r.message_id!}`;

/**
 * Appends `groups`, some of whose records carry a message_id: those accepted before (in the
 * store, or earlier in this write) are repeats, answered with their first event and not
 * published; each other one is published alone with its workspace and message_id (hashed) as
 * msgID, so JetStream's duplicate window drops a repeat racing it. A repeat it drops is
 * answered once the store sink has applied the first (what outlives the window is the sink's
 * store constraint, apply-events.ts). The records without one go as before.
 */
async function publishOnce(js: JetStreamClient, names: StreamNames, db: Db, groups: Group[], publish: (groups: Group[]) => Promise<unknown>): Promise<Persons> {
  const carrying = groups.flatMap((g) => g.records.filter((r) => r.message_id !== undefined));
  const stored = new Map((await firstEvents(db, carrying)).map((f) => [`${f.workspace_id}\0${f.message_id}`, f]));
  const outcome = new Map<LogRecord, PersonOf | undefined>();
  const firsts = new Map<string, LogRecord>();
  const alone: LogRecord[] = [];
  for (const r of carrying) {
    const first = stored.get(messageKey(r));
    // Its own id: an earlier try of this write (rewritten in halves) stored it already.
    if (first) outcome.set(r, first.event_id === r.id ? undefined : repeated(r, first));
    else if (!firsts.has(messageKey(r))) {
      firsts.set(messageKey(r), r);
      alone.push(r);
    }
  }
  const rest = groups.map((g) => (g.dedup ? { ...g, records: g.records.filter((r) => r.message_id === undefined) } : g));
  await Promise.all([
    publish(rest.map((g) => (g.dedup ? { ...g, json: JSON.stringify(g.records) } : g))),
    ...alone.map(async (r) => {
      const ack = await js.publish(names.subject, JSON.stringify([r]), { msgID: createHash('sha256').update(messageKey(r)).digest('hex') });
      if (ack.duplicate) outcome.set(r, await appliedFirst(db, r));
    }),
  ]);
  return groups.map((g) => g.records.map((r) => {
    if (r.message_id === undefined || outcome.has(r)) return outcome.get(r);
    // A repeat within this write: answered as its first.
    const first = firsts.get(messageKey(r))!;
    if (first === r) return undefined;
    return outcome.get(first) ?? repeated(r, { event_id: first.id, person_id: first.person_id!, type: first.type, parameters: first.parameters, created_at: new Date(first.created_at) });
  }));
}

/**
 * The first event of `r`'s message once the store sink has applied it; `raced` (503, retry) if
 * it has not within FIRST_WAIT_MS. Undefined when that first is `r` itself, published by an
 * earlier try of this write (a group rewritten in halves, event-log.ts).
 */
async function appliedFirst(db: Db, r: LogRecord): Promise<PersonOf | undefined> {
  for (const until = Date.now() + FIRST_WAIT_MS; Date.now() < until; await new Promise((ok) => setTimeout(ok, FIRST_POLL_MS))) {
    const [first] = await firstEvents(db, [r]);
    if (first) return first.event_id === r.id ? undefined : repeated(r, first);
  }
  return { id: '', created: false, raced: true };
}

/** JetStream's "message size exceeds maximum allowed" (a stream's max_msg_size). */
const MESSAGE_TOO_LARGE = 10054;

/**
 * A publish refused for what it carries: a message over the server's max_payload (1 MB by
 * default; one append's events over it, e.g. a 1 MB batch whose records outgrow the body) is
 * 413 for that append. Anything else (no answer, no connection) is an outage.
 */
const publishRefusal: Refusal = (err) => {
  const tooLarge = (err instanceof InvalidArgumentError && /max_payload/.test(err.message)) || (err instanceof JetStreamApiError && err.code === MESSAGE_TOO_LARGE);
  return tooLarge ? new DomainError('PAYLOAD_TOO_LARGE', 'The events of this request are larger than one message of the event log can hold; nothing was recorded') : null;
};

/**
 * The Log on `nc`; the caller owns (and drains) the connection. A record carries its person,
 * so people not in the actor's cache are found or created in `db` before the append
 * (store/person-resolver.ts). When a group's write is refused and rewritten in halves
 * (event-log.ts), a message of a half that starts where a stored message started holds a
 * prefix of that message's appends (packing is greedy from the same start, within a
 * sub-range), so the msgID dedupe drops only events already stored.
 */
export function jetStreamLog(nc: NatsConnection, names: StreamNames, db: Db): Log {
  const js: JetStreamClient = jetstream(nc, { timeout: 3000 });
  // msgID (the first event id) lets JetStream drop a duplicate of a retried publish.
  const publish = (groups: Group[]) => Promise.all(messages(groups).map((m) => js.publish(names.subject, m.data, { msgID: m.firstId })));
  return new GroupCommitLog(
    async (groups) => {
      if (!groups.some((g) => g.dedup)) await publish(groups);
      else return publishOnce(js, names, db, groups, publish);
    },
    { maxInFlight: PUBLISHES_IN_FLIGHT, refusal: publishRefusal, personFirst: (e) => resolvePerson(db, e.workspace_id, e.external_id) },
  );
}

// What each scenario sends. Every request picks a workspace (its API key) and a person at
// random, so the load spreads over workspaces (and so over Herald's actors) and over many
// people, as an integrator's firehose does.
//
// Each connection gets its own sequence of requests, built before the load starts and sent
// in a loop: building a request per send (autocannon's `setupRequest`) costs the generator,
// which shares the 2 CPUs with the server, about as much as the floor spends answering it
// (measured: ~37k req/s with a per-request build against ~100k with pre-built requests).

export const SCENARIOS = ['track', 'track-batch', 'v1-batch', 'identify', 'mixed', 'devices', 'reads', 'floor', 'push-send', 'push-batch'] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** The push scenarios: their people, devices and provider credentials are set up before the load. */
export const PUSH_SCENARIOS: readonly Scenario[] = ['push-send', 'push-batch'];

/** Recipients of one push-batch request (the route's maximum). */
export const PUSH_BATCH_SIZE = 1000;

export interface BenchWorkspace {
  id: string;
  key: string;
  /** Push scenarios: the UUIDs of the people set up, `people[i]` being external id `p-<i>`. */
  people?: string[];
}

export type Kind = 'track' | 'track-batch' | 'v1-batch' | 'identify' | 'person' | 'device' | 'push-send' | 'push-batch' | 'person-events' | 'events-search';

/** Events stored before the load (`--seed-events`) when not given: the `reads` scenario's, issue 12's 10 M. */
export function defaultSeedEvents(scenario: Scenario): number {
  return scenario === 'reads' ? 10_000_000 : 0;
}

/** The span of time the seeded events' created_at spreads over, ending when they are seeded. */
export const SEED_SPAN_MS = 30 * 86_400_000;

/** Events asked for by each read of the `reads` scenario. */
const READS_LIMIT = 50;

export interface BenchRequest {
  kind: Kind;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Events this request carries (counted as events/s once acknowledged with a 2xx). */
  events: number;
  /** A read whose answer's `total` says how many events it returned (counted per kind). */
  returnsEvents?: boolean;
}

const API = '/api/v1';

/**
 * Where a messageId goes in a body (`--message-ids`, and every v1-batch message as Segment's
 * clients send one): the load generator replaces each with an id of its own on every send
 * (autocannon's idReplacement), so a sequence sent again is new messages, not repeats.
 */
const MESSAGE_ID = 'bench-[<id>]';
/** The event names the bench sends; the sink-lag sentinel uses a name of its own. */
export const EVENT_NAMES = ['bench_page_view', 'bench_app_open', 'bench_purchase', 'bench_button_click', 'bench_signup'];
export const PLANS = ['free', 'pro', 'team', 'enterprise'];
export const SOURCES = ['ios', 'android', 'web'];

const pick = <T>(xs: readonly T[]): T => xs[Math.floor(Math.random() * xs.length)]!;
const randInt = (n: number) => Math.floor(Math.random() * n);

/** How long a request may go unanswered before it counts as a timeout: a batch of 1,000 pushes takes seconds. */
export function requestTimeoutMs(scenario: Scenario): number {
  return scenario === 'push-batch' ? 60_000 : 10_000;
}

/** Rough size of one request of the scenario, to size the sequences within a memory budget. */
export function approxRequestBytes(scenario: Scenario): number {
  return scenario === 'push-batch' ? 95_000 : scenario === 'track-batch' ? 15_500 : scenario === 'v1-batch' ? 19_000 : scenario === 'mixed' ? 900 : 450;
}

/**
 * `count` requests for one connection. `people`: distinct people per workspace (external ids
 * `p-0` … `p-<people-1>`). The floor scenario sends what `track` sends. In `mixed`, a read
 * names a person that an earlier request of the same sequence (so of the same connection,
 * already answered) tracked or identified in the same workspace. The push scenarios send one
 * templated message (Liquid in title, body and custom data; per-recipient variables): `push-send`
 * to one person by external id, `push-batch` to 1,000 distinct people of a workspace by UUID
 * (events = recipients). `reads` is half `GET /people/p-<random>/events`, half
 * `GET /events/search` of a random bench event name, a quarter of those with a `since` at a random
 * instant of the seeded span (SEED_SPAN_MS before the sequence is built), both `limit=50`.
 */
export function sequence(scenario: Scenario, workspaces: BenchWorkspace[], people: number, count: number, messageIds = false): BenchRequest[] {
  if (workspaces.length === 0) throw new Error('no workspaces to send to');
  const auth = workspaces.map((w) => `Bearer ${w.key}`);
  // The Segment-compatible source takes the key as HTTP Basic user name (README, Segment-compatible source).
  const basic = workspaces.map((w) => `Basic ${Buffer.from(`${w.key}:`).toString('base64')}`);
  const mid = messageIds ? { messageId: MESSAGE_ID } : {};
  const seen: string[][] = workspaces.map(() => []);
  let seq = 0;

  const person = () => `p-${randInt(people)}`;
  const event = (externalId: string) => ({
    event: pick(EVENT_NAMES),
    external_id: externalId,
    parameters: { source: pick(SOURCES), plan: pick(PLANS), amount: randInt(10_000) / 100, screen: `screen-${randInt(50)}`, seq: seq++ },
    ...mid,
  });
  const post = (kind: Kind, path: string, ws: number, payload: unknown, events: number): BenchRequest => ({
    kind,
    method: 'POST',
    path: API + path,
    headers: { 'Content-Type': 'application/json', Authorization: auth[ws]! },
    body: JSON.stringify(payload),
    events,
  });

  const track = (): BenchRequest => {
    const ws = randInt(workspaces.length);
    const who = person();
    if (seen[ws]!.length < 64) seen[ws]!.push(who);
    return post('track', '/track', ws, event(who), 1);
  };
  const batch = (min: number, max: number): BenchRequest => {
    const ws = randInt(workspaces.length);
    const events = Array.from({ length: min + randInt(max - min + 1) }, () => event(person()));
    return post('track-batch', '/track/batch', ws, { events }, events.length);
  };
  /** What track-batch sends, as Segment's clients send it: /v1/batch, the same events as track messages, each with a messageId. */
  const v1Batch = (): BenchRequest => {
    const ws = randInt(workspaces.length);
    const batch = Array.from({ length: 100 }, () => {
      const { event: name, external_id, parameters } = event(person());
      return { type: 'track', event: name, userId: external_id, properties: parameters, messageId: MESSAGE_ID, context: { library: { name: 'herald-bench' } } };
    });
    return { kind: 'v1-batch', method: 'POST', path: '/v1/batch', headers: { 'Content-Type': 'application/json', Authorization: basic[ws]! }, body: JSON.stringify({ batch, sentAt: new Date().toISOString() }), events: batch.length };
  };
  const identify = (): BenchRequest => {
    const ws = randInt(workspaces.length);
    const who = person();
    if (seen[ws]!.length < 64) seen[ws]!.push(who);
    const n = who.slice(2);
    return post('identify', '/identify', ws, {
      userId: who,
      traits: { email: `${who}@bench.example.com`, first_name: `First${n}`, last_name: `Last${n}`, plan: pick(PLANS), logins: randInt(1000), beta: Math.random() < 0.5 },
      ...mid,
    }, 0);
  };
  const read = (): BenchRequest => {
    const ws = randInt(workspaces.length);
    if (seen[ws]!.length === 0) return identify();
    return { kind: 'person', method: 'GET', path: `${API}/people/${encodeURIComponent(pick(seen[ws]!))}`, headers: { Authorization: auth[ws]! }, events: 0 };
  };

  // A new FCM-shaped token each request (unique across connections and runs), for one of the people.
  const tokenStem = `${Date.now().toString(36)}${randInt(1e9).toString(36)}`;
  const device = (): BenchRequest => {
    const ws = randInt(workspaces.length);
    const token = `bench${tokenStem}x${seq++}:APA91b${'x'.repeat(120)}`;
    return post('device', `/people/${person()}/devices`, ws, { token, platform: 'android', app_version: '1.0.0' }, 0);
  };

  const content = { title: 'Order {{ order_id }} has shipped', body: 'Hi {{ name }}, it arrives {{ eta }}.', custom_data: { deep_link: 'app://orders/{{ order_id }}', source: 'bench' }, variables: { eta: 'tomorrow' } };
  const recipientVariables = (i: number) => ({ name: `First${i}`, order_id: `A-${randInt(1_000_000)}` });
  const pushSend = (): BenchRequest => {
    const ws = randInt(workspaces.length);
    const i = randInt(people);
    const { variables, ...rest } = content;
    return post('push-send', `/workspaces/${workspaces[ws]!.id}/push/send`, ws, { external_id: `p-${i}`, ...rest, variables: { ...variables, ...recipientVariables(i) } }, 1);
  };
  const pushBatch = (): BenchRequest => {
    const ws = randInt(workspaces.length);
    const uuids = workspaces[ws]!.people ?? [];
    // A random choice of distinct people (a partial shuffle), in random order.
    const order = Array.from(uuids.keys());
    const n = Math.min(PUSH_BATCH_SIZE, order.length);
    for (let k = 0; k < n; k++) {
      const j = k + randInt(order.length - k);
      [order[k], order[j]] = [order[j]!, order[k]!];
    }
    const recipients = order.slice(0, n).map((i) => ({ user_id: uuids[i]!, variables: recipientVariables(i) }));
    return post('push-batch', `/workspaces/${workspaces[ws]!.id}/push/send/batch`, ws, { ...content, recipients }, n);
  };

  // The read routes over the events stored before the load (`--seed-events`). A search answers
  // the newest `limit` events of the name at or after `since` (events_by_type: workspace, type,
  // created_at DESC): `since` is an index condition, and shortens the walk only when fewer than
  // `limit` events of the name are newer.
  const get = (kind: Kind, path: string, ws: number): BenchRequest => ({ kind, method: 'GET', path: API + path, headers: { Authorization: auth[ws]! }, events: 0, returnsEvents: true });
  const builtAt = Date.now();
  const personEvents = (): BenchRequest => get('person-events', `/people/${person()}/events?limit=${READS_LIMIT}`, randInt(workspaces.length));
  const searchEvents = (): BenchRequest => {
    const since = Math.random() < 0.25 ? `&since=${new Date(builtAt - randInt(SEED_SPAN_MS)).toISOString()}` : '';
    return get('events-search', `/events/search?event=${pick(EVENT_NAMES)}&limit=${READS_LIMIT}${since}`, randInt(workspaces.length));
  };

  const mixed = (): BenchRequest => {
    // The firehose mix: ~70% track, ~15% batches of 10-20, ~10% identify, ~5% reads.
    const r = Math.random();
    if (r < 0.7) return track();
    if (r < 0.85) return batch(10, 20);
    if (r < 0.95) return identify();
    return read();
  };
  const next: Record<Scenario, () => BenchRequest> = {
    track,
    floor: track,
    'track-batch': () => batch(100, 100),
    'v1-batch': v1Batch,
    identify,
    mixed,
    devices: device,
    reads: () => (Math.random() < 0.5 ? personEvents() : searchEvents()),
    'push-send': pushSend,
    'push-batch': pushBatch,
  };
  return Array.from({ length: count }, next[scenario]);
}

// GET /metrics (docs/operations.md): off by default; HERALD_METRICS=true serves it on the main port,
// HERALD_METRICS_PORT on a listener of its own only. A scrape adds up the front's and every
// actor's registries; the counts move with the requests, pushes and refusals made here, and
// no label carries a tenant's id or a raw path.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { eventually, startServer, workspaceWithKeys, type TestServer } from '../helpers/server.js';
import { PushWs, isSent, pushToken } from '../helpers/push.js';
import { families, parseMetrics, sum } from '../../bench/metrics.js';

const FAMILIES = [
  'herald_http_request_duration_seconds',
  'herald_log_group_appends',
  'herald_log_events_total',
  'herald_log_append_failures_total',
  'herald_sink_events_total',
  'herald_sink_lag_seconds',
  'herald_sink_pending_messages',
  'herald_dead_letters_total',
  'herald_provider_request_duration_seconds',
  'herald_messages_total',
  'herald_campaign_sends_total',
  'herald_campaign_enrolments_total',
  'herald_rate_limit_refusals_total',
  'herald_eventloop_lag_seconds',
  'process_cpu_seconds_total',
];

/** Prometheus's own linter of the text format (Debian's package `prometheus`); absent, the check is skipped, saying why. */
const promtoolMissing = spawnSync('promtool', ['--version']).error ? 'promtool is not installed (Debian package prometheus)' : false;

async function scrape(t: Test, url: string): Promise<string> {
  const r = await fetch(url);
  t.equal(r.status, 200, `GET ${url}`);
  t.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/, 'Prometheus text format');
  return r.text();
}

/** The main port's /metrics: the usual 404 of a path no route has (checked against the OpenAPI document). */
async function notServed(t: Test, s: TestServer): Promise<void> {
  const r = await s.req('GET', `${s.base}/metrics`);
  t.equal(r.status, 404, 'GET /metrics on the main port is 404');
  t.equal(r.body?.code, 'NOT_FOUND');
}

t.test('HERALD_METRICS=true: /metrics on the main port, the counts move', async (t) => {
  // ip-public's burst of 2: the third unauthenticated request is refused.
  const s = await startServer({ HERALD_METRICS: 'true', HERALD_RATE_LIMITS: 'ip-public=1:2' });
  t.teardown(() => s.stop());
  // The line after the one startServer waits for.
  t.ok(await eventually(async () => s.stdout().includes(`Metrics at ${s.base}/metrics`)), 'start-up says where');

  const k = await workspaceWithKeys(s, { write: ['events:write'] });
  for (let i = 0; i < 3; i++) t.equal((await s.req('POST', '/track', { token: k.write, body: { event: 'metrics_probe', external_id: `m-${i}` } })).status, 201);
  const w = await PushWs.create(s);
  await w.personWith('pat', [[pushToken('and-'), 'android']]);
  const pushed = await w.send({ external_id: 'pat', title: 'Hi' });
  isSent(t, pushed);
  const unauthenticated = [];
  for (let i = 0; i < 3; i++) unauthenticated.push((await s.req('POST', '/track', { body: { event: 'x', external_id: 'y' } })).status);
  t.same(unauthenticated, [401, 401, 429], 'the third unauthenticated request is refused');
  t.equal((await s.req('GET', '/no-such-route')).status, 404);

  const text = await scrape(t, `${s.base}/metrics`);
  const m = parseMetrics(text);
  const have = families(text);
  for (const f of FAMILIES) t.ok(have.has(f), `family ${f}`);

  const requests = (labels: Record<string, string>) => sum(m, 'herald_http_request_duration_seconds_count', labels);
  t.equal(requests({ route: 'POST /track', status: '201' }), 3, 'tracks by route template and status');
  t.equal(requests({ route: 'POST /track', status: '429' }), 1, 'the 429');
  t.equal(requests({ route: 'POST /workspaces/{workspaceId}/push/send', status: String(pushed.status) }), 1, 'the push, by its template');
  t.equal(requests({ route: 'none', status: '404' }), 1, 'no route: `none`, never the raw path');
  t.ok(sum(m, 'herald_http_request_duration_seconds_bucket', { route: 'POST /track', status: '201', le: '+Inf' }) === 3, 'latency histogram');
  const events = sum(m, 'herald_log_events_total');
  t.ok(events >= 3, `the Log acknowledged the 3 tracked events (${events})`);
  t.ok(sum(m, 'herald_log_group_appends_count') >= 1 && sum(m, 'herald_log_group_appends_sum') >= 3, 'group sizes: the appends in writes');
  t.equal(sum(m, 'herald_provider_request_duration_seconds_count', { provider: 'sandbox', outcome: 'delivered' }), 1, 'the sandbox delivered one device');
  t.equal(sum(m, 'herald_messages_total', { channel: 'push', status: 'sent' }), 1, 'one push message sent');
  t.equal(sum(m, 'herald_rate_limit_refusals_total', { scope: 'ip-public', gate: 'local' }), 1, 'the refusal by scope');
  for (const thread of ['front', 'actor-0', 'actor-1']) {
    t.ok(m.some((x) => x.name === 'herald_eventloop_lag_seconds' && x.labels.thread === thread && x.labels.quantile === '0.99'), `event-loop lag of ${thread}`);
  }
  t.notOk(text.includes(k.ws.id) || text.includes(w.ws.id), 'no workspace id in any label');
  t.ok(sum(m, 'herald_eventloop_lag_seconds_count', { thread: 'front' }) > 0, 'the lag summary counts its samples');

  t.test('promtool check metrics: a clean scrape', { skip: promtoolMissing }, async (t) => {
    const lint = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    t.equal(lint.status, 0, `promtool exits 0\n${lint.stdout}${lint.stderr}`);
    t.equal(lint.stdout + lint.stderr, '', 'and finds nothing to say');
  });
  if (process.env.NATS_URL) {
    // The JetStream Log: its store sink applies what the Log acknowledged, and says how far behind it is.
    const sink = await eventually(async () => {
      const now = parseMetrics(await (await fetch(`${s.base}/metrics`)).text());
      return sum(now, 'herald_sink_events_total', { sink: 'jetstream-store' }) >= events ? now : undefined;
    });
    t.ok(sink, 'the store sink applied the events');
    t.ok(sink?.some((x) => x.name === 'herald_sink_lag_seconds' && x.labels.sink === 'jetstream-store'), 'its lag');
  }

  // Counts move between scrapes.
  t.equal((await s.req('POST', '/track', { token: k.write, body: { event: 'metrics_probe', external_id: 'm-3' } })).status, 201);
  const again = parseMetrics(await scrape(t, `${s.base}/metrics`));
  t.equal(sum(again, 'herald_http_request_duration_seconds_count', { route: 'POST /track', status: '201' }), 4, 'one more track');
  t.equal(sum(again, 'herald_log_events_total'), events + 1, 'one more event');
});

t.test('HERALD_METRICS_PORT: served there only', async (t) => {
  const s = await startServer({ HERALD_METRICS_PORT: '0' });
  t.teardown(() => s.stop());
  const port = (await eventually(async () => /Metrics at http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(s.stdout())))?.[1];
  t.ok(port, 'start-up names the metrics port');
  t.not(Number(port), s.port, 'a port of its own');
  await notServed(t, s);
  t.equal((await s.req('GET', '/healthz')).status, 200);
  const m = parseMetrics(await scrape(t, `http://127.0.0.1:${port}/metrics`));
  t.equal(sum(m, 'herald_http_request_duration_seconds_count', { route: 'GET /healthz', status: '200' }), 1, "the main port's requests are counted");
  const other = await fetch(`http://127.0.0.1:${port}/api/v1/track`, { method: 'POST', body: '{}' });
  t.equal(other.status, 404, 'nothing else on the metrics port');
  await other.text();
});

t.test('off by default: /metrics is 404', async (t) => {
  const s = await startServer();
  t.teardown(() => s.stop());
  await notServed(t, s);
  t.notMatch(s.stdout(), /Metrics at/, 'no metrics line at start-up');
});

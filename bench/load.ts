// The load generator: a child process (forked by bench/run.ts) that drives autocannon
// against one target and reports back over IPC. It runs apart from the server so that the
// server's event loop is not shared with the load; on this 2-core machine they still share
// the CPUs, which is why every run also measures the floor with the same generator.
import { createRequire } from 'node:module';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { LatencyHistogram, round, type LatencySummary } from './stats.js';
import { approxRequestBytes, requestTimeoutMs, sequence, type BenchRequest, type BenchWorkspace, type Kind, type Scenario } from './scenarios.js';

const require = createRequire(import.meta.url);

// The part of autocannon's API used here (the package ships no types).
interface AcRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Called as a method of the request object it belongs to. */
  onResponse: (this: AcRequest & { bench: BenchRequest }, status: number, body: string) => void;
}
interface AcClient {
  setRequests(requests: AcRequest[]): void;
}
interface AcOptions {
  url: string;
  connections: number;
  duration: number;
  pipelining: number;
  timeout: number;
  setupClient: (client: AcClient) => void;
  /** Replace each `[<id>]` of a body with a fresh id on every send. */
  idReplacement?: boolean;
}
interface AcResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  statusCodeStats: Record<string, { count: number }>;
  requests: { average: number; total: number; sent: number };
  latency: { p50: number; p99: number; max: number };
}
interface AcInstance {
  on(event: 'response', fn: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): void;
  stop(): void;
}
type Autocannon = (opts: AcOptions, cb: (err: Error | null, result: AcResult) => void) => AcInstance;
const autocannon = require('autocannon') as Autocannon;

export interface LoadConfig {
  /** Base URL of the target, e.g. http://127.0.0.1:8080 (paths come from the scenario). */
  url: string;
  scenario: Scenario;
  workspaces: BenchWorkspace[];
  people: number;
  connections: number;
  durationMs: number;
  /** Requests per second over all connections; unset: as fast as the target answers. */
  rate?: number;
  /** `--message-ids`: every track, batch entry and identify carries a messageId, new on every send. */
  messageIds?: boolean;
}

export interface KindStats {
  requests: number;
  non2xx: number;
  events: number;
  /** Reads (`returnsEvents`): events their 2xx answers returned (their `total`), and answers that returned none. */
  returned?: number;
  empty?: number;
}

export interface LoadResult {
  /** closed: as fast as answered (autocannon); paced: open loop at --rate. */
  mode: 'closed' | 'paced';
  /** The measured time, without autocannon's start-up (`init_s`). */
  duration_s: number;
  init_s: number;
  requests: number;
  requests_per_s: number;
  events: number;
  events_per_s: number;
  latency: LatencySummary;
  /** The same, for each kind of request (every response). */
  latency_by_kind: Partial<Record<Kind, LatencySummary>>;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Paced mode: requests not sent because too many were already waiting. */
  skipped: number;
  status_codes: Record<string, number>;
  by_kind: Partial<Record<Kind, KindStats>>;
  sample_errors: string[];
  /** Distinct pre-built requests each connection loops over. */
  requests_per_connection: number;
  /** Responses in each second of the measured phase. */
  timeline: number[];
  loadgen_cpu_s: number;
  autocannon: { requests_avg: number; latency_p50_ms: number; latency_p99_ms: number; latency_max_ms: number } | null;
}

/** `started`: the requests are built and the load begins now (the parent marks its measurements). */
export type FromLoad = { type: 'started' } | { type: 'result'; result: LoadResult } | { type: 'error'; message: string };
export type ToLoad = { type: 'run'; config: LoadConfig } | { type: 'exit' };

/** Request bytes the sequences of all connections may take together. */
const SEQUENCE_BUDGET_BYTES = 64 * 1024 * 1024;

type Prepared = AcRequest & { bench: BenchRequest };

/** `total` of a read's answer (`{…, "events": […], "total": n}`), or null when it has none. */
function totalOf(body: string): number | null {
  const at = body.lastIndexOf('"total":');
  if (at < 0) return null;
  const n = parseInt(body.slice(at + 8, at + 20), 10);
  return Number.isFinite(n) ? n : null;
}

/** Counts responses by kind and status, and their latencies; shared by both modes. */
class Tally {
  readonly hist = new LatencyHistogram();
  readonly histByKind: Partial<Record<Kind, LatencyHistogram>> = {};
  readonly byKind: Partial<Record<Kind, KindStats>> = {};
  readonly samples = new Set<string>();
  readonly codes: Record<string, number> = {};
  readonly timeline: number[] = [];
  events = 0;
  responses = 0;
  non2xx = 0;
  thisSecond = 0;
  private ticker: NodeJS.Timeout | undefined;
  /** The kind of the last response counted: autocannon reports its latency right after (closed loop). */
  lastKind: Kind | undefined;

  response(r: BenchRequest, status: number, body: string): void {
    this.lastKind = r.kind;
    const k = (this.byKind[r.kind] ??= { requests: 0, non2xx: 0, events: 0 });
    k.requests++;
    this.responses++;
    this.thisSecond++;
    this.codes[status] = (this.codes[status] ?? 0) + 1;
    if (status >= 200 && status < 300) {
      k.events += r.events;
      this.events += r.events;
      const n = r.returnsEvents ? totalOf(body) : null;
      if (n !== null) {
        k.returned = (k.returned ?? 0) + n;
        k.empty = (k.empty ?? 0) + (n === 0 ? 1 : 0);
      }
    } else {
      k.non2xx++;
      this.non2xx++;
      if (this.samples.size < 5) this.samples.add(`${status} ${r.method} ${r.path.replace(/\/people\/[^/]+/, '/people/:id')}: ${body.slice(0, 300)}`);
    }
  }

  latency(ms: number, kind: Kind | undefined): void {
    this.hist.record(ms);
    if (kind) (this.histByKind[kind] ??= new LatencyHistogram()).record(ms);
  }

  latencyByKind(): Partial<Record<Kind, LatencySummary>> {
    return Object.fromEntries(Object.entries(this.histByKind).map(([kind, h]) => [kind, h.summary()]));
  }

  startTimeline(): void {
    this.ticker = setInterval(() => {
      this.timeline.push(this.thisSecond);
      this.thisSecond = 0;
    }, 1000);
  }

  stopTimeline(): void {
    clearInterval(this.ticker);
  }
}

/** Whether bodies carry messageIds to make fresh on every send (scenarios.ts MESSAGE_ID). */
const freshIds = (cfg: LoadConfig): boolean => cfg.messageIds === true || cfg.scenario === 'v1-batch';
let idCounter = 0;
const idStem = `${process.pid.toString(36)}${Date.now().toString(36)}`;
/** A fresh id for the paced loop (autocannon makes its own in the closed one). */
const nextId = (): string => `${idStem}-${(idCounter++).toString(36)}`;

function prepare(cfg: LoadConfig, tally: Tally): { sequences: Prepared[][]; perConnection: number } {
  const onResponse = function (this: Prepared, status: number, body: string): void {
    tally.response(this.bench, status, body);
  };
  // Every connection loops over a sequence of its own, built now (fresh for each phase).
  const perConnection = Math.max(8, Math.min(2048, Math.floor(SEQUENCE_BUDGET_BYTES / cfg.connections / approxRequestBytes(cfg.scenario))));
  const sequences = Array.from({ length: cfg.connections }, () =>
    sequence(cfg.scenario, cfg.workspaces, cfg.people, perConnection, cfg.messageIds).map((bench) => ({ method: bench.method, path: bench.path, headers: bench.headers, body: bench.body, bench, onResponse })),
  );
  return { sequences, perConnection };
}

/** Closed loop: every connection sends its next request as soon as the last is answered. */
function runClosed(cfg: LoadConfig, onStart: () => void): Promise<LoadResult> {
  const tally = new Tally();
  const { sequences, perConnection } = prepare(cfg, tally);
  onStart();
  let nextClient = 0;
  const cpu0 = process.cpuUsage();

  return new Promise((resolve, reject) => {
    // autocannon builds every connection's requests synchronously at start, inside its timed
    // window; that time is taken out of the duration, and the latency of requests queued
    // during it counts from its end.
    const t0 = Date.now();
    let initEnd = Infinity;
    const instance = autocannon(
      {
        url: cfg.url,
        connections: cfg.connections,
        duration: Math.max(1, cfg.durationMs / 1000),
        pipelining: 1,
        timeout: requestTimeoutMs(cfg.scenario) / 1000,
        idReplacement: freshIds(cfg),
        setupClient: (client) => client.setRequests(sequences[nextClient++ % sequences.length]!),
      },
      (err, result) => {
        tally.stopTimeline();
        if (err) return reject(err);
        const cpu = process.cpuUsage(cpu0);
        const codes: Record<string, number> = {};
        for (const [code, s] of Object.entries(result.statusCodeStats ?? {})) codes[code] = Number(s.count);
        const total = result.requests.total;
        const duration = Math.max(0.001, result.duration - (initEnd - t0) / 1000);
        resolve({
          mode: 'closed',
          duration_s: round(duration, 3),
          init_s: round((initEnd - t0) / 1000, 3),
          requests: total,
          requests_per_s: round(total / duration, 2),
          events: tally.events,
          events_per_s: round(tally.events / duration),
          latency: tally.hist.summary(),
          latency_by_kind: tally.latencyByKind(),
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          skipped: 0,
          status_codes: codes,
          by_kind: tally.byKind,
          sample_errors: [...tally.samples],
          requests_per_connection: perConnection,
          timeline: tally.timeline,
          loadgen_cpu_s: round((cpu.user + cpu.system) / 1e6, 2),
          autocannon: { requests_avg: result.requests.average, latency_p50_ms: result.latency.p50, latency_p99_ms: result.latency.p99, latency_max_ms: result.latency.max },
        });
      },
    );
    initEnd = Date.now();
    instance.on('response', (_client, _status, _bytes, ms) => {
      // A request queued while autocannon was still starting could not leave before it ended.
      // The request's onResponse (tally.response) ran just before, for this very response.
      const now = Date.now();
      tally.latency(now - ms >= initEnd ? ms : now - initEnd, tally.lastKind);
    });
    tally.startTimeline();
  });
}

/**
 * Open loop at `cfg.rate`: request i is due at start + i/rate whether or not earlier ones were
 * answered (autocannon's own rate limit sends each second's budget in a burst, which measures
 * the burst rather than the rate). Requests are sent on a 1 ms timer; latency counts from
 * the send, so waiting for a free connection is included (the timer's own jitter is not).
 * At most 16 requests per connection wait; beyond that a
 * request is skipped (counted) rather than queued without bound.
 */
function runPaced(cfg: LoadConfig, onStart: () => void): Promise<LoadResult> {
  const rate = cfg.rate!;
  const tally = new Tally();
  const { sequences, perConnection } = prepare(cfg, tally);
  onStart();
  // Interleave the connections' sequences so consecutive requests differ as they do there.
  const all: Prepared[] = [];
  for (let i = 0; i < perConnection; i++) for (const s of sequences) all.push(s[i]!);
  const target = new URL(cfg.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: cfg.connections, maxFreeSockets: cfg.connections });
  const maxWaiting = cfg.connections * 16;
  let sent = 0;
  let outstanding = 0;
  let errors = 0;
  let timeouts = 0;
  let skipped = 0;
  const cpu0 = process.cpuUsage();

  return new Promise((resolve) => {
    const start = performance.now();
    const end = start + cfg.durationMs;
    const fire = (req: Prepared) => {
      outstanding++;
      const t = performance.now();
      const headers: Record<string, string | number> = { ...req.headers };
      const body = req.body !== undefined && freshIds(cfg) ? req.body.replaceAll('[<id>]', nextId) : req.body;
      if (body !== undefined) headers['Content-Length'] = Buffer.byteLength(body);
      const r = http.request({ agent, host: target.hostname, port: target.port, method: req.method, path: req.path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          outstanding--;
          tally.latency(performance.now() - t, req.bench.kind);
          tally.response(req.bench, res.statusCode ?? 0, Buffer.concat(chunks).toString());
          maybeDone();
        });
      });
      r.setTimeout(requestTimeoutMs(cfg.scenario), () => {
        timeouts++;
        r.destroy(new Error('timeout'));
      });
      r.on('error', () => {
        outstanding--;
        errors++;
        maybeDone();
      });
      r.end(body);
    };
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      tally.stopTimeline();
      agent.destroy();
      const cpu = process.cpuUsage(cpu0);
      const duration = cfg.durationMs / 1000;
      resolve({
        mode: 'paced',
        duration_s: duration,
        init_s: 0,
        requests: tally.responses,
        requests_per_s: round(tally.responses / duration, 2),
        events: tally.events,
        events_per_s: round(tally.events / duration),
        latency: tally.hist.summary(),
        latency_by_kind: tally.latencyByKind(),
        non2xx: tally.non2xx,
        errors: errors - timeouts,
        timeouts,
        skipped,
        status_codes: tally.codes,
        by_kind: tally.byKind,
        sample_errors: [...tally.samples],
        requests_per_connection: perConnection,
        timeline: tally.timeline,
        loadgen_cpu_s: round((cpu.user + cpu.system) / 1e6, 2),
        autocannon: null,
      });
    };
    const maybeDone = () => {
      if (performance.now() >= end && outstanding === 0) finish();
    };
    const tick = () => {
      const now = performance.now();
      const due = Math.floor(((Math.min(now, end) - start) * rate) / 1000);
      while (sent < due) {
        const req = all[sent % all.length]!;
        sent++;
        if (outstanding >= maxWaiting) skipped++;
        else fire(req);
      }
      if (now < end) setTimeout(tick, 1);
      else {
        maybeDone();
        // Answers still missing a second past their timeout after the end: stop waiting.
        setTimeout(finish, requestTimeoutMs(cfg.scenario) + 1000).unref();
      }
    };
    tally.startTimeline();
    tick();
  });
}

const runOnce = (cfg: LoadConfig, onStart: () => void): Promise<LoadResult> => (cfg.rate ? runPaced(cfg, onStart) : runClosed(cfg, onStart));

const send = (m: FromLoad, then?: () => void) => process.send?.(m, undefined, {}, () => then?.());

if (!process.send) {
  process.stderr.write('bench/load.js is started by bench/run.js (it needs an IPC channel)\n');
  process.exit(2);
}
// The parent going away ends the load at once.
process.once('disconnect', () => process.exit(1));
process.once('SIGTERM', () => process.exit(1));
// One phase at a time (warm-up, then the measured phase), each on the parent's request.
process.on('message', (m: ToLoad) => {
  if (m.type === 'exit') return void process.exit(0);
  // Hard bound: autocannon stops by itself after the duration; this catches anything stuck.
  const guard = setTimeout(() => send({ type: 'error', message: 'load generator exceeded its time budget' }, () => process.exit(1)), m.config.durationMs + requestTimeoutMs(m.config.scenario) + 60_000);
  runOnce(m.config, () => send({ type: 'started' })).then(
    (result) => {
      clearTimeout(guard);
      send({ type: 'result', result });
    },
    (err: Error) => {
      clearTimeout(guard);
      send({ type: 'error', message: err.stack ?? String(err) }, () => process.exit(1));
    },
  );
});

// The load generator: a child process (forked by bench/run.ts) that drives autocannon
// against one target and reports back over IPC. It runs apart from the server so that the
// server's event loop is not shared with the load; on this 2-core machine they still share
// the CPUs, which is why every run also measures the floor with the same generator.
import { createRequire } from 'node:module';
import { LatencyHistogram, round, type LatencySummary } from './stats.js';
import { approxRequestBytes, sequence, type BenchRequest, type BenchWorkspace, type Kind, type Scenario } from './scenarios.js';

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
  overallRate?: number;
  setupClient: (client: AcClient) => void;
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
}

export interface KindStats {
  requests: number;
  non2xx: number;
  events: number;
}

export interface LoadResult {
  /** The measured time, without autocannon's start-up (`init_s`). */
  duration_s: number;
  init_s: number;
  requests: number;
  requests_per_s: number;
  events: number;
  events_per_s: number;
  latency: LatencySummary;
  non2xx: number;
  errors: number;
  timeouts: number;
  status_codes: Record<string, number>;
  by_kind: Partial<Record<Kind, KindStats>>;
  sample_errors: string[];
  /** Distinct pre-built requests each connection loops over. */
  requests_per_connection: number;
  /** Responses in each second of the measured phase. */
  timeline: number[];
  loadgen_cpu_s: number;
  autocannon: { requests_avg: number; latency_p50_ms: number; latency_p99_ms: number; latency_max_ms: number };
}

export type FromLoad = { type: 'result'; result: LoadResult } | { type: 'error'; message: string };
export type ToLoad = { type: 'run'; config: LoadConfig } | { type: 'exit' };

/** Request bytes the sequences of all connections may take together. */
const SEQUENCE_BUDGET_BYTES = 64 * 1024 * 1024;

function runOnce(cfg: LoadConfig): Promise<LoadResult> {
  const durationMs = cfg.durationMs;
  const hist = new LatencyHistogram();
  const byKind: Partial<Record<Kind, KindStats>> = {};
  const samples = new Set<string>();
  const timeline: number[] = [];
  let events = 0;
  let thisSecond = 0;

  function onResponse(this: AcRequest & { bench: BenchRequest }, status: number, body: string): void {
    const r = this.bench;
    const k = (byKind[r.kind] ??= { requests: 0, non2xx: 0, events: 0 });
    k.requests++;
    if (status >= 200 && status < 300) {
      k.events += r.events;
      events += r.events;
    } else {
      k.non2xx++;
      if (samples.size < 5) samples.add(`${status} ${r.method} ${r.path.replace(/\/people\/[^/]+/, '/people/:id')}: ${body.slice(0, 300)}`);
    }
  }
  // Every connection loops over a sequence of its own, built now (fresh for each phase).
  const perConnection = Math.max(8, Math.min(2048, Math.floor(SEQUENCE_BUDGET_BYTES / cfg.connections / approxRequestBytes(cfg.scenario))));
  const sequences = Array.from({ length: cfg.connections }, () =>
    sequence(cfg.scenario, cfg.workspaces, cfg.people, perConnection).map((bench) => ({ method: bench.method, path: bench.path, headers: bench.headers, body: bench.body, bench, onResponse })),
  );
  let nextClient = 0;
  const cpu0 = process.cpuUsage();

  return new Promise((resolve, reject) => {
    // autocannon builds every connection's requests synchronously at start, inside its timed
    // window; that time is taken out of the duration, and responses to requests queued
    // during it are counted but not put in the latency histogram.
    const t0 = Date.now();
    let initEnd = Infinity;
    const instance = autocannon(
      {
        url: cfg.url,
        connections: cfg.connections,
        duration: Math.max(1, durationMs / 1000),
        pipelining: 1,
        timeout: 10,
        ...(cfg.rate ? { overallRate: cfg.rate } : {}),
        setupClient: (client) => client.setRequests(sequences[nextClient++ % sequences.length]!),
      },
      (err, result) => {
        clearInterval(ticker);
        if (err) return reject(err);
        const cpu = process.cpuUsage(cpu0);
        const codes: Record<string, number> = {};
        for (const [code, s] of Object.entries(result.statusCodeStats ?? {})) codes[code] = Number(s.count);
        const total = result.requests.total;
        const duration = Math.max(0.001, result.duration - (initEnd - t0) / 1000);
        resolve({
          duration_s: round(duration, 3),
          init_s: round((initEnd - t0) / 1000, 3),
          requests: total,
          requests_per_s: round(total / duration),
          events,
          events_per_s: round(events / duration),
          latency: hist.summary(),
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          status_codes: codes,
          by_kind: byKind,
          sample_errors: [...samples],
          requests_per_connection: perConnection,
          timeline,
          loadgen_cpu_s: round((cpu.user + cpu.system) / 1e6, 2),
          autocannon: { requests_avg: result.requests.average, latency_p50_ms: result.latency.p50, latency_p99_ms: result.latency.p99, latency_max_ms: result.latency.max },
        });
      },
    );
    initEnd = Date.now();
    instance.on('response', (_client, _status, _bytes, ms) => {
      if (Date.now() - ms >= initEnd) hist.record(ms);
      thisSecond++;
    });
    const ticker = setInterval(() => {
      timeline.push(thisSecond);
      thisSecond = 0;
    }, 1000);
  });
}

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
  const guard = setTimeout(() => send({ type: 'error', message: 'load generator exceeded its time budget' }, () => process.exit(1)), m.config.durationMs + 60_000);
  runOnce(m.config).then(
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

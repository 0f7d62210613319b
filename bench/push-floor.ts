// The push floor: a bare node:http2 client sending FCM requests to the fake FCM as fast as it
// answers, over the sessions and concurrent streams Herald's pool uses (src/push/http2-pool.ts),
// with the request bodies Herald sent. No Herald code on the request path: the OAuth token is
// fetched once (src/push/fcm-auth.ts, the same grant Herald makes), then every stream is a plain
// `session.request`. Forked by bench/run.ts with an IPC channel (NODE_EXTRA_CA_CERTS trusting the
// fake); runs one `run` and reports back (a warm-up is a run of its own).
import http2 from 'node:http2';
import { performance } from 'node:perf_hooks';
import { ServiceAccountTokenSource, type ServiceAccount } from '../src/push/index.js';
import { OutboundPolicy } from '../src/net/destinations.js';
import { parseAllowList } from '../src/domain/private-hosts.js';
import { LatencyHistogram, round, type LatencySummary } from './stats.js';

export interface PushFloorConfig {
  /** The fake FCM's origin, and the send path Herald used. */
  origin: string;
  path: string;
  account: ServiceAccount;
  /** FCM request bodies (JSON text), sent in turn. */
  bodies: string[];
  sessions: number;
  streamsPerSession: number;
  durationMs: number;
}

export interface PushFloorResult {
  sessions: number;
  streams_per_session: number;
  duration_s: number;
  requests: number;
  requests_per_s: number;
  non2xx: number;
  errors: number;
  latency: LatencySummary;
  /** Responses in each second of the measured phase. */
  timeline: number[];
  client_cpu_s: number;
}

export type ToPushFloor = { type: 'run'; config: PushFloorConfig };
export type FromPushFloor = { type: 'result'; result: PushFloorResult } | { type: 'error'; message: string };

interface Phase {
  hist: LatencyHistogram;
  requests: number;
  non2xx: number;
  errors: number;
  timeline: number[];
}

function connect(origin: string): Promise<http2.ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(origin);
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

/** One POST on `session`; resolves with the status (0 when the stream failed). */
function post(session: http2.ClientHttp2Session, path: string, headers: http2.OutgoingHttpHeaders, body: string): Promise<number> {
  return new Promise((resolve) => {
    let status = 0;
    const stream = session.request({ ':method': 'POST', ':path': path, ...headers });
    stream.on('response', (h) => (status = Number(h[':status'])));
    // The answer is read (as Herald reads it) and dropped.
    stream.on('data', () => {});
    stream.on('error', () => {});
    stream.on('close', () => resolve(status));
    stream.end(body);
  });
}

async function phase(sessions: http2.ClientHttp2Session[], cfg: PushFloorConfig, headers: http2.OutgoingHttpHeaders, ms: number): Promise<Phase> {
  const p: Phase = { hist: new LatencyHistogram(), requests: 0, non2xx: 0, errors: 0, timeline: [] };
  let thisSecond = 0;
  const ticker = setInterval(() => {
    p.timeline.push(thisSecond);
    thisSecond = 0;
  }, 1000);
  const end = performance.now() + ms;
  let next = 0;
  // Every session keeps `streamsPerSession` streams open: a stream answered starts the next.
  const loop = async (session: http2.ClientHttp2Session) => {
    while (performance.now() < end) {
      const body = cfg.bodies[next++ % cfg.bodies.length]!;
      const t = performance.now();
      const status = await post(session, cfg.path, headers, body);
      if (performance.now() > end) break;
      p.hist.record(performance.now() - t);
      p.requests++;
      thisSecond++;
      if (status === 0) p.errors++;
      else if (status < 200 || status >= 300) p.non2xx++;
    }
  };
  await Promise.all(sessions.flatMap((s) => Array.from({ length: cfg.streamsPerSession }, () => loop(s))));
  clearInterval(ticker);
  return p;
}

async function run(cfg: PushFloorConfig): Promise<PushFloorResult> {
  if (cfg.bodies.length === 0) throw new Error('no FCM request bodies to send');
  // The bench's token endpoint is its own fake on this machine: a private destination it allows.
  const outbound = new OutboundPolicy(parseAllowList([new URL(cfg.account.token_uri).hostname]));
  const token = await new ServiceAccountTokenSource(cfg.account, { rule: { googleOnly: false, outbound } }).token();
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=utf-8' };
  const sessions = await Promise.all(Array.from({ length: cfg.sessions }, () => connect(cfg.origin)));
  try {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const p = await phase(sessions, cfg, headers, cfg.durationMs);
    const duration = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return {
      sessions: cfg.sessions,
      streams_per_session: cfg.streamsPerSession,
      duration_s: round(duration, 3),
      requests: p.requests,
      requests_per_s: round(p.requests / duration),
      non2xx: p.non2xx,
      errors: p.errors,
      latency: p.hist.summary(),
      timeline: p.timeline,
      client_cpu_s: round((cpu.user + cpu.system) / 1e6, 2),
    };
  } finally {
    for (const s of sessions) s.destroy();
  }
}

if (!process.send) {
  process.stderr.write('bench/push-floor.js is started by bench/run.js (it needs an IPC channel)\n');
  process.exit(2);
}
process.once('disconnect', () => process.exit(1));
process.once('SIGTERM', () => process.exit(1));
process.once('message', (m: ToPushFloor) => {
  const reply = (r: FromPushFloor) => process.send!(r, undefined, {}, () => process.exit(r.type === 'result' ? 0 : 1));
  run(m.config).then(
    (result) => reply({ type: 'result', result }),
    (err: Error) => reply({ type: 'error', message: err.stack ?? String(err) }),
  );
});

// `npm run bench -- --scenario segment [--events 100000] [--clients 4] [--flush-at 100]`: the real
// @segment/analytics-node client, unmodified, pointed at a Herald this run starts by its `host`
// option, sending `track` calls as an integrator's server does (issue 36). See bench/README.md.
//
// Setup is not timed: Herald and one workspace with one API key per client. Then each client
// gets `--events / --clients` tracks, called as fast as the client takes them while at most
// `--in-flight` of them are unacknowledged (the client queues without limit: the bound keeps the
// run's memory flat), batched by the client (`--flush-at` a request, its default 15 otherwise).
// The time is from the first call to the last acknowledgement (the client's `http_response`
// events, and closeAndFlush). Checked afterwards: every event stored once (the store's count),
// no request answered other than 2xx (exit 1 otherwise). Reported: events/s, requests/s, and
// Herald's and the embedded PostgreSQL's CPU per 1,000 events.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { Analytics } from '@segment/analytics-node';
import { databaseUrl, guardRun, Sampler, setupWorkspaces, startBenchHerald, stopChild, type HeraldProc } from './procs.js';
import { round } from './stats.js';
import { scenarioOptions } from './cli.js';
import { EVENT_NAMES, PLANS, SOURCES } from './scenarios.js';

export const SEGMENT_USAGE = `usage: npm run bench -- --scenario segment [options]

  --events 100000     track calls in all
  --clients 4         Analytics clients (one workspace each, so several actors work)
  --flush-at 100      messages per request (the client's flushAt)
  --in-flight 5000    unacknowledged calls per client at most
  --people 10000      distinct userIds per workspace
  --out bench/results where the JSON result goes`;

interface SegmentOptions {
  events: number;
  clients: number;
  flushAt: number;
  inFlight: number;
  people: number;
  out: string;
}

function options(argv: string[]): SegmentOptions {
  const { values, int } = scenarioOptions(argv, SEGMENT_USAGE, { events: '100000', clients: '4', 'flush-at': '100', 'in-flight': '5000', people: '10000' });
  return {
    events: int('events', values.events, 1, 100_000_000),
    clients: int('clients', values.clients, 1, 64),
    flushAt: int('flush-at', values['flush-at'], 1, 1000),
    inFlight: int('in-flight', values['in-flight'], 1, 1_000_000),
    people: int('people', values.people, 1, 100_000_000),
    out: values.out,
  };
}

interface ClientRun {
  acknowledged: number;
  requests: number;
  failed: number;
  statuses: Record<string, number>;
}

/** Sends `n` tracks through one client, at most `inFlight` unacknowledged; resolves once all are acknowledged (or failed). */
async function drive(analytics: Analytics, n: number, inFlight: number, people: number): Promise<ClientRun> {
  const run: ClientRun = { acknowledged: 0, requests: 0, failed: 0, statuses: {} };
  let waiting: (() => void) | null = null;
  analytics.on('http_response', (r) => {
    run.requests++;
    run.statuses[r.status] = (run.statuses[r.status] ?? 0) + 1;
  });
  const settled = () => {
    const w = waiting;
    waiting = null;
    w?.();
  };
  let seq = 0;
  for (let sent = 0; sent < n; sent++) {
    while (sent - run.acknowledged - run.failed >= inFlight) await new Promise<void>((r) => (waiting = r));
    analytics.track(
      {
        userId: `p-${Math.floor(Math.random() * people)}`,
        event: EVENT_NAMES[seq % EVENT_NAMES.length]!,
        properties: { source: SOURCES[seq % SOURCES.length], plan: PLANS[seq % PLANS.length], amount: (seq % 10_000) / 100, seq: seq++ },
      },
      (err) => {
        if (err) run.failed++;
        else run.acknowledged++;
        settled();
      },
    );
  }
  await analytics.closeAndFlush({ timeout: 600_000 });
  return run;
}

export async function segment(argv: string[]): Promise<number> {
  const opt = options(argv);
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench segment ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  let herald: HeraldProc | undefined;
  const { dataDir, cleanup } = guardRun(1_800_000 + opt.events * 2, log, async () => {
    if (herald) await stopChild(herald.child, 30_000);
  });
  try {
    const secret = randomBytes(24).toString('hex');
    herald = await startBenchHerald(dataDir, secret);
    log(`Herald is up at ${herald.base}`);
    const workspaces = await setupWorkspaces(herald.base, secret, opt.clients);
    const perClient = Math.ceil(opt.events / opt.clients);
    const clients = workspaces.map((w) => new Analytics({ writeKey: w.key, host: herald!.base, flushAt: opt.flushAt, flushInterval: 50, maxRetries: 3 }));
    const sampler = new Sampler(herald.pid, process.env.DATABASE_URL ? null : join(dataDir, 'pg'));
    sampler.mark('start');
    const t0 = performance.now();
    const runs = await Promise.all(clients.map((c) => drive(c, perClient, opt.inFlight, opt.people)));
    const seconds = (performance.now() - t0) / 1000;
    sampler.mark('end');
    sampler.stop();
    const acknowledged = runs.reduce((a, r) => a + r.acknowledged, 0);
    const requests = runs.reduce((a, r) => a + r.requests, 0);
    const failed = runs.reduce((a, r) => a + r.failed, 0);
    const statuses: Record<string, number> = {};
    for (const r of runs) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;

    const db = new pg.Client({ connectionString: databaseUrl(dataDir) });
    await db.connect();
    const ids = workspaces.map((w) => w.id);
    const count = async () => Number((await db.query('SELECT count(*) AS n FROM events WHERE workspace_id = ANY($1::uuid[])', [ids])).rows[0].n);
    // On JetStream the sink stores shortly after the acknowledgement.
    let stored = await count();
    for (const until = Date.now() + 10_000; stored < perClient * opt.clients && Date.now() < until; stored = await count()) await new Promise((r) => setTimeout(r, 200));
    await db.end();

    const a = sampler.marks.start!;
    const b = sampler.marks.end!;
    const heraldCpu = b.cpu_s - a.cpu_s;
    const pgCpu = a.pg_cpu_s !== undefined && b.pg_cpu_s !== undefined ? b.pg_cpu_s - a.pg_cpu_s : null;
    const result = {
      scenario: 'segment',
      started_at: startedAt.toISOString(),
      options: opt,
      events_sent: perClient * opt.clients,
      acknowledged,
      failed,
      stored,
      requests,
      statuses,
      seconds: round(seconds, 3),
      events_per_s: round(acknowledged / seconds),
      requests_per_s: round(requests / seconds, 2),
      cpu_s_per_1000_events: { herald: round((heraldCpu / Math.max(1, acknowledged)) * 1000, 4), postgres: pgCpu === null ? null : round((pgCpu / Math.max(1, acknowledged)) * 1000, 4) },
      machine: { cpus: availableParallelism(), loadavg: loadavg() },
    };
    mkdirSync(resolve(opt.out), { recursive: true });
    const file = join(resolve(opt.out), `segment-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    const ok = failed === 0 && stored === result.events_sent && Object.keys(statuses).every((s) => s.startsWith('2'));
    process.stdout.write(
      [
        '',
        `scenario segment: @segment/analytics-node, ${opt.clients} clients × ${perClient} tracks, flushAt ${opt.flushAt}`,
        `${result.events_per_s.toLocaleString('en-US')} events/s, ${result.requests_per_s} requests/s over ${result.seconds} s; statuses ${JSON.stringify(statuses)}`,
        `stored ${stored} of ${result.events_sent} (${failed} failed in the client)${ok ? '' : ': NOT every event stored once'}`,
        `CPU per 1,000 events: Herald ${result.cpu_s_per_1000_events.herald} s, PostgreSQL ${result.cpu_s_per_1000_events.postgres ?? '-'} s`,
        `JSON: ${file}`,
        '',
      ].join('\n'),
    );
    return ok ? 0 : 1;
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? err}`);
    return 1;
  } finally {
    await cleanup();
  }
}

// `npm run bench -- --scenario funnel [--seed-events 10000000] [--people 100000] [--repeats 5]`:
// a 30-day funnel of 3 events (issue 40) over `--seed-events` stored events, through
// `POST /workspaces/{id}/analytics/funnel`. Targets: at most 2 s on the embedded default, at
// most 300 ms with ClickHouse (CLICKHOUSE_URL, with NATS_URL). See bench/README.md.
//
// Setup is not timed: Herald, one workspace, the reads scenario's seed (bench/seed-events.ts)
// into its PostgreSQL and, with ClickHouse, the same rows copied into ClickHouse's
// analytics_events (what the sink would have written). Then the funnel is asked `--repeats`
// times, one after the other; reported: each time, the median and the best. Checked: every
// answer 200, and Herald's answer equal to the store's own reading of the same question
// (store/analytics.ts straight on PostgreSQL): with ClickHouse that is both stores agreeing.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createClient } from '@clickhouse/client';
import { call, databaseUrl, guardRun, setupWorkspaces, startBenchHerald, stopChild, type HeraldProc } from './procs.js';
import { round } from './stats.js';
import { scenarioOptions } from './cli.js';
import { EVENT_NAMES } from './scenarios.js';
import { seedEvents } from './seed-events.js';
import { removePrefix, runPrefix } from './nats-prefix.js';
import { funnelQuery } from '../src/store/analytics.js';
import { dayRange, windowMs } from '../src/domain/analytics.js';

export const FUNNEL_USAGE = `usage: npm run bench -- --scenario funnel [options]

  --seed-events 10000000  events stored before the funnel is asked (not timed), over the
                          last 30 days and the bench event names (--seed-events of reads)
  --people 100000         distinct people of the workspace
  --repeats 5             times the funnel is asked, one after the other
  --out bench/results     where the JSON result goes`;

/** The funnel asked: three of the seeded names, the 30 days, a 7-day window. */
const STEPS = [EVENT_NAMES[4]!, EVENT_NAMES[1]!, EVENT_NAMES[2]!];
const WINDOW = '7d';
/** Rows copied to ClickHouse per insert. */
const COPY_CHUNK = 200_000;

function options(argv: string[]) {
  const { values, int } = scenarioOptions(argv, FUNNEL_USAGE, { 'seed-events': '10000000', people: '100000', repeats: '5' });
  return {
    seedEvents: int('seed-events', values['seed-events'], 1, 100_000_000),
    people: int('people', values.people, 1, 100_000_000),
    repeats: int('repeats', values.repeats, 1, 1000),
    out: values.out,
  };
}

/** Copies the workspace's seeded events into ClickHouse's analytics_events, as the sink writes them. */
async function copyToClickHouse(db: pg.Client, url: string, workspaceId: string, log: (msg: string) => void): Promise<number> {
  const ch = createClient({ url, request_timeout: 600_000 });
  let copied = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  try {
    for (;;) {
      const { rows } = await db.query<{ id: string; person_id: string; type: string; ms: string }>(
        `SELECT id, person_id, type, (extract(epoch FROM created_at) * 1000)::bigint AS ms FROM events WHERE workspace_id = $1 AND id > $2 ORDER BY id LIMIT ${COPY_CHUNK}`,
        [workspaceId, after],
      );
      if (rows.length === 0) return copied;
      const values = rows.map((r) => ({ id: r.id, workspace_id: workspaceId, person_id: r.person_id, external_id: '', type: r.type, parameters: '{}', created_at: Math.floor(Number(r.ms) / 1000), created_ms: Number(r.ms) }));
      await ch.insert({ table: 'analytics_events', values, format: 'JSONEachRow' });
      copied += rows.length;
      after = rows[rows.length - 1]!.id;
      log(`copied ${copied} events to ClickHouse`);
    }
  } finally {
    await ch.close();
  }
}

export async function funnel(argv: string[]): Promise<number> {
  const opt = options(argv);
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench funnel ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  const clickhouse = process.env.CLICKHOUSE_URL;
  // On JetStream, streams of this run's own, removed afterwards (as the other scenarios do).
  const natsPrefix = process.env.NATS_URL && !process.env.HERALD_NATS_PREFIX ? runPrefix() : undefined;
  let herald: HeraldProc | undefined;
  const { dataDir, cleanup } = guardRun(3_600_000 + opt.seedEvents / 5, log, async () => {
    if (herald) await stopChild(herald.child, 30_000);
    if (natsPrefix) await removePrefix(process.env.NATS_URL!, natsPrefix).catch((err: Error) => log(`could not remove the JetStream streams of prefix ${natsPrefix}: ${err.message}`));
  });
  try {
    const secret = randomBytes(24).toString('hex');
    herald = await startBenchHerald(dataDir, secret, natsPrefix ? { HERALD_NATS_PREFIX: natsPrefix } : {});
    log(`Herald is up at ${herald.base}${clickhouse ? ' (ClickHouse)' : ' (PostgreSQL)'}`);
    const [ws] = await setupWorkspaces(herald.base, secret, 1);
    const seed = await seedEvents(databaseUrl(dataDir), [ws!.id], opt.people, opt.seedEvents, log);
    const db = new pg.Client({ connectionString: databaseUrl(dataDir) });
    await db.connect();
    const copied = clickhouse ? await copyToClickHouse(db, clickhouse, ws!.id, log) : null;

    const to = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    const body = { steps: STEPS, from, to, window: WINDOW };
    const ms: number[] = [];
    const answers: unknown[] = [];
    for (let i = 0; i < opt.repeats; i++) {
      const t0 = performance.now();
      const r = await call(herald.base, 'POST', `/api/v1/workspaces/${ws!.id}/analytics/funnel`, ws!.key, body);
      ms.push(performance.now() - t0);
      if (r.status !== 200) throw new Error(`the funnel answered ${r.status}: ${JSON.stringify(r.body)}`);
      answers.push((r.body as { steps: { people: number }[] }).steps.map((s) => s.people));
    }
    const q = funnelQuery(ws!.id, { steps: STEPS, range: dayRange(from, to), window: WINDOW, windowMs: windowMs(WINDOW) });
    const expected = (await db.query<{ people: string[] }>(q.text, q.values)).rows[0]!.people.map(Number);
    await db.end();
    const agree = answers.every((a) => JSON.stringify(a) === JSON.stringify(expected));

    const sorted = [...ms].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    const targetMs = clickhouse ? 300 : 2000;
    const result = {
      scenario: 'funnel',
      started_at: startedAt.toISOString(),
      options: opt,
      store: clickhouse ? 'clickhouse' : 'postgresql',
      seed,
      copied_to_clickhouse: copied,
      funnel: body,
      people_per_step: expected,
      answers_agree: agree,
      ms: ms.map((x) => round(x, 1)),
      median_ms: round(median, 1),
      best_ms: round(sorted[0]!, 1),
      target_ms: targetMs,
      machine: { cpus: availableParallelism(), loadavg: loadavg() },
    };
    mkdirSync(resolve(opt.out), { recursive: true });
    const file = join(resolve(opt.out), `funnel-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    process.stdout.write(
      [
        '',
        `scenario funnel: ${STEPS.join(' → ')} within ${WINDOW}, ${from} to ${to}, over ${opt.seedEvents.toLocaleString('en-US')} events (${result.store})`,
        `people per step ${JSON.stringify(expected)}; Herald's answers ${agree ? 'equal' : 'DIFFER FROM'} the store's own reading`,
        `median ${result.median_ms} ms, best ${result.best_ms} ms over ${opt.repeats} (target ≤ ${targetMs} ms: ${median <= targetMs ? 'met' : 'NOT met'})`,
        `JSON: ${file}`,
        '',
      ].join('\n'),
    );
    return agree ? 0 : 1;
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? err}`);
    return 1;
  } finally {
    await cleanup();
  }
}

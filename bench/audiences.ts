// `npm run bench -- --scenario audiences [--people 1000000] [--events 3000000] [--import-rows 1000000]`:
// the audience targets (issue 38; docs/audiences.md) on the embedded default, in one run:
//
// 1. a segment over `--people` people (`bench_purchase` ≥ 3 times in 30 days and `traits.plan`
//    = pro) computed from scratch: the time from its creation to `ready`, and Herald's and
//    PostgreSQL's CPU meanwhile. The people and `--events` events are seeded straight into
//    PostgreSQL first (bench/seed-events.ts, not timed), each person given a plan;
// 2. its count read `--count-reads` times one after another through the route: the latency
//    of each (kept, not counted on read);
// 3. a CSV import of `--import-rows` rows of 8 columns into a list, streamed to the route as it is
//    generated: the time from the first byte sent to the import's `done`, and Herald's RSS growth
//    (largest sample during the import less the sample before it).
//
// The /track figure with 20 live segments is the track scenario's `--segments 20` against a run
// without (bench/README.md). Setup is not timed. Exit 1 when a step fails or the import's rows
// are not all added.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { call, databaseUrl, guardRun, Sampler, sessionToken, setupWorkspaces, startBenchHerald, stopChild, type HeraldProc } from './procs.js';
import { seedEvents } from './seed-events.js';
import { round } from './stats.js';
import { scenarioOptions } from './cli.js';
import { EVENT_NAMES, PLANS, type BenchWorkspace } from './scenarios.js';

export const AUDIENCES_USAGE = `usage: npm run bench -- --scenario audiences [options]

  --people 1000000      people seeded in the one workspace
  --events 3000000      events seeded over them (the bench event names, the last 30 days)
  --count-reads 200     reads of the segment's count, one after another
  --import-rows 1000000 rows of the CSV imported into a list (8 columns)
  --out bench/results   where the JSON result goes`;

interface AudiencesOptions {
  people: number;
  events: number;
  countReads: number;
  importRows: number;
  out: string;
}

function options(argv: string[]): AudiencesOptions {
  const { values, int } = scenarioOptions(argv, AUDIENCES_USAGE, { people: '1000000', events: '3000000', 'count-reads': '200', 'import-rows': '1000000' });
  return {
    people: int('people', values.people, 1, 100_000_000),
    events: int('events', values.events, 0, 1_000_000_000),
    countReads: int('count-reads', values['count-reads'], 1, 100_000),
    importRows: int('import-rows', values['import-rows'], 1, 1_000_000),
    out: values.out,
  };
}

/** The segment the issue names: an event count in a window and a trait. */
const CONDITIONS = { all: [{ event: { name: 'bench_purchase', count: { op: 'gte', value: 3 }, within: '30d' } }, { field: 'traits.plan', operator: 'eq', value: 'pro' }] };

/**
 * `--segments N` of the track scenarios: N segments per workspace, live before the load (each
 * tracked event evaluates its person for every one), of the shapes campaign senders save: event
 * counts in a window and overall, traits, reachability, and groups of them.
 */
export async function setupSegments(base: string, token: string, workspaces: BenchWorkspace[], n: number): Promise<void> {
  const shape = (i: number) => {
    const event = EVENT_NAMES[i % EVENT_NAMES.length]!;
    const plan = PLANS[i % PLANS.length]!;
    switch (i % 4) {
      case 0:
        return { all: [{ event: { name: event, count: { op: 'gte', value: 1 + (i % 3) }, within: '30d' } }] };
      case 1:
        return { all: [{ field: 'traits.plan', operator: 'eq', value: plan }, { event: { name: event, count: { op: 'gte', value: 2 } } }] };
      case 2:
        return { any: [{ has_channel: 'email' }, { field: 'traits.plan', operator: 'eq', value: plan }] };
      default:
        return { all: [{ event: { name: event, count: { op: 'lt', value: 5 }, within: '7d' } }, { any: [{ field: 'traits.beta', operator: 'eq', value: true }, { has_channel: 'push' }] }] };
    }
  };
  for (const ws of workspaces) {
    for (let i = 0; i < n; i++) {
      const r = await call(base, 'POST', `/api/v1/workspaces/${ws.id}/segments`, token, { name: `bench ${i}`, conditions: shape(i) });
      if (r.status !== 201) throw new Error(`creating a segment answered ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    }
  }
}

/** The CSV's rows, generated a chunk at a time: 8 columns, a header, then `rows` people. */
function* csvChunks(rows: number): Generator<string> {
  yield 'external_id,email,first_name,last_name,plan,city,age,signed_up\n';
  const CHUNK = 5_000;
  for (let lo = 0; lo < rows; lo += CHUNK) {
    let s = '';
    for (let i = lo; i < Math.min(rows, lo + CHUNK); i++) s += `imp-${i},imp-${i}@bench.example.com,First${i},Last${i},${PLANS[i % PLANS.length]},City ${i % 500},${18 + (i % 60)},2026-0${1 + (i % 9)}-1${i % 10}\n`;
    yield s;
  }
}

/** Streams the CSV to the import route, honouring back-pressure; answers the import id. */
function postCsv(base: string, path: string, token: string, rows: number): Promise<string> {
  return new Promise((resolvePost, reject) => {
    const req = request(new URL(path, base), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        if (res.statusCode !== 202) return reject(new Error(`the import answered ${res.statusCode}: ${body.slice(0, 300)}`));
        resolvePost((JSON.parse(body) as { import_id: string }).import_id);
      });
    });
    req.on('error', reject);
    const chunks = csvChunks(rows);
    const pump = () => {
      for (let next = chunks.next(); !next.done; next = chunks.next()) if (!req.write(next.value)) return void req.once('drain', pump);
      req.end();
    };
    pump();
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The p-th percentile of sorted values (nearest rank). */
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export async function audiences(argv: string[]): Promise<number> {
  const opt = options(argv);
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench audiences ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  let herald: HeraldProc | undefined;
  const { dataDir, cleanup } = guardRun(3_600_000, log, async () => {
    if (herald) await stopChild(herald.child, 30_000);
  });
  try {
    const secret = randomBytes(24).toString('hex');
    herald = await startBenchHerald(dataDir, secret, { HERALD_IMPORT_MAX_ROWS: String(opt.importRows) });
    const base = herald.base;
    log(`Herald is up at ${base}`);
    const [ws] = await setupWorkspaces(base, secret, 1);
    const token = await sessionToken(secret, 'herald-bench');
    const api = (method: string, path: string, body?: unknown) => call(base, method, `/api/v1/workspaces/${ws!.id}${path}`, token, body);

    const seeded = await seedEvents(databaseUrl(dataDir), [ws!.id], opt.people, opt.events, log);
    const db = new pg.Client({ connectionString: databaseUrl(dataDir) });
    await db.connect();
    await db.query(`UPDATE people SET traits = jsonb_build_object('plan', ($2::text[])[1 + abs(hashtext(external_id)) % cardinality($2::text[])]) WHERE workspace_id = $1`, [ws!.id, PLANS]);
    await db.query('VACUUM (ANALYZE) people');
    log('seeded; each person has a plan');

    // 1. The segment computed from scratch.
    const sampler = new Sampler(herald.pid, join(dataDir, 'pg'));
    sampler.mark('segment-start');
    const t0 = performance.now();
    const created = await api('POST', '/segments', { name: 'Pro buyers', conditions: CONDITIONS });
    const segmentId = created.body?.data?.segment?.id as string | undefined;
    if (created.status !== 201 || !segmentId) throw new Error(`creating the segment answered ${created.status}: ${JSON.stringify(created.body).slice(0, 300)}`);
    let segment: { status: string; count: number } | undefined;
    for (;;) {
      segment = (await api('GET', `/segments/${segmentId}`)).body?.data?.segment;
      if (segment?.status === 'ready' || segment?.status === 'failed') break;
      await sleep(100);
    }
    const computeSeconds = (performance.now() - t0) / 1000;
    sampler.mark('segment-end');
    if (segment.status !== 'ready') throw new Error('the segment computation failed');
    const expected = Number((await db.query(
      `SELECT count(*) AS n FROM people p WHERE p.workspace_id = $1 AND p.traits->>'plan' = 'pro'
         AND (SELECT count(*) FROM events e WHERE e.person_id = p.id AND e.type = 'bench_purchase' AND e.created_at > now() - interval '30 days') >= 3`,
      [ws!.id],
    )).rows[0].n);
    log(`segment ready in ${round(computeSeconds, 1)} s: ${segment.count} members (the store says ${expected})`);

    // 2. Its count, read one after another.
    const latencies: number[] = [];
    for (let i = 0; i < opt.countReads; i++) {
      const t = performance.now();
      const r = await api('GET', `/segments/${segmentId}`);
      latencies.push(performance.now() - t);
      if (r.status !== 200) throw new Error(`reading the segment answered ${r.status}`);
    }

    // 3. The CSV import.
    const list = await api('POST', '/lists', { name: 'Imported' });
    const listId = list.body?.data?.list?.id as string | undefined;
    if (list.status !== 201 || !listId) throw new Error(`creating the list answered ${list.status}`);
    sampler.mark('import-start');
    const t1 = performance.now();
    const importId = await postCsv(base, `/api/v1/workspaces/${ws!.id}/lists/${listId}/import`, token, opt.importRows);
    let imported: { status: string; rows_added: number; rows_failed: number; error: string | null } | undefined;
    for (;;) {
      imported = (await api('GET', `/imports/${importId}`)).body;
      if (imported && imported.status !== 'waiting' && imported.status !== 'running') break;
      await sleep(250);
    }
    const importSeconds = (performance.now() - t1) / 1000;
    sampler.mark('import-end');
    sampler.stop();
    await db.end();

    const cpu = (from: string, to: string) => {
      const a = sampler.marks[from]!;
      const b = sampler.marks[to]!;
      return { herald: round(b.cpu_s - a.cpu_s, 2), postgres: a.pg_cpu_s !== undefined && b.pg_cpu_s !== undefined ? round(b.pg_cpu_s - a.pg_cpu_s, 2) : null };
    };
    const rssBefore = sampler.marks['import-start']!.rss_mb;
    const rssGrowth = round((sampler.maxRss('import-start', 'import-end') ?? rssBefore) - rssBefore, 1);
    const sorted = [...latencies].sort((a, b) => a - b);
    const result = {
      scenario: 'audiences',
      started_at: startedAt.toISOString(),
      options: opt,
      seeded,
      segment: { seconds: round(computeSeconds, 2), members: segment.count, members_in_store: expected, cpu_s: cpu('segment-start', 'segment-end') },
      count_read_ms: { p50: round(percentile(sorted, 50), 2), p99: round(percentile(sorted, 99), 2), max: round(sorted[sorted.length - 1]!, 2) },
      import: { rows: opt.importRows, seconds: round(importSeconds, 2), status: imported.status, rows_added: imported.rows_added, rows_failed: imported.rows_failed, error: imported.error, rss_before_mb: rssBefore, rss_growth_mb: rssGrowth, cpu_s: cpu('import-start', 'import-end') },
      machine: { cpus: availableParallelism(), loadavg: loadavg() },
    };
    mkdirSync(resolve(opt.out), { recursive: true });
    const file = join(resolve(opt.out), `audiences-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    const ok = segment.count === expected && imported.status === 'done' && imported.rows_added === opt.importRows;
    process.stdout.write(
      [
        '',
        `scenario audiences: ${opt.people.toLocaleString('en-US')} people, ${opt.events.toLocaleString('en-US')} events seeded`,
        `segment from scratch: ${result.segment.seconds} s (target ≤ 60 s), ${segment.count} members${segment.count === expected ? '' : ` but the store says ${expected}`}; CPU Herald ${result.segment.cpu_s.herald} s, PostgreSQL ${result.segment.cpu_s.postgres ?? '-'} s`,
        `count read: p50 ${result.count_read_ms.p50} ms, p99 ${result.count_read_ms.p99} ms (target ≤ 50 ms)`,
        `CSV import of ${opt.importRows.toLocaleString('en-US')} rows: ${result.import.seconds} s (target ≤ 90 s), ${imported.status}, ${imported.rows_added} added, ${imported.rows_failed} failed; Herald RSS +${rssGrowth} MB from ${rssBefore} MB (target ≤ 100 MB)`,
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

// `npm run bench -- --scenario store-floor [--batch 100] [--connections 4] [--duration 10s]`:
// how many events a second the embedded PostgreSQL itself takes, with nothing of Herald in
// the path. Clients on the same cores send batches of event records, as Herald's Log sends
// them, as three statements in turn:
//   apply   the statement Herald runs (eventlog/apply-events.ts): events, per-person counts,
//           the embedded analytics copy, people found by id;
//   events  a plain INSERT into `events` (its primary key, two indexes and foreign key);
//   heap    a plain INSERT into a table like `events` with no index and no key.
// Each reports events/s and PostgreSQL's CPU per event. The ingest targets of issue 12 are
// read against these: Herald cannot store events faster than its store takes them.
//
// Setup is not timed: a Herald in a fresh data dir creates the database and the workspaces,
// and the people are inserted straight into PostgreSQL (generate_series). Herald stays idle.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { databaseUrl, killAllNow, samplePostgres, setupWorkspaces, startBenchHerald, stopChild, type HeraldProc } from './procs.js';
import { EVENT_NAMES, PLANS, SOURCES } from './scenarios.js';
import { scenarioOptions } from './cli.js';
import { round } from './stats.js';
import { applyEvents } from '../src/eventlog/apply-events.js';
import { newId } from '../src/ids.js';

export const STORE_FLOOR_USAGE = `usage: npm run bench -- --scenario store-floor [options]

  --batch 100         event records per statement (track-batch sends 100 a request)
  --connections 4     clients sending statements at once, one in flight each
  --duration 10s      measured per statement (after 2 s of warm-up)
  --workspaces 8      workspaces the records spread over
  --people 1000       people per workspace, all known (the records name them by id)
  --out bench/results where the JSON result goes`;

const COLUMNS = 'id uuid, workspace_id uuid, person_id uuid, type text, parameters jsonb, created_at timestamptz';
const insertInto = (table: string) =>
  `INSERT INTO ${table} (id, workspace_id, person_id, type, parameters, created_at)
   SELECT id, workspace_id, person_id, type, parameters, created_at FROM jsonb_to_recordset($1::text::jsonb) AS r(${COLUMNS})`;
const HEAP_TABLE = 'bench_store_floor_heap';

const STATEMENTS: { name: string; sql: string }[] = [
  { name: 'apply', sql: applyEvents(true).text },
  { name: 'events', sql: insertInto('events') },
  { name: 'heap', sql: insertInto(HEAP_TABLE) },
];

interface Person {
  id: string;
  workspace_id: string;
  external_id: string;
}

const pick = <T>(xs: T[]): T => xs[Math.floor(Math.random() * xs.length)]!;

/** A batch of records as the Log writes them (eventlog/event-log.ts), naming known people. */
function batchJson(people: Person[], n: number): string {
  const now = new Date().toISOString();
  return JSON.stringify(
    Array.from({ length: n }, (_, seq) => {
      const p = pick(people);
      const parameters = { source: pick(SOURCES), plan: pick(PLANS), amount: Math.floor(Math.random() * 10_000) / 100, screen: `screen-${Math.floor(Math.random() * 50)}`, seq };
      return { id: newId(), workspace_id: p.workspace_id, person_id: p.id, external_id: p.external_id, type: pick(EVENT_NAMES), parameters, created_at: now, new_person_id: null };
    }),
  );
}

interface Measured {
  statement: string;
  events_per_s: number;
  statements_per_s: number;
  /** PostgreSQL's CPU (every process of the cluster) per event stored. */
  pg_us_per_event: number | null;
  pg_cores: number | null;
  /** This process's CPU (building the records, the client protocol) per event. */
  client_us_per_event: number;
}

/** Runs `sql` from every client until `ms` is over; returns the events stored. */
async function drive(clients: pg.Client[], name: string, sql: string, people: Person[], batch: number, ms: number): Promise<number> {
  const until = Date.now() + ms;
  let events = 0;
  await Promise.all(
    clients.map(async (c) => {
      while (Date.now() < until) {
        await c.query({ name: `store-floor-${name}`, text: sql, values: [batchJson(people, batch)] });
        events += batch;
      }
    }),
  );
  return events;
}

const fmt = (n: number | null | undefined, digits = 0) => (n === null || n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

export async function storeFloor(argv: string[]): Promise<number> {
  const { values, int, dur } = scenarioOptions(argv, STORE_FLOOR_USAGE, { batch: '100', connections: '4', duration: '10s', workspaces: '8', people: '1000' });
  const opt = {
    batch: int('batch', values.batch, 1, 10_000),
    connections: int('connections', values.connections, 1, 64),
    durationMs: dur('duration', values.duration, 1000, 600_000),
    workspaces: int('workspaces', values.workspaces, 1, 100),
    people: int('people', values.people, 1, 1_000_000),
  };
  if (process.env.DATABASE_URL) {
    process.stderr.write('bench: store-floor measures the embedded PostgreSQL (its CPU is read from /proc); unset DATABASE_URL\n');
    return 2;
  }
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  const dataDir = mkdtempSync(join(tmpdir(), 'herald-bench-'));
  let herald: HeraldProc | undefined;
  const clients: pg.Client[] = [];
  try {
    const secret = randomBytes(24).toString('hex');
    herald = await startBenchHerald(dataDir, secret, { HERALD_LOG_LEVEL: 'warn' });
    const workspaces = await setupWorkspaces(herald.base, secret, opt.workspaces);
    const url = databaseUrl(dataDir);
    const pgDir = join(dataDir, 'pg');
    for (let i = 0; i < opt.connections; i++) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      clients.push(c);
    }
    const admin = clients[0]!;
    await admin.query(
      `INSERT INTO people (id, workspace_id, external_id) SELECT gen_random_uuid(), w, 'p-' || i FROM unnest($1::uuid[]) AS w, generate_series(0, $2 - 1) AS i`,
      [workspaces.map((w) => w.id), opt.people],
    );
    await admin.query(`CREATE TABLE ${HEAP_TABLE} (LIKE events INCLUDING DEFAULTS)`);
    await admin.query('ANALYZE people');
    const people = (await admin.query<Person>('SELECT id::text, workspace_id::text, external_id FROM people')).rows;
    log(`Herald's database in ${dataDir}: ${opt.workspaces} workspaces × ${fmt(opt.people)} people; ${opt.connections} clients, ${opt.batch} records a statement`);

    const results: Measured[] = [];
    const loadAt: Record<string, number> = { start: round(loadavg()[0]!, 2) };
    for (const s of STATEMENTS) {
      await drive(clients, s.name, s.sql, people, opt.batch, 2000);
      const pg0 = samplePostgres(pgDir)?.cpu_s ?? null;
      const cpu0 = process.cpuUsage();
      const t0 = Date.now();
      const events = await drive(clients, s.name, s.sql, people, opt.batch, opt.durationMs);
      const secs = (Date.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const pg1 = samplePostgres(pgDir)?.cpu_s ?? null;
      const pgS = pg0 === null || pg1 === null ? null : pg1 - pg0;
      results.push({
        statement: s.name,
        events_per_s: Math.round(events / secs),
        statements_per_s: round(events / opt.batch / secs, 1),
        pg_us_per_event: pgS === null ? null : round((pgS * 1e6) / events, 1),
        pg_cores: pgS === null ? null : round(pgS / secs, 2),
        client_us_per_event: round((cpu.user + cpu.system) / events, 1),
      });
      loadAt[`after_${s.name}`] = round(loadavg()[0]!, 2);
      log(`${s.name}: ${fmt(results.at(-1)!.events_per_s)} events/s`);
    }
    await admin.query(`DROP TABLE ${HEAP_TABLE}`);

    const lines = [
      '',
      `scenario store-floor: the embedded PostgreSQL alone, ${opt.connections} clients, ${opt.batch} records a statement, ${opt.durationMs / 1000} s each; 2 s warm-up; clients on the same ${availableParallelism()} CPUs`,
      'statement  events/s  statements/s  PostgreSQL µs an event  PostgreSQL cores  client µs an event',
      '---------  --------  ------------  ----------------------  ----------------  ------------------',
      ...results.map((r) => `${r.statement.padEnd(9)}  ${fmt(r.events_per_s).padStart(8)}  ${fmt(r.statements_per_s, 1).padStart(12)}  ${fmt(r.pg_us_per_event, 1).padStart(22)}  ${fmt(r.pg_cores, 2).padStart(16)}  ${fmt(r.client_us_per_event, 1).padStart(18)}`),
      `1-min load average: ${Object.entries(loadAt).map(([k, v]) => `${k.replace('_', ' ')} ${fmt(v, 1)}`).join(', ')} (above ${availableParallelism()} means other work competed for the CPUs)`,
    ];
    mkdirSync(values.out, { recursive: true });
    const file = join(values.out, `store-floor-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify({ scenario: 'store-floor', started_at: startedAt.toISOString(), options: opt, results, loadavg: loadAt, machine: { cpus: cpus().length, model: cpus()[0]?.model } }, null, 2));
    process.stdout.write([...lines, `JSON: ${file}`, ''].join('\n'));
    return 0;
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
    if (herald) await stopChild(herald.child, 30_000).catch(() => {});
    killAllNow();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

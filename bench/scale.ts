// `npm run bench -- --scenario scale [--actors 1,2,4,8] [--runs track,track-batch,fanout]`: how
// Herald scales with the actors it is given. Each run is the bench's own scenario in a process of
// its own (a fresh Herald and embedded PostgreSQL each time, HERALD_ACTORS set), one after
// another, so the figures are the ones those scenarios report; this only sets them side by side
// and divides by the first actor count's. See bench/README.md ("Scaling with cores").
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { optionChecks } from './cli.js';
import { round } from './stats.js';

export const SCALE_USAGE = `usage: npm run bench -- --scenario scale [options]

  --actors 1,2,4,8    HERALD_ACTORS of each Herald started (on 2 cores the scale-up cannot show;
                      the group size, CPU per request and WAL per send still can)
  --runs R            which of track, track-batch, fanout (default all three), comma-separated
  --duration 10s      measured load of each track and track-batch run
  --workspaces 16     workspaces of the track runs (1,000 people each, 128 connections)
  --fanout-people N   the fan-out's audience (default 250000; sandbox provider, SQL-seeded)
  --fanout-actors A   the actor counts the fan-out runs at (default: --actors)`;

const RUNS = ['track', 'track-batch', 'fanout'] as const;
type Run = (typeof RUNS)[number];

interface Figures {
  /** track: requests/s; track-batch: events/s; fanout: seconds from send_at to the last send. */
  value: number | null;
  herald_cores: number | null;
  pg_cores: number | null;
  group_size: number | null;
  wal_records_per_send: number | null;
  sink_lag_ms: number | null;
}

/** Runs one scenario of the bench in a process of its own and returns its JSON result. */
function runOne(args: string[], actors: number): Promise<Record<string, unknown> | null> {
  const out = mkdtempSync(join(tmpdir(), 'herald-scale-'));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [process.argv[1]!, ...args, '--out', out], { env: { ...process.env, HERALD_ACTORS: String(actors) }, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('exit', (code) => {
      const file = readdirSync(out).find((f) => f.endsWith('.json'));
      const result = code === 0 && file ? (JSON.parse(readFileSync(join(out, file), 'utf8')) as Record<string, unknown>) : null;
      rmSync(out, { recursive: true, force: true });
      resolve(result);
    });
  });
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const at = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((x, k) => (x && typeof x === 'object' ? (x as Record<string, unknown>)[k] : undefined), o);

function figures(run: Run, r: Record<string, unknown> | null): Figures {
  if (!r) return { value: null, herald_cores: null, pg_cores: null, group_size: null, wal_records_per_send: null, sink_lag_ms: null };
  if (run === 'fanout') {
    const seconds = num(at(r, 'last_request_after_send_at_s'));
    const received = num(at(r, 'received'));
    const wal = num(at(r, 'wal', 'records'));
    const cpu = (k: string) => num(at(r, k, 'cpu_s'));
    const heraldCpu = cpu('herald');
    const pgCpu = cpu('postgres');
    return {
      value: seconds,
      herald_cores: heraldCpu !== null && seconds ? round(heraldCpu / seconds, 2) : null,
      pg_cores: pgCpu !== null && seconds ? round(pgCpu / seconds, 2) : null,
      group_size: num(at(r, 'metrics', 'log_group_mean')),
      wal_records_per_send: wal !== null && received ? round(wal / received, 1) : null,
      sink_lag_ms: null,
    };
  }
  return {
    value: num(at(r, 'herald', run === 'track' ? 'requests_per_s' : 'events_per_s')),
    herald_cores: num(at(r, 'herald', 'cpu', 'server_cores_used')),
    pg_cores: num(at(r, 'embedded_postgres', 'cores_used')),
    group_size: num(at(r, 'metrics', 'log_group_mean')),
    wal_records_per_send: null,
    sink_lag_ms: num(at(r, 'sink_lag', 'after_load_ms')),
  };
}

const show = (v: number | null, digits = 0) => (v === null ? '-' : v.toLocaleString('en-US', { maximumFractionDigits: digits }));

export async function scale(argv: string[]): Promise<number> {
  const { fail, int, dur } = optionChecks(SCALE_USAGE);
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string' },
      actors: { type: 'string', default: '1,2,4,8' },
      runs: { type: 'string', default: RUNS.join(',') },
      duration: { type: 'string', default: '10s' },
      workspaces: { type: 'string', default: '16' },
      'fanout-people': { type: 'string', default: '250000' },
      'fanout-actors': { type: 'string' },
    },
  });
  const counts = (v: string, name: string) => v.split(',').map((a) => int(name, a, 1, 64));
  const actors = counts(values.actors, 'actors');
  const fanoutActors = values['fanout-actors'] ? counts(values['fanout-actors'], 'fanout-actors') : actors;
  const runs = values.runs.split(',') as Run[];
  for (const r of runs) if (!RUNS.includes(r)) fail(`--runs: ${r} is not one of ${RUNS.join(', ')}`);
  const duration = `${dur('duration', values.duration, 1_000) / 1000}s`;
  const workspaces = String(int('workspaces', values.workspaces, 1, 1_000));
  const people = String(int('fanout-people', values['fanout-people'], 1, 10_000_000));

  const argsOf: Record<Run, string[]> = {
    track: ['--scenario', 'track', '--workspaces', workspaces, '--people', '1000', '--connections', '128', '--duration', duration],
    'track-batch': ['--scenario', 'track-batch', '--workspaces', workspaces, '--people', '1000', '--connections', '128', '--duration', duration],
    fanout: ['--scenario', 'fanout', '--people', people, '--provider', 'sandbox'],
  };
  const table: string[] = [];
  for (const run of runs) {
    const rows: { actors: number; f: Figures }[] = [];
    for (const n of run === 'fanout' ? fanoutActors : actors) {
      process.stderr.write(`scale: ${run} at ${n} actors\n`);
      rows.push({ actors: n, f: figures(run, await runOne(argsOf[run], n)) });
    }
    const base = rows[0]?.f.value ?? null;
    const unit = run === 'track' ? 'requests/s' : run === 'track-batch' ? 'events/s' : 's to the last send';
    table.push('', `${run} (${unit}):`, '| actors | figure | × first | Herald + PostgreSQL cores | Log group size | ' + (run === 'fanout' ? 'WAL records a send |' : 'sink lag after the load (ms) |'), '|---|---|---|---|---|---|');
    for (const { actors: n, f } of rows) {
      // A fan-out's figure is a time: its scale-up is the first time over this one.
      const ratio = base !== null && f.value ? (run === 'fanout' ? base / f.value : f.value / base) : null;
      table.push(`| ${n} | ${show(f.value, run === 'fanout' ? 2 : 0)} | ${ratio === null ? '-' : `${round(ratio, 2)}×`} | ${show(f.herald_cores, 2)} + ${show(f.pg_cores, 2)} | ${show(f.group_size, 1)} | ${show(run === 'fanout' ? f.wal_records_per_send : f.sink_lag_ms, 1)} |`);
    }
  }
  process.stdout.write(`\nscale: ${availableParallelism()} CPUs (${cpus()[0]?.model ?? 'unknown'}), one run each, the load generator on the same machine\n${table.join('\n')}\n`);
  return 0;
}

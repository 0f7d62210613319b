// What the bench entry points share in reading their options: refusing a bad one (exit 2 with
// the usage) and checking integers and durations, and the rate limits Herald is started with.
import { parseArgs } from 'node:util';
import { parseDuration } from './stats.js';

/** Rate limits no bench run reaches: the bench measures Herald, not its budgets. */
export const BENCH_LIMITS = ['ws-ingest', 'ws-devices', 'ws-reads', 'user-dashboard', 'ip-public', 'ip-webhooks', 'edge'].map((s) => `${s}=1000000000:1000000000`).join(',');

export interface OptionChecks {
  fail(msg: string): never;
  int(name: string, v: string | undefined, min: number, max: number): number;
  /** A duration (`10s`, `500ms`…) in milliseconds, within [min, max]. */
  dur(name: string, v: string, min?: number, max?: number): number;
}

export function optionChecks(usage: string): OptionChecks {
  const fail = (msg: string): never => {
    process.stderr.write(`bench: ${msg}\n\n${usage}\n`);
    process.exit(2);
  };
  return {
    fail,
    int(name, v, min, max) {
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) fail(`--${name} must be an integer from ${min} to ${max}`);
      return n;
    },
    dur(name, v, min = 0, max = Number.MAX_SAFE_INTEGER) {
      let ms = 0;
      try {
        ms = parseDuration(v);
      } catch (err) {
        fail(`--${name}: ${(err as Error).message}`);
      }
      if (ms < min || ms > max) fail(`--${name} must be between ${min / 1000} s and ${max / 1000} s`);
      return ms;
    },
  };
}

/**
 * A scenario's own options, each a string with its default (`--out` too, `bench/results`), read
 * from the command line; `--help` prints the usage and exits. With the checks that read them.
 */
export function scenarioOptions<K extends string>(argv: string[], usage: string, defaults: Record<K, string>): OptionChecks & { values: Record<K | 'out', string> } {
  const own = Object.fromEntries(Object.entries<string>(defaults).map(([k, d]) => [k, { type: 'string' as const, default: d }]));
  const { values } = parseArgs({
    args: argv,
    options: { ...own, scenario: { type: 'string' }, out: { type: 'string', default: 'bench/results' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write(usage + '\n');
    process.exit(0);
  }
  return { ...optionChecks(usage), values: values as Record<K | 'out', string> };
}

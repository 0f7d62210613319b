// Small helpers shared by the bench processes: a latency histogram (10 µs resolution up to
// 1 s, 1 ms beyond; autocannon's own rounds to whole milliseconds), durations, rounding.

// 10 µs buckets up to 1 s, then 1 ms buckets up to 61 s; slower responses land in `overflow`.
const FINE_US = 10;
const FINE = 100_000;
const COARSE_US = 1000;
const COARSE = 60_000;

export interface LatencySummary {
  count: number;
  mean_ms: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  p999_ms: number;
  max_ms: number;
}

export class LatencyHistogram {
  private readonly fine = new Uint32Array(FINE);
  private readonly coarse = new Uint32Array(COARSE);
  private overflow = 0;
  private count = 0;
  private sum = 0;
  private max = 0;

  record(ms: number): void {
    if (!(ms >= 0)) return;
    const us = ms * 1000;
    const f = Math.floor(us / FINE_US);
    if (f < FINE) this.fine[f]!++;
    else {
      const c = Math.floor((us - FINE * FINE_US) / COARSE_US);
      if (c < COARSE) this.coarse[c]!++;
      else this.overflow++;
    }
    this.count++;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }

  /** The upper edge of the bucket holding the p-th percentile (0 < p ≤ 100), in ms. */
  percentile(p: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (let b = 0; b < FINE; b++) {
      seen += this.fine[b]!;
      if (seen >= rank) return Math.min(((b + 1) * FINE_US) / 1000, this.max);
    }
    for (let b = 0; b < COARSE; b++) {
      seen += this.coarse[b]!;
      if (seen >= rank) return Math.min((FINE * FINE_US + (b + 1) * COARSE_US) / 1000, this.max);
    }
    return this.max;
  }

  summary(): LatencySummary {
    const r = (x: number) => Math.round(x * 1000) / 1000;
    return {
      count: this.count,
      mean_ms: r(this.count ? this.sum / this.count : 0),
      p50_ms: r(this.percentile(50)),
      p90_ms: r(this.percentile(90)),
      p99_ms: r(this.percentile(99)),
      p999_ms: r(this.percentile(99.9)),
      max_ms: r(this.max),
    };
  }
}

/** '10s', '500ms', '2m', or a bare number of seconds → milliseconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!m) throw new Error(`not a duration: '${text}' (use e.g. 10s, 500ms, 2m)`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  return Math.round(unit === 'ms' ? n : unit === 's' ? n * 1000 : n * 60_000);
}

export const round = (x: number, digits = 0): number => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

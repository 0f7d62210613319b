// Small helpers shared by the bench processes: a latency histogram with 10 µs resolution
// (autocannon's own histogram rounds to whole milliseconds), duration parsing, formatting.

const BUCKET_US = 10;
const BUCKETS = 100_000; // 10 µs × 100,000 = 1 s; slower responses land in `overflow`

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
  private readonly buckets = new Uint32Array(BUCKETS);
  private overflow = 0;
  private count = 0;
  private sum = 0;
  private max = 0;

  record(ms: number): void {
    if (!(ms >= 0)) return;
    const b = Math.floor((ms * 1000) / BUCKET_US);
    if (b < BUCKETS) this.buckets[b]!++;
    else this.overflow++;
    this.count++;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }

  /** The upper edge of the bucket holding the p-th percentile (0 < p ≤ 100), in ms. */
  percentile(p: number): number {
    if (this.count === 0) return 0;
    const rank = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (let b = 0; b < BUCKETS; b++) {
      seen += this.buckets[b]!;
      if (seen >= rank) return Math.min(((b + 1) * BUCKET_US) / 1000, this.max);
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

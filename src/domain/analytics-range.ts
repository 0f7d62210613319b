// The time range of a campaign's timeseries (docs/campaign-analytics.md): bounded, so a read
// answers at most 744 hourly or 366 daily buckets.
import { InvalidInput } from './errors.js';
import { normalizeTimestamp } from './time.js';

export type Bucket = 'hour' | 'day';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Bucket → its width and the most buckets a range may hold. */
const BUCKETS: Record<Bucket, { ms: number; max: number; dflt: number }> = {
  hour: { ms: HOUR, max: 744, dflt: 7 * 24 },
  day: { ms: DAY, max: 366, dflt: 30 },
};

/** [from, to) as ISO strings: `to` defaults to now, `from` to the bucket's default span before `to`. */
export function analyticsRange(bucket: Bucket, from: string | undefined, to: string | undefined, now: number): { from: string; to: string } {
  const b = BUCKETS[bucket];
  const end = to === undefined ? now : Date.parse(normalizeTimestamp(to, 'to'));
  const start = from === undefined ? end - b.dflt * b.ms : Date.parse(normalizeTimestamp(from, 'from'));
  if (end <= start) throw new InvalidInput('to must be after from', [{ field: 'to', message: 'must be after from' }]);
  if (end - start > b.max * b.ms) {
    throw new InvalidInput(`The range may span at most ${b.max} ${bucket}s`, [{ field: 'from', message: `must be at most ${b.max} ${bucket}s before to` }]);
  }
  return { from: new Date(start).toISOString(), to: new Date(end).toISOString() };
}

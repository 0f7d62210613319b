// Workspace analytics (docs/analytics.md): what a daily-count or funnel question is, checked,
// and the shape of its answer. Both analytics stores (PostgreSQL's events on the embedded
// default, ClickHouse in production) answer the same question with the same rules, stated here
// once: days are UTC days, times are compared in milliseconds, and a funnel follows each
// person's first step-1 event in the range.
import { InvalidInput } from './errors.js';
import { windowSeconds } from './segments.js';

/** The standard events the interface recognizes for analytics (README, Analytics). */
export const STANDARD_EVENTS = ['signed_up', 'logged_in', 'logged_out', 'purchase_completed', 'subscription_started', 'subscription_cancelled'] as const;

/** The longest date range a question may cover, in days (a leap year). */
const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;
/** The longest funnel window. */
const MAX_WINDOW_MS = 90 * DAY_MS;
/** The last day a timestamp may name (domain/time.ts): 2106-02-07. */
const LAST_DAY_MS = Date.UTC(2106, 1, 7);

/** A range of whole UTC days: [fromMs, toMs), `to` inclusive as the caller named it. */
export interface DayRange {
  from: string;
  to: string;
  fromMs: number;
  toMs: number;
}

export interface DailyQuestion {
  event: string;
  range: DayRange;
}

export interface FunnelQuestion {
  steps: string[];
  range: DayRange;
  window: string;
  windowMs: number;
}

export interface DailyAnswer {
  /** Every day of the range, days without events included. */
  days: { date: string; count: number; people: number }[];
  /** Over the whole range: people are counted once however many days they appear. */
  total: { count: number; people: number };
}

/** People who reached each step, in step order. */
type FunnelAnswer = number[];

/**
 * Reads a daily or funnel question from an analytics store; both implementations give the same
 * answers. `deadline` (ms since the epoch): the query is cancelled by then, if not before.
 */
export interface AnalyticsReader {
  daily(workspaceId: string, q: DailyQuestion, deadline: number): Promise<DailyAnswer>;
  funnel(workspaceId: string, q: FunnelQuestion, deadline: number): Promise<FunnelAnswer>;
  close(): Promise<void>;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Epoch ms of a `YYYY-MM-DD` UTC day, or null when it names no day a timestamp may fall on. */
function dayMs(s: string): number | null {
  const m = DATE.exec(s);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (y < 1970 || back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || ms > LAST_DAY_MS) return null;
  return ms;
}

/** `from`..`to` (inclusive UTC days), at most MAX_RANGE_DAYS; throws InvalidInput naming the field. */
export function dayRange(from: string, to: string, at = ''): DayRange {
  const f = dayMs(from);
  if (f === null) throw new InvalidInput(`${at}from must be a date YYYY-MM-DD from 1970-01-01 to 2106-02-07`, [{ field: `${at}from`, message: 'must be a date YYYY-MM-DD from 1970-01-01 to 2106-02-07' }]);
  const t = dayMs(to);
  if (t === null) throw new InvalidInput(`${at}to must be a date YYYY-MM-DD from 1970-01-01 to 2106-02-07`, [{ field: `${at}to`, message: 'must be a date YYYY-MM-DD from 1970-01-01 to 2106-02-07' }]);
  if (t < f) throw new InvalidInput(`${at}to must not be before from`, [{ field: `${at}to`, message: 'must not be before from' }]);
  if ((t - f) / DAY_MS + 1 > MAX_RANGE_DAYS) throw new InvalidInput(`The range may cover at most ${MAX_RANGE_DAYS} days`, [{ field: `${at}to`, message: `must be at most ${MAX_RANGE_DAYS} days after from, counting both` }]);
  return { from, to, fromMs: f, toMs: t + DAY_MS };
}

/** A window like `30m`, `12h` or `7d`, from one minute to 90 days, in ms; throws InvalidInput. */
export function windowMs(s: string, field = 'window'): number {
  // The window grammar segments and goals take; a funnel's is at most 90 days.
  const seconds = windowSeconds(s);
  const ms = seconds === undefined ? NaN : seconds * 1000;
  if (!(ms <= MAX_WINDOW_MS)) throw new InvalidInput(`${field} must be a duration like 30m, 12h or 7d, at most 90d`, [{ field, message: 'must be a duration like 30m, 12h or 7d, at most 90d' }]);
  return ms;
}

/** The UTC date (YYYY-MM-DD) of day number `n` since the epoch. */
const dateOfDay = (n: number): string => new Date(n * DAY_MS).toISOString().slice(0, 10);

/** Every day of `range` with the counts `byDay` (day number → counts) holds, zeros elsewhere. */
export function denseDays(range: DayRange, byDay: ReadonlyMap<number, { count: number; people: number }>): DailyAnswer['days'] {
  const days: DailyAnswer['days'] = [];
  for (let n = range.fromMs / DAY_MS; n < range.toMs / DAY_MS; n++) days.push({ date: dateOfDay(n), ...(byDay.get(n) ?? { count: 0, people: 0 }) });
  return days;
}

// Time values: what Herald answers (ISO 8601 UTC with milliseconds) and the one definition of
// the timestamps it accepts. A timestamp reaches PostgreSQL (`timestamptz`: 4713 BC..294276 AD)
// and ClickHouse (`DateTime`: whole seconds 1970-01-01T00:00:00Z..2106-02-07T06:28:15Z), so it
// must name an instant both hold: an RFC 3339 date-time whose instant, once its offset is
// applied, lies in [1970-01-01T00:00:00.000Z, 2106-02-07T06:28:15.999Z]. A leap second (:60)
// names no instant a Date, PostgreSQL or ClickHouse holds, and is refused.
import { InvalidInput } from './errors.js';

/** ISO 8601 UTC with milliseconds (README, Request bodies), or null. */
export function iso(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return (v instanceof Date ? v : new Date(v as string)).toISOString();
}

/** The first and last instant (epoch milliseconds) a timestamp may name: ClickHouse DateTime's range. */
const TIMESTAMP_MIN_MS = 0;
const TIMESTAMP_MAX_MS = 4_294_967_295_999;
/** How refusals describe the accepted timestamps. */
export const TIMESTAMP_RULE = 'an RFC 3339 date-time from 1970-01-01T00:00:00Z to 2106-02-07T06:28:15.999Z (offset applied; no leap second)';

// RFC 3339 §5.6 date-time: `T` (or `t`, or the space §5.6 allows) between date and time,
// fractions of any length (kept to the millisecond), `Z`/`z` or a numeric offset.
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

const daysIn = (year: number, month: number) => (month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/** The instant (epoch ms) an accepted timestamp names, or null when it is not one. */
export function parseTimestamp(s: string): number | null {
  const m = RFC3339.exec(s);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const sign = m[8] === '-' ? -1 : 1;
  const [oh, om] = m[8] ? [Number(m[9]), Number(m[10])] : [0, 0];
  // A year outside these cannot be in range whatever the offset (and Date.UTC reads 0..99 as 19xx).
  if (year < 1969 || year > 2106) return null;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59 || oh > 23 || om > 59) return null;
  const instant = Date.UTC(year, month - 1, day, hour, minute, second, ms) - sign * (oh * 60 + om) * 60_000;
  return instant >= TIMESTAMP_MIN_MS && instant <= TIMESTAMP_MAX_MS ? instant : null;
}

/**
 * The timestamp `s` (of the request field `field`) as ISO 8601 UTC with milliseconds, the form
 * stored and echoed. Schemas have refused anything else already; this refuses it again.
 */
export function normalizeTimestamp(s: string, field: string): string {
  const ms = parseTimestamp(s);
  if (ms === null) throw new InvalidInput(`${field} must be ${TIMESTAMP_RULE}`, [{ field, message: `must be ${TIMESTAMP_RULE}` }]);
  return new Date(ms).toISOString();
}

/** Milliseconds of each duration unit. */
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A duration: a whole number and a unit (ms, s, m, h, d), e.g. `30m`, `2d`; its milliseconds, or null when it is not one. */
export function parseDuration(text: unknown): number | null {
  const m = typeof text === 'string' ? /^\s*(\d{1,15})(ms|s|m|h|d)\s*$/.exec(text) : null;
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : null;
}

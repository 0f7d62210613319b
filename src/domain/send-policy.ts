// The workspace send policy (docs/channels.md; README, Request bodies). Its shape (fields, formats,
// ranges) is the JSON Schema `sendPolicy` in schemas/workspaces.ts; what relates two fields is
// checked here, and so is what the policy says about one send at a given instant.
//
// Local times come from Intl (the runtime's tz database), never from fixed offsets: the wall
// clock of an instant is one cached DateTimeFormat per zone, and the instant a local day starts
// is found from the offsets in force around it, so days of 23 or 25 hours are right. This runs
// per recipient in 1,000-recipient batches, so each zone also remembers the local day it last
// computed and, when one UTC offset holds all that day, the offset: until the day ends, the
// daily cap and quiet hours cost no formatting.
import { LRUCache } from 'lru-cache';
import type { FieldError } from './errors.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** A policy that passed its schema. */
export interface SendPolicy {
  timezone?: string;
  quiet_hours?: { start: string; end: string } | null;
  max_pushes_per_day?: number;
  max_pushes_per_window?: number;
  window_hours?: number;
}

/** The fields that cap sends: a policy sets a cap when one of them is above 0 (its sends then need the people's counters). */
export const CAP_FIELDS = ['max_pushes_per_day', 'max_pushes_per_window'] as const satisfies readonly (keyof SendPolicy)[];

export function setsCap(policy: SendPolicy | null): boolean {
  return policy !== null && CAP_FIELDS.some((f) => (policy[f] ?? 0) > 0);
}

export const POLICY_SKIPS = ['quiet_hours', 'frequency_cap', 'rolling_cap'] as const;
export type PolicySkip = (typeof POLICY_SKIPS)[number];

/** Why a send is `policy_suppressed`: the reason to branch on and prose for the result's `error`. */
export interface PolicyBlock {
  skip_reason: PolicySkip;
  error: string;
}

/**
 * How far back a person's sent times must reach for policyBlock to be right: the longest
 * rolling window (168 h) covers the local day too (at most 25 h, with a DST change), plus an
 * hour of slack for a caller whose `now` is a little before the instant it loaded the times
 * from, or a clock stepped back.
 */
export const COUNTER_HORIZON_MS = 169 * HOUR_MS;

interface Zone {
  format: Intl.DateTimeFormat;
  /** The local day last computed, [dayStart, dayEnd) in epoch ms (NaN until then). */
  dayStart: number;
  dayEnd: number;
  /** The UTC offset (ms) of that whole day; null when it changes during the day (DST). */
  offset: number | null;
}

// Zone names come from people's data too, so the cache is bounded; `false` remembers a name that is no zone.
const zones = new LRUCache<string, Zone | false>({ max: 1000 });

function lookupZone(tz: string): Zone | false {
  let z = zones.get(tz);
  if (z === undefined) {
    try {
      const format = new Intl.DateTimeFormat('en-US', {
        timeZone: tz,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
      z = { format, dayStart: NaN, dayEnd: NaN, offset: null };
    } catch {
      z = false;
    }
    zones.set(tz, z);
  }
  return z;
}

export function isTimeZone(tz: string): boolean {
  return lookupZone(tz) !== false;
}

/**
 * The zone for quiet hours and the daily reset: the person's own timezone when it is a valid
 * IANA name, else the policy's, else UTC (an empty policy timezone means UTC).
 */
export function recipientZone(personTimeZone: string | null | undefined, policy: SendPolicy | null): string {
  if (personTimeZone && isTimeZone(personTimeZone)) return personTimeZone;
  const tz = policy?.timezone;
  return tz && isTimeZone(tz) ? tz : 'UTC';
}

/**
 * The wall-clock time in the zone at instant `t`, written as the epoch ms of that time in UTC
 * (so wall(t) - t is the zone's offset at t). `format` is ~6x faster than `formatToParts`;
 * en-US numeric with h23 reads "M/D/YYYY, HH:MM:SS".
 */
function wall(z: Zone, t: number): number {
  const [month, day, year, hour, minute, second] = z.format.format(t).split(/\D+/).map(Number) as [number, number, number, number, number, number];
  return Date.UTC(year, month - 1, day, hour, minute, second, ((t % 1000) + 1000) % 1000);
}

/**
 * The first instant of the local day whose midnight is `midnight` (a wall time, see wall())
 * and which `near` lies in or next to. Local midnight is `midnight - offset` for the offset in
 * force at that instant; the offsets that can be are those around `midnight - offset(near)`
 * (a DST change moves it by at most 2 h, so ±3 h brackets one). Of the candidates, the first
 * that is in the day wins: a midnight that happens twice (America/Havana falls back from 01:00
 * to 00:00) starts at its first occurrence, and a midnight a DST change skips (Havana springs
 * from 00:00 to 01:00) at the change.
 */
function firstInstant(z: Zone, midnight: number, near: number): number {
  const guess = midnight - (wall(z, near) - near);
  let first = Infinity;
  for (const probe of [guess - 3 * HOUR_MS, guess, guess + 3 * HOUR_MS]) {
    const candidate = midnight - (wall(z, probe) - probe);
    const w = wall(z, candidate);
    if (w >= midnight && w < midnight + DAY_MS && candidate < first) first = candidate;
  }
  return first;
}

const sinceMidnight = (w: number) => ((w % DAY_MS) + DAY_MS) % DAY_MS;

/** Makes the zone's remembered day the local day holding `nowMs`. */
function localDay(z: Zone, nowMs: number): Zone {
  if (nowMs >= z.dayStart && nowMs < z.dayEnd) return z;
  const w = wall(z, nowMs);
  const midnight = w - sinceMidnight(w);
  z.dayStart = firstInstant(z, midnight, nowMs);
  z.dayEnd = firstInstant(z, midnight + DAY_MS, z.dayStart + DAY_MS);
  // The same offset at both ends: none in between either (no zone changes twice in a day).
  const offset = wall(z, z.dayStart) - z.dayStart;
  z.offset = wall(z, z.dayEnd - 1) - (z.dayEnd - 1) === offset ? offset : null;
  return z;
}

/** wall(z, nowMs), from the day's offset when one holds all day. */
function wallNow(z: Zone, nowMs: number): number {
  const { offset } = localDay(z, nowMs);
  return offset === null ? wall(z, nowMs) : nowMs + offset;
}

const minutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

function inQuietHours(quiet: { start: string; end: string }, z: Zone, nowMs: number): boolean {
  const now = Math.floor(sinceMidnight(wallNow(z, nowMs)) / MINUTE_MS);
  const start = minutes(quiet.start);
  const end = minutes(quiet.end);
  return start < end ? now >= start && now < end : now >= start || now < end;
}

function countFrom(sentAtMs: readonly number[], fromMs: number): number {
  let n = 0;
  for (const t of sentAtMs) if (t >= fromMs) n++;
  return n;
}

const pushes = (n: number) => `${n} push${n === 1 ? '' : 'es'}`;

/**
 * The first policy rule that blocks a send now, in the documented order (docs/channels.md; quiet hours → daily
 * cap → rolling cap), or null.
 * - zone: recipientZone()'s answer (an unknown zone throws RangeError).
 * - Quiet hours are `HH:MM` wall-clock times in `zone`, start inclusive, end exclusive; start >
 *   end wraps midnight.
 * - The daily cap counts sends since the local midnight of `zone`; the rolling cap sends in the
 *   last `window_hours` hours of absolute time (a send stops counting exactly window_hours
 *   after it). A cap blocks when its count has reached the maximum.
 * sentAtMs: times (ms since epoch) of the person's pushes with status `sent`, any order; may
 *   hold older ones; later ones than nowMs count.
 * bypassCaps (a campaign node's bypass_frequency_cap) skips both caps, never quiet hours.
 */
export function policyBlock(
  policy: SendPolicy | null,
  zone: string,
  nowMs: number,
  sentAtMs: readonly number[],
  opts: { bypassCaps?: boolean } = {},
): PolicyBlock | null {
  if (policy === null) return null;
  const z = lookupZone(zone);
  if (z === false) throw new RangeError(`Unknown time zone: ${zone}`);
  const quiet = policy.quiet_hours;
  if (quiet && inQuietHours(quiet, z, nowMs)) {
    return { skip_reason: 'quiet_hours', error: `Quiet hours ${quiet.start}-${quiet.end} (${zone})` };
  }
  if (opts.bypassCaps) return null;
  const perDay = policy.max_pushes_per_day ?? 0;
  if (perDay > 0 && countFrom(sentAtMs, localDay(z, nowMs).dayStart) >= perDay) {
    return { skip_reason: 'frequency_cap', error: `Daily cap reached: ${pushes(perDay)} since local midnight (${zone})` };
  }
  const perWindow = policy.max_pushes_per_window ?? 0;
  const hours = policy.window_hours ?? 0;
  // + 1: a send exactly window_hours ago has left the window.
  if (perWindow > 0 && hours > 0 && countFrom(sentAtMs, nowMs - hours * HOUR_MS + 1) >= perWindow) {
    return { skip_reason: 'rolling_cap', error: `Rolling cap reached: ${pushes(perWindow)} in the last ${hours} hour${hours === 1 ? '' : 's'}` };
  }
  return null;
}

/** What relates two fields of a schema-valid policy: quiet hours that start and end at once, a rolling cap set by halves. */
export function sendPolicyConflicts(policy: SendPolicy | null): FieldError[] {
  if (policy === null) return [];
  const problems: FieldError[] = [];
  if (policy.quiet_hours && policy.quiet_hours.start === policy.quiet_hours.end) {
    problems.push({ field: 'send_policy.quiet_hours', message: 'start and end must differ' });
  }
  const { max_pushes_per_window: perWindow, window_hours: hours } = policy;
  if ((perWindow === undefined) !== (hours === undefined) || ((perWindow ?? 0) > 0) !== ((hours ?? 0) > 0)) {
    problems.push({ field: 'send_policy.max_pushes_per_window', message: 'max_pushes_per_window and window_hours are set together: both > 0 enables the rolling cap, both 0 disables it' });
  }
  return problems;
}

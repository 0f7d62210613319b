// The workspace send policy (INTERFACE 2.10, DECISIONS §5): validation only here; the checks
// at send time arrive with push sending.

export interface SendPolicy {
  timezone?: string;
  quiet_hours?: { start: string; end: string } | null;
  max_pushes_per_day?: number;
  max_pushes_per_window?: number;
  window_hours?: number;
}

const HHMM = /^([01]\d|2[0-3]):[0-5]\d$/;
const KNOWN = new Set(['timezone', 'quiet_hours', 'max_pushes_per_day', 'max_pushes_per_window', 'window_hours']);

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const isNonNegativeInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Every problem with `policy`, as `{field, message}`; empty when it is valid. */
export function sendPolicyProblems(policy: unknown): { field: string; message: string }[] {
  if (policy === null) return [];
  if (typeof policy !== 'object' || Array.isArray(policy)) return [{ field: 'send_policy', message: 'must be an object or null' }];
  const p = policy as Record<string, unknown>;
  const problems: { field: string; message: string }[] = [];
  const add = (field: string, message: string) => problems.push({ field: `send_policy.${field}`, message });

  for (const k of Object.keys(p)) if (!KNOWN.has(k)) add(k, 'is not a send policy field');

  if (p.timezone !== undefined && p.timezone !== '' && (typeof p.timezone !== 'string' || !isTimeZone(p.timezone))) {
    add('timezone', 'must be an IANA time zone name (e.g. Europe/Paris), or empty for UTC');
  }

  if (p.quiet_hours !== undefined && p.quiet_hours !== null) {
    const q = p.quiet_hours as Record<string, unknown>;
    if (typeof q !== 'object' || Array.isArray(q)) add('quiet_hours', 'must be an object {start, end} or null');
    else {
      for (const f of ['start', 'end'] as const) {
        if (typeof q[f] !== 'string' || !HHMM.test(q[f] as string)) add(`quiet_hours.${f}`, 'must be a time HH:MM (00:00 to 23:59)');
      }
      if (typeof q.start === 'string' && q.start === q.end) add('quiet_hours', 'start and end must differ');
      for (const k of Object.keys(q)) if (k !== 'start' && k !== 'end') add(`quiet_hours.${k}`, 'is not a quiet hours field');
    }
  }

  if (p.max_pushes_per_day !== undefined && !isNonNegativeInt(p.max_pushes_per_day)) add('max_pushes_per_day', 'must be an integer >= 0');

  const perWindow = p.max_pushes_per_window;
  const hours = p.window_hours;
  if (perWindow !== undefined && !isNonNegativeInt(perWindow)) add('max_pushes_per_window', 'must be an integer >= 0');
  if (hours !== undefined && (!isNonNegativeInt(hours) || hours > 168)) add('window_hours', 'must be an integer from 0 to 168');
  const n = (v: unknown) => (isNonNegativeInt(v) ? v : 0);
  if ((perWindow === undefined) !== (hours === undefined) || (n(perWindow) > 0) !== (n(hours) > 0)) {
    add('max_pushes_per_window', 'max_pushes_per_window and window_hours are set together: both > 0 enables the rolling cap, both 0 disables it');
  }
  return problems;
}

// The workspace send policy (INTERFACE 2.10, DECISIONS §5). Its shape (fields, formats,
// ranges) is the JSON Schema `sendPolicy` in schemas/workspaces.ts; what relates two fields is
// checked here. The checks at send time arrive with push sending.
import type { FieldError } from './errors.js';

export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** A policy that passed its schema. */
export interface SendPolicyFields {
  quiet_hours?: { start: string; end: string } | null;
  max_pushes_per_window?: number;
  window_hours?: number;
}

/** What relates two fields of a schema-valid policy: quiet hours that start and end at once, a rolling cap set by halves. */
export function sendPolicyConflicts(policy: SendPolicyFields | null): FieldError[] {
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

// PLACEHOLDER until branch push-rules lands.
export interface SendPolicy { timezone?: string; quiet_hours?: { start: string; end: string } | null; max_pushes_per_day?: number; max_pushes_per_window?: number; window_hours?: number }
export type PolicySkip = 'quiet_hours' | 'frequency_cap' | 'rolling_cap';
export interface PolicyBlock { skip_reason: PolicySkip; error: string }
export const COUNTER_HORIZON_MS = 169 * 3600_000;
export function recipientZone(personTimeZone: string | null | undefined, policy: SendPolicy | null): string {
  return personTimeZone && isTimeZone(personTimeZone) ? personTimeZone : policy?.timezone || 'UTC';
}
export function policyBlock(policy: SendPolicy | null, _zone: string, nowMs: number, sentAtMs: readonly number[], opts: { bypassCaps?: boolean } = {}): PolicyBlock | null {
  if (!policy || opts.bypassCaps) return null;
  if (policy.max_pushes_per_day && sentAtMs.filter((t) => t > nowMs - 86_400_000).length >= policy.max_pushes_per_day) return { skip_reason: 'frequency_cap', error: 'daily cap' };
  return null;
}

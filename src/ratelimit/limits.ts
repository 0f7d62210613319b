// The rate-limit budgets of each scope (domain/rate-limit-scopes.ts) and their overrides (README, Rate limits).
import { ConfigError } from '../config.js';
import { SCOPES, type Scope } from '../domain/rate-limit-scopes.js';

interface Limit {
  perMinute: number;
  burst: number;
}

export type Limits = Record<Scope, Limit>;

export const DEFAULT_LIMITS: Limits = {
  'ws-ingest': { perMinute: 12_000, burst: 2_000 },
  'ws-devices': { perMinute: 6_000, burst: 1_000 },
  'ws-reads': { perMinute: 1_200, burst: 300 },
  'user-dashboard': { perMinute: 1_200, burst: 300 },
  'ip-public': { perMinute: 120, burst: 60 },
  'ip-webhooks': { perMinute: 600, burst: 300 },
  edge: { perMinute: 6_000, burst: 600 },
};

/** Applies `HERALD_RATE_LIMITS`, e.g. `ws-ingest=60:10,edge=600:100` (per-minute:burst). */
export function parseRateLimits(spec: string | undefined): Limits {
  const limits: Limits = { ...DEFAULT_LIMITS };
  for (const part of (spec ?? '').split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([a-z-]+)=(\d+):(\d+)$/.exec(part);
    if (!m || !(SCOPES as readonly string[]).includes(m[1]!)) {
      throw new ConfigError(`HERALD_RATE_LIMITS: '${part}' is not <scope>=<per-minute>:<burst> with scope one of ${SCOPES.join(', ')}`);
    }
    const burst = Number(m[3]);
    if (burst < 1) throw new ConfigError(`HERALD_RATE_LIMITS: burst of ${m[1]} must be at least 1`);
    limits[m[1] as Scope] = { perMinute: Number(m[2]), burst };
  }
  return limits;
}

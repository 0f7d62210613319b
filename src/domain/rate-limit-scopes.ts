// The rate-limit scopes (README, Rate limits): which budget a request spends, named in a 429's
// body. The route table gives each route its scope; ratelimit/ holds the budgets.
export const SCOPES = ['ws-ingest', 'ws-devices', 'ws-reads', 'user-dashboard', 'ip-public', 'ip-webhooks', 'edge'] as const;
export type Scope = (typeof SCOPES)[number];

// Every setting Herald reads, from the environment, with its default. The README's
// configuration table mirrors this file; keep them together.
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { parseRange } from './domain/ip-ranges.js';
import { parseAllowList, type AllowList } from './domain/private-hosts.js';
import { parseDuration } from './domain/time.js';

/** Google's FCM; while HERALD_FCM_ENDPOINT is this, a service account's token_uri must be Google's too (docs/isolation.md). */
export const DEFAULT_FCM_ENDPOINT = 'https://fcm.googleapis.com';

export interface Config {
  host: string;
  port: number;
  /** The address browsers reach Herald at (the dashboard's sign-in link); undefined: http://host:port. */
  publicUrl: string | undefined;
  dataDir: string;
  databaseUrl: string | undefined;
  natsUrl: string | undefined;
  natsPrefix: string;
  clickhouseUrl: string | undefined;
  pgPoolSize: number;
  /** Statements (store) or inserts (ClickHouse) each JetStream sink runs at once. */
  sinkStatements: number;
  /** How far past what it holds live a thread's heap may grow before a full GC, in percent (0: V8's own factor). */
  heapGrowthPercent: number;
  actors: number;
  authSecret: string | undefined;
  authJwksUrl: string | undefined;
  authIssuer: string | undefined;
  authAudience: string | undefined;
  rateLimits: string | undefined;
  trustedProxies: string[];
  enforceIpAllowlist: boolean;
  maxBodyBytes: number;
  /** HERALD_IMPORT_MAX_BYTES: the largest CSV a list import accepts (streamed to disk, never held in memory). */
  importMaxBytes: number;
  /** HERALD_IMPORT_MAX_ROWS: rows one import reads; past it the import ends failed, the rows before it kept. */
  importMaxRows: number;
  keyCacheSize: number;
  keyCacheTtlMs: number;
  requestTimeoutMs: number;
  /** Requests at the actors at once; past it the front answers 503 (memory stays bounded when the store is slow). */
  maxInFlight: number;
  shutdownTimeoutMs: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** FCM HTTP v1 base URL; sends go to `POST {fcmEndpoint}/v1/projects/<project_id>/messages:send`. */
  fcmEndpoint: string;
  /** Base URL replacing both APNs hosts (production and sandbox); undefined means Apple's. */
  apnsEndpoint: string | undefined;
  /** Private destinations a tenant may set after all (docs/isolation.md): host names, IPs, CIDR blocks. */
  allowedPrivateHosts: AllowList;
  /** What a platform without credentials in its workspace sends through (docs/channels.md). */
  pushProvider: PushProviderMode;
  /** What a workspace without an email / SMS channel sends through (docs/channels.md): the sandbox, or nothing. */
  emailProvider: PushProviderMode;
  smsProvider: PushProviderMode;
  /** Replaces Twilio's host (https://api.twilio.com) for tests and private gateways. */
  twilioEndpoint: string;
  /** Seals stored provider credentials; undefined: the key generated in the data dir (auth/bootstrap.ts). */
  secretsKey: Buffer | undefined;
  /** At most this many people enrolled by one webhook trigger (docs/campaigns-runtime.md); more is `audience_truncated`. */
  triggerAudienceCeiling: number;
  /** At most this many people enrolled by one schedule run (docs/campaigns-runtime.md). */
  scheduleAudienceCeiling: number;
  /** How often, at least, a dynamic_schedule campaign's audience is scanned (finds dates set since the last scan). */
  dynamicScanMs: number;
  /** Whether Herald counts metrics (HERALD_METRICS=true, or HERALD_METRICS_PORT set). */
  metrics: boolean;
  /** Serves GET /metrics on this port alone (not on the main one); undefined: on the main port when `metrics`. */
  metricsPort: number | undefined;
  /** Template rendering (src/render/pool.ts): threads of each actor's render pool. */
  renderThreads: number;
  /** Milliseconds of rendering one recipient may take, all its fields together. */
  renderBudgetMs: number;
  /** Milliseconds of rendering one send may take, all its recipients together (a request, or a page of a campaign). */
  renderSendBudgetMs: number;
  /** Sends one workspace may have waiting for a render thread, per actor; past it, 503. */
  renderQueue: number;
  /** Outbound webhooks (docs/webhooks.md): the wait before each retry of a failed delivery, in ms; past the last, failed. */
  webhookRetryScheduleMs: number[];
  /** An endpoint whose every delivery failed for this long is disabled. */
  webhookDisableAfterMs: number;
  /** One delivery attempt's total deadline (connect, TLS, answer). */
  webhookTimeoutMs: number;
  /** HERALD_TIME_SCALE (testing): the durations of campaign delays, waits and their timeouts are multiplied by it (1). */
  timeScale: number;
}

/**
 * `sandbox`: a platform without credentials in its workspace sends through the sandbox provider;
 * `live`: it is a configuration error (the send fails naming the missing channel).
 */
export type PushProviderMode = 'sandbox' | 'live';

/**
 * A setting or argument Herald cannot start with: `herald` prints its message as one line and
 * exits 2 (README, Running it), never a stack trace. The message names the setting.
 */
export class ConfigError extends Error {}

/**
 * A service named by a setting that does not answer at start (refused, unresolvable, wrong
 * password) is a configuration problem too: Herald cannot tell a wrong URL from a service not
 * up yet, and starting anyway would only serve errors. Once running, Herald rides out outages.
 */
export async function reachable<T>(name: string, value: string, attempt: Promise<T>): Promise<T> {
  try {
    return await attempt;
  } catch (err) {
    const e = err as Error & { code?: string; errors?: Error[] };
    const why = e.message || e.code || (e.errors ?? []).map((x) => x.message).join('; ') || String(err);
    throw new ConfigError(`${name} (${redactUrl(value)}) cannot be reached: ${why.replace(/\s+/g, ' ')}. Check the URL and that the service runs.`);
  }
}

/** The longest delay a Node timer keeps (longer ones fire at once): every `_MS` setting's ceiling. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The one rule for numeric settings: an integer in [min, max], else a ConfigError naming the setting and the range. */
function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = str(env, name);
  if (raw === undefined) return dflt;
  const n = Number(raw.trim());
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`${name} must be an integer ${range}, got '${raw}'`);
  }
  return n;
}

const ms = (env: NodeJS.ProcessEnv, name: string, dflt: number, min = 0) => int(env, name, dflt, min, MAX_TIMER_MS);

/**
 * The one rule for every setting: unset is its default, and set but empty is refused (an empty
 * value is more often a mistake, `HERALD_PORT=$PORT` with PORT unset, than a wish for the default).
 */
function str(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  if (v === '') throw new ConfigError(`${name} is set but empty: unset it for its default, or give it a value`);
  return v;
}

/** A comma-separated list of durations, each a whole number and a unit (ms, s, m, h, d): `5s,5m,2h`. */
function durations(env: NodeJS.ProcessEnv, name: string, dflt: string): number[] {
  const raw = str(env, name) ?? dflt;
  return raw.split(',').map((part) => {
    const value = parseDuration(part) ?? NaN;
    if (!(value <= MAX_TIMER_MS)) throw new ConfigError(`${name} must list durations such as 5s,5m,30m,2h (units ms, s, m, h, d), got '${raw}'`);
    return value;
  });
}

/** A number above 0 (a fraction allowed), else a ConfigError naming the setting. */
function positive(env: NodeJS.ProcessEnv, name: string, dflt: number): number {
  const raw = str(env, name);
  if (raw === undefined) return dflt;
  const n = Number(raw.trim());
  if (!(Number.isFinite(n) && n > 0)) throw new ConfigError(`${name} must be a number above 0 (e.g. 0.001), got '${raw}'`);
  return n;
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const v = str(env, name)?.toLowerCase();
  if (v === undefined || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw new ConfigError(`${name} must be true or false, got '${env[name]}'`);
}

/** A label of a host name (RFC 1123): letters, digits and inner hyphens. */
const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * HERALD_HOST: an IP address or a host name. A name whose last label is all digits is neither
 * (`999.1.1.1`); whether the address is this machine's is told when Herald tries it (server.ts).
 */
function listenHost(env: NodeJS.ProcessEnv): string {
  const host = str(env, 'HERALD_HOST') ?? '127.0.0.1';
  const labels = host.split('.');
  const name = host.length <= 253 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels.at(-1)!);
  if (!isIP(host) && !name) throw new ConfigError(`HERALD_HOST must be an IP address or a host name, got '${host}'`);
  return host;
}

function natsPrefix(p: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(p)) throw new ConfigError(`HERALD_NATS_PREFIX must be 1-64 letters, digits, '-' or '_', got '${p}'`);
  return p;
}

// The ClickHouse sink is a consumer of the JetStream Log; without NATS there is nothing to
// consume and the store is the analytics store, so the combination is refused.
function clickhouseUrl(env: NodeJS.ProcessEnv): string | undefined {
  const ch = url(env, 'CLICKHOUSE_URL', ['http', 'https']);
  if (ch && !str(env, 'NATS_URL')) throw new ConfigError('CLICKHOUSE_URL needs NATS_URL: the ClickHouse sink consumes the JetStream Log');
  return ch;
}

/** A URL setting whose scheme is one of `schemes` (e.g. `https`); shown without its password when refused. */
function url(env: NodeJS.ProcessEnv, name: string, schemes: string[]): string | undefined {
  const raw = str(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = new URL(raw);
  } catch {
    // not a URL: refused below
  }
  if (!parsed || !schemes.includes(parsed.protocol.slice(0, -1))) {
    throw new ConfigError(`${name} must be a URL starting ${schemes.map((p) => `${p}://`).join(' or ')}, got '${redactUrl(raw)}'`);
  }
  return raw;
}

/** A URL as it may be printed: its password replaced by `***`. */
function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    if (!u.password) return raw;
    u.password = '***';
    return u.toString();
  } catch {
    return raw.replace(/:[^:@/]*@/, ':***@');
  }
}

/** NATS_URL: one server or a comma-separated list, each `nats://`, `tls://`, `ws(s)://` or bare `host:port`. */
function natsUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = str(env, 'NATS_URL');
  if (raw === undefined) return undefined;
  for (const server of raw.split(',').map((s) => s.trim())) {
    url({ NATS_URL: server.includes('://') ? server : `nats://${server}` }, 'NATS_URL', ['nats', 'tls', 'ws', 'wss']);
  }
  return raw;
}

/** Each entry an IP address or CIDR block (the same parser the front matches with). */
function trustedProxies(env: NodeJS.ProcessEnv): string[] {
  const entries = (str(env, 'HERALD_TRUSTED_PROXIES') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const bad = entries.find((e) => parseRange(e) === null);
  if (bad !== undefined) throw new ConfigError(`HERALD_TRUSTED_PROXIES must list IP addresses or CIDR blocks, got '${bad}'`);
  return entries;
}

function allowedPrivateHosts(env: NodeJS.ProcessEnv): AllowList {
  const entries = (str(env, 'HERALD_ALLOWED_PRIVATE_HOSTS') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  try {
    return parseAllowList(entries);
  } catch (err) {
    throw new ConfigError(`HERALD_ALLOWED_PRIVATE_HOSTS: ${(err as Error).message}`);
  }
}

/** HERALD_PUSH_PROVIDER, HERALD_EMAIL_PROVIDER, HERALD_SMS_PROVIDER: `sandbox` (default) or `live`. */
function providerMode(env: NodeJS.ProcessEnv, name: string): PushProviderMode {
  const v = str(env, name) ?? 'sandbox';
  if (v !== 'sandbox' && v !== 'live') throw new ConfigError(`${name} must be sandbox or live, got '${v}'`);
  return v;
}

/** 32 bytes as 64 hex characters or base64 (standard or URL-safe, padded or not). Never echoed: it is a secret. */
export function parseSecretsKey(raw: string, name: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(raw)
    ? Buffer.from(raw, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw)
      ? Buffer.from(raw.replace(/=$/, ''), 'base64url')
      : undefined;
  if (key?.length !== 32) throw new ConfigError(`${name} must be 32 bytes as 64 hex characters or base64 (e.g. \`openssl rand -hex 32\`); the value given (${raw.length} characters) is neither`);
  return key;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const level = str(env, 'HERALD_LOG_LEVEL') ?? 'info';
  const secretsKey = str(env, 'HERALD_SECRETS_KEY');
  if (!['debug', 'info', 'warn', 'error'].includes(level)) throw new ConfigError(`HERALD_LOG_LEVEL must be debug, info, warn or error`);
  return {
    host: listenHost(env),
    port: int(env, 'HERALD_PORT', 8080, 0, 65_535),
    publicUrl: url(env, 'HERALD_PUBLIC_URL', ['http', 'https'])?.replace(/\/+$/, ''),
    dataDir: resolve(str(env, 'HERALD_DATA_DIR') ?? './data'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres', 'postgresql']),
    natsUrl: natsUrl(env),
    natsPrefix: natsPrefix(str(env, 'HERALD_NATS_PREFIX') ?? 'herald'),
    clickhouseUrl: clickhouseUrl(env),
    pgPoolSize: int(env, 'HERALD_PG_POOL_SIZE', 4, 1),
    sinkStatements: int(env, 'HERALD_SINK_STATEMENTS', 2, 1),
    heapGrowthPercent: int(env, 'HERALD_HEAP_GROWTH_PERCENT', 20),
    actors: int(env, 'HERALD_ACTORS', availableParallelism(), 1, 256),
    authSecret: str(env, 'HERALD_AUTH_SECRET'),
    authJwksUrl: url(env, 'HERALD_AUTH_JWKS_URL', ['https', 'http']),
    authIssuer: str(env, 'HERALD_AUTH_ISSUER'),
    authAudience: str(env, 'HERALD_AUTH_AUDIENCE'),
    rateLimits: str(env, 'HERALD_RATE_LIMITS'),
    trustedProxies: trustedProxies(env),
    enforceIpAllowlist: bool(env, 'HERALD_ENFORCE_IP_ALLOWLIST'),
    maxBodyBytes: int(env, 'HERALD_MAX_BODY_BYTES', 1024 * 1024, 1),
    importMaxBytes: int(env, 'HERALD_IMPORT_MAX_BYTES', 512 * 1024 * 1024, 1),
    importMaxRows: int(env, 'HERALD_IMPORT_MAX_ROWS', 1_000_000, 1),
    keyCacheSize: int(env, 'HERALD_KEY_CACHE_SIZE', 10_000, 1),
    keyCacheTtlMs: ms(env, 'HERALD_KEY_CACHE_TTL_MS', 5_000, 1),
    requestTimeoutMs: ms(env, 'HERALD_REQUEST_TIMEOUT_MS', 30_000, 1),
    maxInFlight: int(env, 'HERALD_MAX_IN_FLIGHT', 4_096, 1),
    shutdownTimeoutMs: ms(env, 'HERALD_SHUTDOWN_TIMEOUT_MS', 10_000, 0),
    logLevel: level as Config['logLevel'],
    fcmEndpoint: url(env, 'HERALD_FCM_ENDPOINT', ['https']) ?? DEFAULT_FCM_ENDPOINT,
    apnsEndpoint: url(env, 'HERALD_APNS_ENDPOINT', ['https']),
    allowedPrivateHosts: allowedPrivateHosts(env),
    pushProvider: providerMode(env, 'HERALD_PUSH_PROVIDER'),
    emailProvider: providerMode(env, 'HERALD_EMAIL_PROVIDER'),
    smsProvider: providerMode(env, 'HERALD_SMS_PROVIDER'),
    twilioEndpoint: (url(env, 'HERALD_TWILIO_ENDPOINT', ['http', 'https']) ?? 'https://api.twilio.com').replace(/\/+$/, ''),
    secretsKey: secretsKey === undefined ? undefined : parseSecretsKey(secretsKey, 'HERALD_SECRETS_KEY'),
    triggerAudienceCeiling: int(env, 'HERALD_TRIGGER_AUDIENCE_CEILING', 10_000, 1),
    scheduleAudienceCeiling: int(env, 'HERALD_SCHEDULE_AUDIENCE_CEILING', 250_000, 1),
    dynamicScanMs: int(env, 'HERALD_DYNAMIC_SCAN_MS', 60_000, 1_000, 86_400_000),
    metrics: bool(env, 'HERALD_METRICS') || str(env, 'HERALD_METRICS_PORT') !== undefined,
    metricsPort: str(env, 'HERALD_METRICS_PORT') === undefined ? undefined : int(env, 'HERALD_METRICS_PORT', 0, 0, 65_535),
    renderThreads: int(env, 'HERALD_RENDER_THREADS', 1, 1),
    renderBudgetMs: int(env, 'HERALD_RENDER_BUDGET_MS', 50, 1),
    renderSendBudgetMs: int(env, 'HERALD_RENDER_SEND_BUDGET_MS', 1_000, 1),
    renderQueue: int(env, 'HERALD_RENDER_QUEUE', 64, 1),
    webhookRetryScheduleMs: durations(env, 'HERALD_WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h'),
    webhookDisableAfterMs: int(env, 'HERALD_WEBHOOK_DISABLE_AFTER_MS', 5 * 86_400_000, 1),
    webhookTimeoutMs: ms(env, 'HERALD_WEBHOOK_TIMEOUT_MS', 15_000, 1),
    timeScale: positive(env, 'HERALD_TIME_SCALE', 1),
  };
}

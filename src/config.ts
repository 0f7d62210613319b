// Every setting Herald reads, from the environment, with its default. The README's
// configuration table mirrors this file; keep them together.
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';

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
  /** What a platform without credentials in its workspace sends through (DECISIONS §9, §11). */
  pushProvider: PushProviderMode;
  /** Seals stored provider credentials; undefined: the key generated in the data dir (auth/bootstrap.ts). */
  secretsKey: Buffer | undefined;
  /** At most this many people enrolled by one webhook trigger (DECISIONS §6); more is `audience_truncated`. */
  triggerAudienceCeiling: number;
  /** At most this many people enrolled by one schedule run (DECISIONS §6). */
  scheduleAudienceCeiling: number;
}

/**
 * `sandbox`: a platform without credentials in its workspace sends through the sandbox provider;
 * `live`: it is a configuration error (the send fails naming the missing channel).
 */
export type PushProviderMode = 'sandbox' | 'live';

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new ConfigError(`${name} must be an integer >= ${min}, got '${raw}'`);
  return n;
}

function str(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

function bool(env: NodeJS.ProcessEnv, name: string): boolean {
  const v = (env[name] ?? '').toLowerCase();
  if (v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw new ConfigError(`${name} must be true or false, got '${env[name]}'`);
}

function natsPrefix(p: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(p)) throw new ConfigError(`HERALD_NATS_PREFIX must be 1-64 letters, digits, '-' or '_', got '${p}'`);
  return p;
}

// The ClickHouse sink is a consumer of the JetStream Log; without NATS there is nothing to
// consume and the store is the analytics store, so the combination is refused.
function clickhouseUrl(env: NodeJS.ProcessEnv): string | undefined {
  const url = str(env, 'CLICKHOUSE_URL');
  if (url && !str(env, 'NATS_URL')) throw new ConfigError('CLICKHOUSE_URL needs NATS_URL: the ClickHouse sink consumes the JetStream Log');
  if (url && !/^https?:\/\//.test(url)) throw new ConfigError(`CLICKHOUSE_URL must be an http(s) URL, got '${url}'`);
  return url;
}

function httpsUrl(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const url = str(env, name);
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${name} must be an https URL, got '${url}'`);
  }
  if (parsed.protocol !== 'https:') throw new ConfigError(`${name} must be an https URL, got '${url}'`);
  return url;
}

function pushProvider(env: NodeJS.ProcessEnv): PushProviderMode {
  const v = str(env, 'HERALD_PUSH_PROVIDER') ?? 'sandbox';
  if (v !== 'sandbox' && v !== 'live') throw new ConfigError(`HERALD_PUSH_PROVIDER must be sandbox or live, got '${v}'`);
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
  if (!['debug', 'info', 'warn', 'error'].includes(level)) throw new ConfigError(`HERALD_LOG_LEVEL must be debug, info, warn or error`);
  return {
    host: str(env, 'HERALD_HOST') ?? '127.0.0.1',
    port: int(env, 'HERALD_PORT', 8080),
    publicUrl: str(env, 'HERALD_PUBLIC_URL')?.replace(/\/+$/, ''),
    dataDir: resolve(str(env, 'HERALD_DATA_DIR') ?? './data'),
    databaseUrl: str(env, 'DATABASE_URL'),
    natsUrl: str(env, 'NATS_URL'),
    natsPrefix: natsPrefix(str(env, 'HERALD_NATS_PREFIX') ?? 'herald'),
    clickhouseUrl: clickhouseUrl(env),
    pgPoolSize: int(env, 'HERALD_PG_POOL_SIZE', 4, 1),
    sinkStatements: int(env, 'HERALD_SINK_STATEMENTS', 2, 1),
    heapGrowthPercent: int(env, 'HERALD_HEAP_GROWTH_PERCENT', 20),
    actors: int(env, 'HERALD_ACTORS', availableParallelism(), 1),
    authSecret: str(env, 'HERALD_AUTH_SECRET'),
    authJwksUrl: str(env, 'HERALD_AUTH_JWKS_URL'),
    authIssuer: str(env, 'HERALD_AUTH_ISSUER'),
    authAudience: str(env, 'HERALD_AUTH_AUDIENCE'),
    rateLimits: str(env, 'HERALD_RATE_LIMITS'),
    trustedProxies: (str(env, 'HERALD_TRUSTED_PROXIES') ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    enforceIpAllowlist: bool(env, 'HERALD_ENFORCE_IP_ALLOWLIST'),
    maxBodyBytes: int(env, 'HERALD_MAX_BODY_BYTES', 1024 * 1024, 1),
    keyCacheSize: int(env, 'HERALD_KEY_CACHE_SIZE', 10_000, 1),
    keyCacheTtlMs: int(env, 'HERALD_KEY_CACHE_TTL_MS', 5_000, 1),
    requestTimeoutMs: int(env, 'HERALD_REQUEST_TIMEOUT_MS', 30_000, 1),
    maxInFlight: int(env, 'HERALD_MAX_IN_FLIGHT', 4_096, 1),
    shutdownTimeoutMs: int(env, 'HERALD_SHUTDOWN_TIMEOUT_MS', 10_000, 0),
    logLevel: level as Config['logLevel'],
    fcmEndpoint: httpsUrl(env, 'HERALD_FCM_ENDPOINT') ?? 'https://fcm.googleapis.com',
    apnsEndpoint: httpsUrl(env, 'HERALD_APNS_ENDPOINT'),
    pushProvider: pushProvider(env),
    secretsKey: env.HERALD_SECRETS_KEY ? parseSecretsKey(env.HERALD_SECRETS_KEY, 'HERALD_SECRETS_KEY') : undefined,
    triggerAudienceCeiling: int(env, 'HERALD_TRIGGER_AUDIENCE_CEILING', 10_000, 1),
    scheduleAudienceCeiling: int(env, 'HERALD_SCHEDULE_AUDIENCE_CEILING', 250_000, 1),
  };
}

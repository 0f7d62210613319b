// Assembles Herald: store, migrations, session auth, actors, the uWS front.
import { createServer } from 'node:net';
import { loadNativeUws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './http/uws.js';
import { write } from './http/write-reply.js';
import { ConfigError, reachable, type Config } from './config.js';
import { openStore, type Store } from './store/open.js';
import { migrate } from './store/migrations.js';
import { countDeadLetters } from './store/dead-letters.js';
import { ensureDefaultWorkspace, LOCAL_ADMIN, resolveSecretsKey, resolveSessionAuth } from './auth/bootstrap.js';
import { sessionVerifier, signSessionToken } from './auth/sessions.js';
import { ActorHost } from './actors/host.js';
import { KeyCache } from './auth/key-cache.js';
import { UsageRecorder } from './auth/usage.js';
import { parseRateLimits } from './ratelimit/limits.js';
import { clickHouseAnalytics } from './analytics/clickhouse.js';
import { backends } from './backends.js';
import { createFront } from './http/front.js';
import { errorReply, json, type Reply } from './handlers/reply.js';
import { ROUTES, errorShapeOf } from './routes.js';
import { buildOpenApi } from './http/openapi.js';
import { VERSION } from './version.js';
import { logger, setLogLevel } from './logger.js';
import { enableMetrics } from './metrics/index.js';
import { scrapeText } from './metrics/scrape.js';
import { serveMetrics } from './http/metrics.js';

type Uws = ReturnType<typeof loadNativeUws>;

export interface Herald {
  port: number;
  /** Where GET /metrics is served: the main port's, HERALD_METRICS_PORT's; undefined when metrics are off. */
  metricsPort?: number;
  /** Set when Herald bootstrapped the local default (no secret or OIDC configured). */
  bootstrap?: { workspaceId: string; token: string };
  stop(): Promise<void>;
}

/**
 * `say` reports start-up progress to the operator (the first start creates the database);
 * `fatal` is called when a part Herald cannot serve without is lost for good.
 */
export async function startHerald(cfg: Config, say: (m: string) => void = () => {}, fatal: (err: Error) => void = () => {}): Promise<Herald> {
  setLogLevel(cfg.logLevel);
  const uws = loadNativeUws();
  const limits = parseRateLimits(cfg.rateLimits);
  // Refuse a taken port before creating or starting a database; the exclusive listen at the
  // end still decides a race.
  await assertPortFree(cfg.host, cfg.port);
  if (cfg.metricsPort !== undefined) await assertPortFree(cfg.host, cfg.metricsPort, 'HERALD_METRICS_PORT');
  const store = await openStore(cfg, say, fatal);
  try {
    return await serveOn(cfg, uws, limits, store);
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
}

/** How long a scrape waits for an actor's metrics; one busy longer is left out of that scrape. */
const SCRAPE_ACTOR_TIMEOUT_MS = 2000;

async function serveOn(cfg: Config, uws: Uws, limits: ReturnType<typeof parseRateLimits>, store: Store): Promise<Herald> {
  if (cfg.metrics) enableMetrics('front');
  await migrate(store.db);

  const sessionAuth = resolveSessionAuth(cfg, true)!;
  let bootstrap: Herald['bootstrap'];
  if (sessionAuth.kind === 'hs256' && sessionAuth.generated) {
    const workspaceId = await ensureDefaultWorkspace(store.db);
    bootstrap = { workspaceId, token: await signSessionToken(sessionAuth.secret, { sub: LOCAL_ADMIN }, 24 * 3600) };
  }

  const secrets = resolveSecretsKey(cfg);
  if (secrets.generated && cfg.databaseUrl) {
    logger.warn('HERALD_SECRETS_KEY is not set: push credentials are sealed with the key generated in the data dir; every replica sharing DATABASE_URL needs the same key, so set HERALD_SECRETS_KEY on all of them', { dataDir: cfg.dataDir });
  }

  // Listening before the rest is assembled: the public URL's default names the port bound (port
  // 0 picks one), and the actors build links and callback URLs on it. Until Herald is ready,
  // every request answers 503; a start failing from here on closes the socket.
  const gate: Gate = {};
  const app = uws.App();
  if (cfg.metrics && cfg.metricsPort === undefined) serveMetrics(app, () => (gate.scrape ? gate.scrape() : Promise.resolve('')), false);
  app.any('/*', (res, req) => (gate.onRequest ? gate.onRequest(res, req) : write(res, errorReply('session', 'SERVICE_UNAVAILABLE', 'Herald is starting'), false, true)));
  const { socket, port } = await listenExclusively(uws, app, cfg.host, cfg.port);
  try {
    return await assemble(cfg, uws, limits, store, { socket, port, bootstrap, secrets, sessionAuth, gate });
  } catch (err) {
    uws.us_listen_socket_close(socket);
    throw err;
  }
}

/** What the listening socket serves: set once Herald is assembled. */
interface Gate {
  onRequest?: (res: HttpResponse, req: HttpRequest) => void;
  scrape?: () => Promise<string>;
}

interface Listening {
  socket: us_listen_socket;
  port: number;
  bootstrap: Herald['bootstrap'];
  secrets: ReturnType<typeof resolveSecretsKey>;
  sessionAuth: NonNullable<ReturnType<typeof resolveSessionAuth>>;
  gate: Gate;
}

async function assemble(cfg: Config, uws: Uws, limits: ReturnType<typeof parseRateLimits>, store: Store, { socket, port, bootstrap, secrets, sessionAuth, gate }: Listening): Promise<Herald> {
  // JetStream and NATS KV with NATS_URL, else the store (src/backends.ts). Before the actors,
  // which connect to NATS too: NATS not answering at start is one line (exit 2).
  const parts = cfg.natsUrl ? await reachable('NATS_URL', cfg.natsUrl, backends(cfg, 'herald-front')) : await backends(cfg, 'herald-front');

  // In the error shape of the request's route (README, Errors), like every other error.
  const routes = new Map(ROUTES.map((r) => [r.id, r]));
  const actors = new ActorHost({
    count: cfg.actors,
    script: new URL('../workers/actor.js', import.meta.url),
    store: store.link,
    secretsKey: secrets.key,
    publicUrl: cfg.publicUrl ?? `http://${cfg.host}:${port}`,
    requestTimeoutMs: cfg.requestTimeoutMs,
    unavailable: (why, route) => errorReply(errorShapeOf(routes.get(route)!), 'SERVICE_UNAVAILABLE', `Service unavailable: ${why}`),
  });
  await actors.start();

  const analytics = cfg.clickhouseUrl ? await reachable('CLICKHOUSE_URL', cfg.clickhouseUrl, clickHouseAnalytics(cfg.clickhouseUrl)) : null;
  const sinks = await parts.startSinks(store, analytics);
  const sharedBuckets = await parts.sharedBuckets(limits);
  const keys = new KeyCache(store.db, cfg.keyCacheSize, cfg.keyCacheTtlMs);
  const keyChanges = await parts.keyChanges(store, keys);
  const usage = new UsageRecorder(store.db);
  usage.start();
  const openapi = JSON.stringify(buildOpenApi());

  const probe = (check: Promise<unknown>) =>
    Promise.race([
      check.then(() => 'ok', (e: Error) => `down: ${e.message}`),
      new Promise<string>((r) => setTimeout(() => r('down: no answer within 2 s'), 2000).unref()),
    ]);
  /** The rows of `dead_letters` (null when the store does not answer within the probe's 2 s). */
  const deadLetters = () =>
    Promise.race([countDeadLetters(store.db).catch(() => null), new Promise<null>((r) => setTimeout(() => r(null), 2000).unref())]);
  const health = async (): Promise<Reply> => {
    const [storeState, logState, analyticsState, deadLetterCount] = await Promise.all([
      probe(store.db.query('SELECT 1')),
      probe(parts.ping()),
      analytics ? probe(analytics.ping()) : Promise.resolve('ok'),
      deadLetters(),
    ]);
    const components = {
      store: storeState,
      store_kind: store.kind === 'embedded' ? 'embedded-postgres' : 'postgres',
      log: logState,
      log_kind: parts.logKind,
      // Analytics being down delays analytics only (its sink catches up), so it is reported
      // but does not make Herald unhealthy.
      analytics: analyticsState,
      analytics_kind: analytics ? 'clickhouse' : 'embedded',
      actors: actors.size,
      // Records the sinks set aside (refused for what they carry): reported, never unhealthy.
      dead_letters: deadLetterCount,
    };
    const ok = storeState === 'ok' && logState === 'ok';
    return json(ok ? 200 : 503, { status: ok ? 'ok' : 'unavailable', version: VERSION, components });
  };

  const front = createFront({
    cfg,
    limits,
    sharedBuckets,
    keys,
    keyChanges,
    usage,
    verifySession: sessionVerifier(sessionAuth),
    actors,
    health,
    publicRoutes: { 'GET /openapi.json': () => ({ status: 200, body: openapi }) },
  });

  const scrape = async () => scrapeText(await actors.metrics(SCRAPE_ACTOR_TIMEOUT_MS));
  gate.scrape = scrape;
  gate.onRequest = front.onRequest;
  const metricsApp = cfg.metricsPort === undefined ? null : uws.App();
  if (metricsApp) serveMetrics(metricsApp, scrape, true);
  const metricsListener = metricsApp ? await listenExclusively(uws, metricsApp, cfg.host, cfg.metricsPort!, 'HERALD_METRICS_PORT') : null;
  const metricsPort = metricsListener ? metricsListener.port : cfg.metrics ? port : undefined;
  logger.info('herald listening', { host: cfg.host, port, metricsPort, version: VERSION, actors: cfg.actors, store: store.kind });

  let stopping: Promise<void> | undefined;
  return {
    port,
    metricsPort,
    bootstrap,
    stop: () =>
      (stopping ??= (async () => {
        // Stop accepting, let requests in flight finish, then take the parts down in order.
        uws.us_listen_socket_close(socket);
        if (metricsListener) uws.us_listen_socket_close(metricsListener.socket);
        const until = Date.now() + cfg.shutdownTimeoutMs;
        while (front.inFlight() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
        await actors.stop(Math.max(0, until - Date.now()));
        await sinks.stop();
        await keyChanges.close();
        await sharedBuckets?.close();
        await parts.close();
        await analytics?.close();
        await usage.stop();
        await store.close();
      })()),
  };
}

const portTaken = (host: string, port: number, setting = 'HERALD_PORT') =>
  new ConfigError(`Cannot listen on ${host}:${port}: the port is taken (another Herald?) or the address is not this machine's. Set ${setting} (and HERALD_HOST) to another one.`);

/** What the probe's failure says: HERALD_HOST is no address of this machine, or the port is taken (uWS's own listen tells neither). */
function cannotListen(host: string, port: number, setting: string | undefined, err: NodeJS.ErrnoException): ConfigError {
  const why = err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN' ? 'does not resolve' : err.code === 'EADDRNOTAVAIL' ? 'is not an address of this machine' : undefined;
  if (why === undefined) return portTaken(host, port, setting);
  return new ConfigError(`HERALD_HOST ${host} ${why}: set it to one of this machine's addresses (127.0.0.1, or 0.0.0.0 for all of them).`);
}

/** Probed on port 0 too: a free port then, but HERALD_HOST is tried all the same. */
function assertPortFree(host: string, port: number, setting?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err) => reject(cannotListen(host, port, setting, err)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/**
 * uWS listens with SO_REUSEPORT by default: a second Herald on the same port would start
 * silently and share the traffic. LIBUS_LISTEN_EXCLUSIVE_PORT makes a taken port an error.
 */
function listenExclusively(uws: Uws, app: TemplatedApp, host: string, port: number, setting?: string): Promise<{ socket: us_listen_socket; port: number }> {
  const exclusive = 1; // LIBUS_LISTEN_EXCLUSIVE_PORT
  const listen = app.listen as unknown as (h: string, p: number, options: number, cb: (s: us_listen_socket | false) => void) => void;
  return new Promise((resolve, reject) => {
    listen.call(app, host, port, exclusive, (s) =>
      s
        ? resolve({ socket: s, port: uws.us_socket_local_port(s) })
        : reject(portTaken(host, port, setting)),
    );
  });
}

// Assembles Herald: store, migrations, session auth, actors, the uWS front.
import type { Config } from './config.js';
import { loadNativeUws, type us_listen_socket } from './http/uws.js';
import { openStoreHost } from './store/open.js';
import { migrate } from './store/migrations.js';
import { ensureDefaultWorkspace, LOCAL_ADMIN, resolveSessionAuth } from './auth/bootstrap.js';
import { sessionVerifier, signSessionToken } from './auth/sessions.js';
import { ActorHost } from './actors/host.js';
import { KeyCache } from './auth/key-cache.js';
import { UsageRecorder } from './auth/usage.js';
import { parseRateLimits } from './ratelimit/limits.js';
import { clickHouseSink, jetStreamSink, storeLogSink, type Sink } from './log/event-sink.js';
import { clickHouseAnalytics } from './analytics/clickhouse.js';
import { SharedBuckets } from './ratelimit/shared.js';
import { connectNats, ensureEventStream, streamNames } from './log/jetstream.js';
import { createFront } from './http/front.js';
import { errorReply, json, type Reply } from './http/reply.js';
import { ROUTES, errorShapeOf } from './http/routes.js';
import { buildOpenApi } from './http/openapi.js';
import { VERSION } from './version.js';
import { log, setLogLevel } from './log.js';

export interface Herald {
  port: number;
  /** Set when Herald bootstrapped the local default (no secret or OIDC configured). */
  bootstrap?: { workspaceId: string; token: string };
  stop(): Promise<void>;
}

export async function startHerald(cfg: Config): Promise<Herald> {
  setLogLevel(cfg.logLevel);
  const uws = loadNativeUws();
  const limits = parseRateLimits(cfg.rateLimits);
  const store = await openStoreHost(cfg);
  await migrate(store.db);

  const sessionAuth = resolveSessionAuth(cfg, true)!;
  let bootstrap: Herald['bootstrap'];
  if (sessionAuth.kind === 'hs256' && sessionAuth.generated) {
    const workspaceId = await ensureDefaultWorkspace(store.db);
    bootstrap = { workspaceId, token: await signSessionToken(sessionAuth.secret, { sub: LOCAL_ADMIN }, 24 * 3600) };
  }

  // In the error shape of the request's route (DECISIONS §4), like every other error.
  const routes = new Map(ROUTES.map((r) => [r.id, r]));
  const unavailable = (why: string, route: string): Reply => ({
    ...errorReply(errorShapeOf(routes.get(route)!), 503, 'SERVICE_UNAVAILABLE', `Service unavailable: ${why}`),
    headers: { 'Retry-After': '1' },
  });
  const actors = new ActorHost({
    count: cfg.actors,
    script: new URL('../workers/actor.js', import.meta.url),
    storeLink: () => store.link(),
    requestTimeoutMs: cfg.requestTimeoutMs,
    unavailable,
  });
  await actors.start();

  // The Log: JetStream with NATS_URL, else the store's own log table; its sink feeds the store
  // and, unless ClickHouse is configured (which needs NATS_URL), the embedded analytics table.
  const nats = cfg.natsUrl ? await connectNats(cfg.natsUrl, 'herald-front') : null;
  const names = streamNames(cfg.natsPrefix);
  const analytics = cfg.clickhouseUrl ? await clickHouseAnalytics(cfg.clickhouseUrl) : null;
  if (nats) await ensureEventStream(nats, names, analytics !== null);
  const sinks: Sink[] = nats ? [jetStreamSink(store.db, nats, names, cfg.sinkIdleMs, analytics === null)] : [storeLogSink(store.db, cfg.sinkIdleMs)];
  if (nats && analytics) sinks.push(clickHouseSink(analytics, nats, names, cfg.sinkIdleMs));
  for (const s of sinks) s.start();

  const sharedBuckets = nats ? await SharedBuckets.open(nats, cfg.natsPrefix, limits) : null;
  const keys = new KeyCache(store.db, cfg.keyCacheSize);
  const usage = new UsageRecorder(store.db);
  usage.start();
  const openapi = JSON.stringify(buildOpenApi());

  const probe = (check: Promise<unknown>) =>
    Promise.race([
      check.then(() => 'ok', (e: Error) => `down: ${e.message}`),
      new Promise<string>((r) => setTimeout(() => r('down: no answer within 2 s'), 2000).unref()),
    ]);
  const health = async (): Promise<Reply> => {
    const [storeState, logState, analyticsState] = await Promise.all([
      probe(store.db.query('SELECT 1')),
      nats ? probe(nats.flush()) : Promise.resolve('ok'),
      analytics ? probe(analytics.ping()) : Promise.resolve('ok'),
    ]);
    const components = {
      store: storeState,
      store_kind: cfg.databaseUrl ? 'postgres' : 'pglite',
      log: logState,
      log_kind: nats ? 'jetstream' : 'store',
      // Analytics being down delays analytics only (its sink catches up), so it is reported
      // but does not make Herald unhealthy.
      analytics: analyticsState,
      analytics_kind: analytics ? 'clickhouse' : 'embedded',
      actors: actors.size,
    };
    const ok = storeState === 'ok' && logState === 'ok';
    return json(ok ? 200 : 503, { status: ok ? 'ok' : 'unavailable', version: VERSION, components });
  };

  const front = createFront({
    cfg,
    limits,
    sharedBuckets,
    keys,
    usage,
    verifySession: sessionVerifier(sessionAuth),
    actors,
    publicHandlers: { 'GET /healthz': health, 'GET /openapi.json': () => ({ status: 200, body: openapi }) },
  });

  const app = uws.App();
  app.any('/*', front.onRequest);
  const { socket, port } = await new Promise<{ socket: us_listen_socket; port: number }>((resolve, reject) => {
    app.listen(cfg.host, cfg.port, (s) => (s ? resolve({ socket: s, port: uws.us_socket_local_port(s) }) : reject(new Error(`cannot listen on ${cfg.host}:${cfg.port}`))));
  });
  log.info('herald listening', { host: cfg.host, port, version: VERSION, actors: cfg.actors, store: cfg.databaseUrl ? 'postgres' : 'pglite' });

  let stopping: Promise<void> | undefined;
  return {
    port,
    bootstrap,
    stop: () =>
      (stopping ??= (async () => {
        // Stop accepting, let requests in flight finish, then take the parts down in order.
        uws.us_listen_socket_close(socket);
        const until = Date.now() + cfg.shutdownTimeoutMs;
        while (front.inFlight() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
        await actors.stop(Math.max(0, until - Date.now()));
        await Promise.all(sinks.map((s) => s.stop()));
        await sharedBuckets?.close();
        await nats?.drain();
        await analytics?.close();
        await usage.stop();
        await store.close();
      })()),
  };
}

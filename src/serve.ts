// `herald start` / `npm start`: serve until SIGTERM or SIGINT, then shut down cleanly (exit 0).
import { loadConfig } from './config.js';
import { startHerald } from './server.js';
import { logger } from './logger.js';
import { boundHeapGrowth } from './util/heap-growth.js';

/**
 * The signal that cuts a shutdown short. A signal to `npm start`'s process group reaches Herald
 * twice (directly and forwarded by npm), so the second is no reason to give up on draining;
 * the third is someone insisting. The embedded PostgreSQL is stopped on that way out too (its
 * exit hook, store/embedded-postgres.ts).
 */
const FORCE_AT = 3;

export async function serve(): Promise<void> {
  const cfg = loadConfig();
  boundHeapGrowth(cfg.heapGrowthPercent);
  const say = (m: string) => void process.stdout.write(m + '\n');
  // A part Herald cannot serve without is gone for good (the embedded PostgreSQL would not
  // restart): exit non-zero so a supervisor restarts Herald, rather than serving errors.
  const fatal = (err: Error) => {
    logger.error('fatal', { err });
    process.stderr.write(`herald: ${err.message}\n`);
    process.exit(1);
  };
  const starting = startHerald(cfg, say, fatal);

  // Listening from the start: a signal while the database is still being created or migrated
  // shuts down once started (a failed start is reported by the caller, not here).
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals === 1) {
      logger.info('shutting down', { signal });
      void starting.then(
        (herald) => herald.stop().then(() => process.exit(0), (err: Error) => fatal(new Error(`shutdown failed: ${err.message}`))),
        () => {},
      );
    } else if (signals < FORCE_AT) {
      logger.warn('already shutting down; a third signal forces the exit', { signal });
    } else {
      process.stderr.write(`herald: ${signal} again: exiting before the shutdown finished\n`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const herald = await starting;
  const base = `http://${cfg.host}:${herald.port}`;
  say(`Herald listening on ${base} (API at ${base}/api/v1)`);
  if (herald.metricsPort !== undefined) say(`Metrics at http://${cfg.host}:${herald.metricsPort}/metrics`);
  if (cfg.pushProvider === 'sandbox') {
    say('Pushes go to the sandbox provider (nothing reaches a device) until a workspace sets push credentials (HERALD_PUSH_PROVIDER=sandbox)');
  }
  if (herald.bootstrap) {
    const link = `${cfg.publicUrl ?? base}/dashboard/#token=${herald.bootstrap.token}`;
    say(`Default workspace: ${herald.bootstrap.workspaceId}\nSession token for local-admin (valid 24 h):\n${herald.bootstrap.token}\nSign in to the dashboard: ${link}`);
  }
}

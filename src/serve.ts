// `herald start` / `npm start`: serve until SIGTERM or SIGINT, then shut down cleanly (exit 0).
import { loadConfig } from './config.js';
import { startHerald } from './server.js';
import { logger } from './logger.js';
import { boundHeapGrowth } from './util/heap-growth.js';

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
  const herald = await startHerald(cfg, say, fatal);
  const base = `http://${cfg.host}:${herald.port}`;
  say(`Herald listening on ${base} (API at ${base}/api/v1)`);
  if (herald.bootstrap) {
    const link = `${cfg.publicUrl ?? base}/dashboard/#token=${herald.bootstrap.token}`;
    say(`Default workspace: ${herald.bootstrap.workspaceId}\nSession token for local-admin (valid 24 h):\n${herald.bootstrap.token}\nSign in to the dashboard: ${link}`);
  }
  const shutdown = (signal: string) => {
    logger.info('shutting down', { signal });
    herald.stop().then(
      () => process.exit(0),
      (err) => fatal(new Error(`shutdown failed: ${(err as Error).message}`)),
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

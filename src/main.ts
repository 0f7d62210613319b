// `herald` / `npm start`: serve until SIGTERM or SIGINT, then shut down cleanly (exit 0).
import { loadConfig } from './config.js';
import { startHerald } from './server.js';
import { log } from './log.js';

export async function serve(): Promise<void> {
  const cfg = loadConfig();
  const herald = await startHerald(cfg);
  const base = `http://${cfg.host}:${herald.port}`;
  process.stdout.write(`Herald listening on ${base} (API at ${base}/api/v1)\n`);
  if (herald.bootstrap) {
    process.stdout.write(
      `Default workspace: ${herald.bootstrap.workspaceId}\n` +
        `Session token for local-admin (valid 24 h):\n${herald.bootstrap.token}\n`,
    );
  }
  const shutdown = (signal: string) => {
    log.info('shutting down', { signal });
    herald.stop().then(
      () => process.exit(0),
      (err) => {
        log.error('shutdown failed', { err });
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

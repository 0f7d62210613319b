// Where the store is: DATABASE_URL (an external PostgreSQL), or the embedded PostgreSQL that
// Herald runs in HERALD_DATA_DIR (the default). Either way every thread opens its own small
// `pg` pool on the same URL; there is one store path.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { ConfigError, reachable } from '../config.js';
import type { Db } from './db.js';
import { openPostgres } from './pg.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded-postgres.js';
import { lockDataDir } from './data-dir-lock.js';
import { logger } from '../logger.js';

/** What a worker thread needs to open its own Db. */
export interface StoreLink {
  url: string;
  poolSize: number;
}

export interface Store {
  db: Db;
  kind: 'embedded' | 'external';
  /** For each thread that opens its own pool. */
  link: StoreLink;
  /** Another pool on the same server, for work that must not queue behind the front's queries (the caller closes it). */
  openPool(size: number): Db;
  close(): Promise<void>;
}

const RESTARTS = 3;

/**
 * Opens the store. `fatal` is called when the embedded server died and could not be started
 * again: Herald then exits non-zero rather than serving without a database.
 */
export async function openStore(cfg: Config, say: (m: string) => void, fatal: (err: Error) => void): Promise<Store> {
  if (cfg.databaseUrl) {
    const db = openPostgres(cfg.databaseUrl, 2);
    const url = cfg.databaseUrl;
    await reachable('DATABASE_URL', url, db.query('SELECT 1')).catch(async (err: unknown) => {
      await db.close();
      throw err;
    });
    return { db, kind: 'external', link: { url, poolSize: cfg.pgPoolSize }, openPool: (size) => openPostgres(url, size), close: () => db.close() };
  }
  mkdirSync(cfg.dataDir, { recursive: true });
  if (existsSync(join(cfg.dataDir, 'pglite'))) {
    throw new ConfigError(
      `${cfg.dataDir} holds a database in the PGlite layout of Herald 0.1 (${join(cfg.dataDir, 'pglite')}), which this version no longer reads: ` +
        `the embedded store is now a real PostgreSQL in ${join(cfg.dataDir, 'pg')}. Start with a new HERALD_DATA_DIR, or move the old one away ` +
        `(its data can be exported with Herald 0.1's API first).`,
    );
  }
  const lock = lockDataDir(cfg.dataDir);
  let server: EmbeddedPostgres;
  try {
    server = await startEmbeddedPostgres(cfg.dataDir, say);
  } catch (err) {
    lock.release();
    throw err;
  }
  superviseRestarts(server, fatal);
  const db = openPostgres(server.url, 2);
  return {
    db,
    kind: 'embedded',
    link: { url: server.url, poolSize: cfg.pgPoolSize },
    openPool: (size) => openPostgres(server.url, size),
    async close() {
      await db.close();
      await server.stop();
      lock.release();
    },
  };
}

/** A server that exits on its own is started again (pools reconnect to the same port); after RESTARTS failures in a row, `fatal`. */
function superviseRestarts(server: EmbeddedPostgres, fatal: (err: Error) => void): void {
  let failures = 0;
  const restart = async (): Promise<void> => {
    for (;;) {
      try {
        await server.restart();
        failures = 0;
        logger.warn('the embedded PostgreSQL server is running again', { dir: server.dir });
        return;
      } catch (err) {
        if (++failures >= RESTARTS) return fatal(new Error(`the embedded PostgreSQL server could not be restarted: ${(err as Error).message}`));
        await new Promise((r) => setTimeout(r, 500 * failures));
      }
    }
  };
  server.onExit((code, signal) => {
    logger.error('the embedded PostgreSQL server exited; starting it again', { code, signal, dir: server.dir });
    void restart();
  });
}

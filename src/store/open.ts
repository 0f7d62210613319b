// How each thread gets its Db: with DATABASE_URL every thread opens its own small pg pool;
// on the embedded default the main thread starts the store thread (PGlite) and hands every
// other thread a MessagePort to it.
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import type { Db } from './db.js';
import { openPostgres } from './pg.js';
import { pgliteClient } from './pglite-client.js';
import type { StoreWorkerData } from '../../workers/store.js';

/** What a worker thread needs to open its own Db. */
export type StoreLink = { kind: 'postgres'; url: string; poolSize: number } | { kind: 'pglite'; port: MessagePort };

export interface StoreHost {
  db: Db;
  /** A link for one more thread; transfer `transfer` along with it. */
  link(): { link: StoreLink; transfer: MessagePort[] };
  close(): Promise<void>;
}

export function openLinkedDb(link: StoreLink): Db {
  return link.kind === 'postgres' ? openPostgres(link.url, link.poolSize) : pgliteClient(link.port);
}

export async function openStoreHost(cfg: Config): Promise<StoreHost> {
  if (cfg.databaseUrl) {
    const url = cfg.databaseUrl;
    const db = openPostgres(url, 2);
    return {
      db,
      link: () => ({ link: { kind: 'postgres', url, poolSize: cfg.pgPoolSize }, transfer: [] }),
      close: () => db.close(),
    };
  }
  const dataDir = join(cfg.dataDir, 'pglite');
  mkdirSync(dataDir, { recursive: true });
  const data: StoreWorkerData = { dataDir, sharedBuffers: cfg.pgliteSharedBuffers };
  if (!existsSync(join(dataDir, 'PG_VERSION'))) {
    // Creating the database (initdb) takes ~800 MB that PGlite keeps for its lifetime; do it
    // in a thread of its own that then exits, so the serving store starts small.
    const initdb = await startStoreThread(data);
    await stopStoreThread(initdb);
  }
  const worker = await startStoreThread(data);
  worker.on('error', (err) => {
    process.stderr.write(`store thread failed: ${err.stack ?? err}\n`);
    process.exit(1);
  });
  const connect = (): MessagePort => {
    const { port1, port2 } = new MessageChannel();
    worker.postMessage({ type: 'connect', port: port1 }, [port1]);
    return port2;
  };
  const db = pgliteClient(connect());
  return {
    db,
    link: () => {
      const port = connect();
      return { link: { kind: 'pglite', port }, transfer: [port] };
    },
    async close() {
      await db.close();
      await stopStoreThread(worker);
    },
  };
}

async function startStoreThread(data: StoreWorkerData): Promise<Worker> {
  const worker = new Worker(new URL('../../workers/store.js', import.meta.url), { workerData: data });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`store thread exited with code ${code} while starting`)));
  });
  return worker;
}

async function stopStoreThread(worker: Worker): Promise<void> {
  const closed = new Promise((r) => worker.once('message', r));
  worker.postMessage({ type: 'close' });
  await closed;
  await worker.terminate();
}

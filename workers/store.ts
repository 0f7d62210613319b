// The store thread: the one owner of PGlite (it is single-connection and cannot be shared
// between threads). Every other thread reaches it through a MessagePort it was handed with
// a 'connect' message; see src/store/pglite-client.ts.
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { StoreReply, StoreRequest } from '../src/store/pglite-protocol.js';
import { parseTimestamptz, TIMESTAMPTZ_OID } from '../src/store/timestamptz.js';

export interface StoreWorkerData {
  dataDir: string;
  sharedBuffers: string;
}

const { dataDir, sharedBuffers } = workerData as StoreWorkerData;
const db = await PGlite.create({
  dataDir,
  // Keep PGlite's resident memory modest: it runs beside the front and the actors.
  postgresqlconf: [`shared_buffers=${sharedBuffers}`, 'work_mem=4MB', 'maintenance_work_mem=16MB', 'temp_buffers=4MB'],
  parsers: { [TIMESTAMPTZ_OID]: parseTimestamptz },
});

interface OpenTx {
  tx: Transaction;
  finish: (commit: boolean) => void;
  done: Promise<void>;
  port: MessagePort;
}
const open = new Map<number, OpenTx>();
let nextTx = 1;

function fail(err: unknown): { ok: false; message: string; code?: string } {
  const e = err as { message?: string; code?: string };
  return { ok: false, message: e?.message ?? String(err), code: e?.code };
}

async function handle(port: MessagePort, req: StoreRequest): Promise<StoreReply> {
  try {
    switch (req.op) {
      case 'query': {
        const target = req.tx === undefined ? db : open.get(req.tx)?.tx;
        if (!target) return { id: req.id, ...fail(new Error('transaction is not open')) };
        const r = await target.query(req.sql, req.params);
        return { id: req.id, ok: true, rows: r.rows, rowCount: r.affectedRows ?? r.rows.length };
      }
      case 'exec': {
        const target = req.tx === undefined ? db : open.get(req.tx)?.tx;
        if (!target) return { id: req.id, ...fail(new Error('transaction is not open')) };
        await target.exec(req.sql);
        return { id: req.id, ok: true, rows: [], rowCount: 0 };
      }
      case 'begin': {
        const txId = nextTx++;
        // PGlite holds its exclusive lock for the lifetime of the callback: other queries
        // wait until this transaction ends, which is the isolation the callers expect.
        const started = new Promise<void>((ready) => {
          const done = db
            .transaction(
              (tx) =>
                new Promise<void>((resolve, reject) => {
                  open.set(txId, { tx, port, done, finish: (commit) => (commit ? resolve() : reject(new Error('rollback'))) });
                  ready();
                }),
            )
            .finally(() => open.delete(txId));
          done.catch(() => {});
        });
        await started;
        return { id: req.id, ok: true, rows: [], rowCount: 0, tx: txId };
      }
      case 'end': {
        const t = open.get(req.tx);
        if (!t) return { id: req.id, ...fail(new Error('transaction is not open')) };
        t.finish(req.commit);
        try {
          await t.done;
        } catch (err) {
          if (req.commit) throw err;
        }
        return { id: req.id, ok: true, rows: [], rowCount: 0 };
      }
    }
  } catch (err) {
    return { id: req.id, ...fail(err) };
  }
}

function attach(port: MessagePort): void {
  port.on('message', (req: StoreRequest) => {
    void handle(port, req).then((reply) => port.postMessage(reply));
  });
  // A client thread that died mid-transaction must not hold the store's lock forever.
  port.on('close', () => {
    for (const t of open.values()) if (t.port === port) t.finish(false);
  });
}

parentPort!.on('message', async (msg: { type: 'connect'; port: MessagePort } | { type: 'close' }) => {
  if (msg.type === 'connect') attach(msg.port);
  else {
    await db.close();
    parentPort!.postMessage({ type: 'closed' });
  }
});
parentPort!.postMessage({ type: 'ready' });

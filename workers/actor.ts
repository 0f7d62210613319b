// An actor thread: owns the per-workspace state of the workspaces that hash to it and runs
// their requests (src/actors/pipeline.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { loadConfig } from '../src/config.js';
import { openLinkedDb } from '../src/store/open.js';
import { parseRateLimits } from '../src/ratelimit/limits.js';
import { createPipeline } from '../src/actors/pipeline.js';
import { handlers } from '../src/actors/handlers.js';
import { resumeMerges } from '../src/domain/merges.js';
import { storeLog } from '../src/log/log.js';
import { jetStreamLog, streamNames } from '../src/log/jetstream.js';
import { shardOf } from '../src/actors/host.js';
import type { ActorWorkerData, FromActor, ToActor } from '../src/actors/protocol.js';

const { store, index } = workerData as ActorWorkerData;
const cfg = loadConfig();
const db = openLinkedDb(store);
const eventLog = cfg.natsUrl ? await jetStreamLog(cfg.natsUrl, streamNames(cfg.natsPrefix), `herald-actor-${index}`) : storeLog(db);
const handle = createPipeline(db, eventLog, parseRateLimits(cfg.rateLimits), handlers);
// Anonymous merges a restart interrupted, for the workspaces this actor owns.
void resumeMerges(db, (ws) => shardOf(ws, cfg.actors) === index);
const port = parentPort!;
const send = (m: FromActor) => port.postMessage(m);

port.on('message', (m: ToActor) => {
  if (m.type === 'request') {
    void handle(m.req).then((reply) => send({ type: 'reply', id: m.req.id, reply }));
  } else {
    void eventLog
      .close()
      .then(() => db.close())
      .finally(() => process.exit(0));
  }
});
send({ type: 'ready' });

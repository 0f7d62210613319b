// Runs the actor threads. Every workspace has exactly one owning actor (a hash of its id),
// so per-workspace state (rate-limit buckets and, later, caps and idempotency claims) has a
// single writer. An actor that dies is replaced; its requests in flight answer 503.
import { Worker } from 'node:worker_threads';
import type { Reply } from '../handlers/reply.js';
import type { RouteId } from '../routes.js';
import type { ActorRequest, FromActor, ToActor, ActorWorkerData } from './protocol.js';
import type { StoreLink } from '../store/index.js';
import type { MetricsJson } from '../metrics/scrape.js';
import { logger } from '../logger.js';
import { Batcher } from '../util/batcher.js';
import { shardOf } from '../util/shard.js';

interface Pending {
  actor: number;
  route: RouteId;
  deadline: number;
  resolve: (r: Reply) => void;
}

export interface ActorHostOptions {
  count: number;
  script: URL;
  /** How each (re)started actor opens its store. */
  store: StoreLink;
  /** The key sealing push credentials, handed to each actor. */
  secretsKey: Buffer;
  /** The base of links and callback URLs, handed to each actor. */
  publicUrl: string;
  requestTimeoutMs: number;
  /** The 503 answer to a request of route `route` (in that route's error shape). */
  unavailable: (why: string, route: RouteId) => Reply;
}

export class ActorHost {
  private readonly workers: Worker[] = [];
  /** Each worker's requests of the current turn, posted together at its end. */
  private readonly outboxes: Batcher<ActorRequest>[] = [];
  private readonly pending = new Map<number, Pending>();
  /** Metrics asked of the actors, by id: each settles with the actor's answer. */
  private readonly scrapes = new Map<number, (m: MetricsJson) => void>();
  private nextId = 1;
  private stopping = false;
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly opts: ActorHostOptions) {
    // One timer for all requests: any request older than the timeout answers 503.
    this.sweep = setInterval(() => this.expire(), Math.min(1000, opts.requestTimeoutMs)).unref();
  }

  get inFlight(): number {
    return this.pending.size;
  }

  get size(): number {
    return this.opts.count;
  }

  async start(): Promise<void> {
    await Promise.all(Array.from({ length: this.opts.count }, (_, i) => this.spawn(i)));
  }

  private spawn(index: number): Promise<void> {
    const data: ActorWorkerData = { index, store: this.opts.store, secretsKey: this.opts.secretsKey.toString('hex'), publicUrl: this.opts.publicUrl };
    const w = new Worker(this.opts.script, { workerData: data });
    this.workers[index] = w;
    this.outboxes[index] = new Batcher(async (reqs) => {
      const transfer = reqs.flatMap((r) => (r.body ? [r.body.buffer as ArrayBuffer] : []));
      w.postMessage({ type: 'requests', reqs } satisfies ToActor, transfer);
    }, Infinity);
    const ready = new Promise<void>((resolve, reject) => {
      w.on('message', (m: FromActor) => {
        if (m.type === 'ready') resolve();
        else if (m.type === 'metrics') this.scrapes.get(m.id)?.(m.metrics);
        else for (const r of m.replies) this.settle(r.id, r.reply);
      });
      w.once('exit', (code) => reject(new Error(`actor ${index} exited with code ${code} while starting`)));
    });
    w.on('error', (err) => logger.error('actor failed', { actor: index, err }));
    w.on('exit', (code) => {
      if (this.workers[index] !== w) return;
      this.failActor(index, 'actor restarted');
      if (this.stopping) return;
      logger.error('actor exited; restarting it', { actor: index, code });
      this.spawn(index).catch((err) => logger.error('actor restart failed', { actor: index, err }));
    });
    return ready;
  }

  dispatch(shardKey: string, req: Omit<ActorRequest, 'id' | 'deadline'>): Promise<Reply> {
    if (this.stopping) return Promise.resolve(this.opts.unavailable('shutting down', req.route));
    const actor = shardOf(shardKey, this.opts.count);
    const id = this.nextId++;
    const deadline = Date.now() + this.opts.requestTimeoutMs;
    return new Promise<Reply>((resolve) => {
      this.pending.set(id, { actor, route: req.route, deadline, resolve });
      this.outboxes[actor]!.add({ ...req, id, deadline });
    });
  }

  /** Each actor's metrics, from those that answer within `timeoutMs` (a busy or restarting one is left out of this scrape). */
  async metrics(timeoutMs: number): Promise<MetricsJson[]> {
    const asked = this.workers.map(
      (w) =>
        new Promise<MetricsJson | null>((resolve) => {
          const id = this.nextId++;
          const done = (m: MetricsJson | null) => {
            clearTimeout(timer);
            this.scrapes.delete(id);
            resolve(m);
          };
          const timer = setTimeout(() => done(null), timeoutMs);
          this.scrapes.set(id, done);
          w.postMessage({ type: 'metrics', id } satisfies ToActor);
        }),
    );
    return (await Promise.all(asked)).filter((m) => m !== null);
  }

  private settle(id: number, reply: Reply): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    p.resolve(reply);
  }

  private failActor(index: number, why: string): void {
    for (const [id, p] of this.pending) if (p.actor === index) this.settle(id, this.opts.unavailable(why, p.route));
  }

  private expire(): void {
    const now = Date.now();
    for (const [id, p] of this.pending) if (p.deadline <= now) this.settle(id, this.opts.unavailable('request timed out', p.route));
  }

  /** Waits for requests in flight (up to timeoutMs), then stops every actor. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopping = true;
    const until = Date.now() + timeoutMs;
    while (this.pending.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    clearInterval(this.sweep);
    await Promise.all(
      this.workers.map(async (w) => {
        const stopped = new Promise<void>((r) => w.once('exit', () => r()));
        w.postMessage({ type: 'stop' } satisfies ToActor);
        const timer = setTimeout(() => void w.terminate(), 5000);
        await stopped;
        clearTimeout(timer);
      }),
    );
  }
}

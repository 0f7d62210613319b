// The render pool: Liquid rendering off the actor thread (ARCHITECTURE "Isolation between
// workspaces"). A template is tenant-controlled CPU; rendered on the actor, one workspace's
// nested loops stalled every other workspace the actor owns (issue 22: 13.6 s). Here each send
// is one task on a piscina thread, within a budget per recipient and per send
// (domain/templates.ts renderAll), and the actor thread only awaits the outcome.
//
// Where it lives: one pool per actor thread, created in workers/actor.ts. A piscina instance
// cannot be shared between threads; one pool per process would sit in the main thread, and every
// render would cross the front's event loop twice (actor → front → render thread and back),
// structured-cloned there, on the hot path this design keeps lean. An actor's pool serves exactly
// the workspaces that share that actor, which is where they could hurt each other; it stops
// with its actor (a restarted actor starts a new one).
//
// Fairness: piscina is given at most `threads` tasks at once (its own queue is first come, first
// served); the rest wait here in one queue per workspace, and a free thread takes the next send
// of the workspace served least recently (round-robin; one that just arrived goes first). A
// workspace's queue of expensive sends therefore delays another workspace's send by at most one
// task per thread, each bounded by its send budget (three, when the hard stop has to end it).
//
// Budgets are wall-clock time in the render thread (Node 20 has no per-thread CPU clock; a
// render thread does nothing else, so its wall clock is its CPU time unless the machine is
// oversubscribed). liquidjs's renderLimit, set to what is left of the budget, is the cooperative
// stop; a task still running two to three send budgets after it started (a template that never
// yields) is aborted: piscina terminates that thread and starts another, and every recipient of
// the send fails with the budget error. "Started" is flagged by the render thread itself in
// shared memory, so a thread still starting (the first send, a replaced thread) costs no budget.
import { Piscina } from 'piscina';
import { DomainError } from '../domain/errors.js';
import { budgetSpent, hasTemplates, renderContent, type CompiledContent, type PushContent, type RenderBudget, type RenderOutcome, type TemplateScope } from '../domain/templates.js';

/** What a render thread (workers/render.ts) is given: one send's content and its recipients' scopes. */
export interface RenderTask {
  content: PushContent;
  /** Compiled by compileFields: errors name the fields as themselves. */
  fields: boolean;
  scopes: readonly TemplateScope[];
  budget: RenderBudget;
  /** Shared memory: set to 1 by the render thread when it starts the task. */
  started: Int32Array;
}

export interface RenderPoolOptions {
  /** Render threads of this pool. */
  threads: number;
  budget: RenderBudget;
  /** Sends one workspace may have waiting for a thread; past it a send is refused with 503. */
  queuePerWorkspace: number;
  /** The render thread's script; the compiled workers/render.js unless a test gives another. */
  script?: URL;
}

interface Job {
  task: RenderTask;
  resolve: (outcomes: RenderOutcome[]) => void;
  reject: (err: unknown) => void;
}

/** A workspace with sends waiting or running. */
interface Tenant {
  workspaceId: string;
  jobs: Job[];
  running: number;
  /** When it was last served (the pool's turn count); 0: not yet. */
  served: number;
}

/** The render thread's heap: what a render may allocate is bounded by liquidjs; this bounds what slips past it. */
const THREAD_HEAP_MB = 256;

/**
 * Checks (one per send budget) that must find a task started before it is aborted: 3, so it
 * runs at least two budgets, and a send stopped cooperatively at one budget (its recipients
 * rendered so far kept) is never cut short.
 */
const HARD_STOP_TICKS = 3;

export class RenderPool {
  private readonly pool: Piscina<RenderTask, RenderOutcome[]>;
  private readonly tenants = new Map<string, Tenant>();
  /** The tasks on the threads (at most `threads`). */
  private readonly running = new Set<Promise<void>>();
  private turn = 0;
  private closed = false;

  constructor(private readonly opts: RenderPoolOptions) {
    this.pool = new Piscina({
      filename: (opts.script ?? new URL('../../workers/render.js', import.meta.url)).href,
      minThreads: opts.threads,
      maxThreads: opts.threads,
      idleTimeout: Infinity,
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB },
    });
  }

  /**
   * One content rendered for each recipient (one outcome each, in order): a send is one task
   * however many recipients it has. Content without templates is copied here, with no hop.
   * Throws SERVICE_UNAVAILABLE when the workspace already has too many sends waiting.
   */
  render(workspaceId: string, content: CompiledContent, scopes: readonly TemplateScope[]): Promise<RenderOutcome[]> {
    if (scopes.length === 0) return Promise.resolve([]);
    if (!hasTemplates(content)) return Promise.resolve(scopes.map((s) => ({ content: renderContent(content, s) })));
    if (this.closed) return Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'Template rendering is shutting down'));
    let tenant = this.tenants.get(workspaceId);
    if (!tenant) this.tenants.set(workspaceId, (tenant = { workspaceId, jobs: [], running: 0, served: 0 }));
    if (tenant.jobs.length >= this.opts.queuePerWorkspace) {
      return Promise.reject(new DomainError('SERVICE_UNAVAILABLE', `Too many sends of this workspace are waiting for template rendering (${this.opts.queuePerWorkspace}); retry shortly`));
    }
    return new Promise((resolve, reject) => {
      const started = new Int32Array(new SharedArrayBuffer(4));
      tenant.jobs.push({ task: { content: content.source, fields: content.fields, scopes, budget: this.opts.budget, started }, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.running.size < this.opts.threads) {
      let next: Tenant | undefined;
      for (const t of this.tenants.values()) if (t.jobs.length > 0 && (!next || t.served < next.served)) next = t;
      if (!next) return;
      next.served = ++this.turn;
      this.run(next, next.jobs.shift()!);
    }
  }

  private run(tenant: Tenant, job: Job): void {
    tenant.running++;
    const { budget, scopes, started } = job.task;
    const abort = new AbortController();
    // Checked every send budget; the checks that find the task started are counted.
    let ticks = 0;
    const hardStop = setInterval(() => {
      if (Atomics.load(started, 0) === 1 && ++ticks === HARD_STOP_TICKS) abort.abort();
    }, budget.sendMs);
    const task = this.pool
      .run(job.task, { signal: abort.signal })
      .then(job.resolve, (err: unknown) => {
        if (abort.signal.aborted) job.resolve(budgetSpent(scopes.length, `${budget.sendMs} ms per send`));
        else if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') job.resolve(budgetSpent(scopes.length, `${THREAD_HEAP_MB} MB of memory`));
        else job.reject(err);
      })
      .finally(() => {
        clearInterval(hardStop);
        this.running.delete(task);
        tenant.running--;
        // Idle again: forgotten, so the map holds only workspaces with work here.
        if (tenant.running === 0 && tenant.jobs.length === 0) this.tenants.delete(tenant.workspaceId);
        this.pump();
      });
    this.running.add(task);
  }

  /** Refuses new sends, fails those still waiting, lets the running ones finish, and stops the threads. */
  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.tenants.values()) for (const job of t.jobs.splice(0)) job.reject(new DomainError('SERVICE_UNAVAILABLE', 'Template rendering is shutting down'));
    // Each is bounded by its hard stop.
    await Promise.all(this.running);
    await this.pool.destroy();
  }
}

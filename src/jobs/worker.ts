// The loop every kind of durable job runs in (store/job-queue.ts), one per kind in each actor:
// the actor's workspaces with waiting jobs take turns (util/turns.ts) at its page slots, one page
// (one claim) per turn, the next turn to the next workspace in line, at most `workspacePages` of
// the pages in flight one workspace's. So a workspace with a huge backlog gets a page per round
// like any other, and one whose pages are stuck (a slow provider) holds its own slots while the
// others are served in the rest.
//
// While a page runs its leases are renewed (LEASE.renewMs); the lapsed claims of every holder
// end at the first look and then every renewal period, as their kind says (store/job-queue.ts);
// a page that throws gives its jobs back the same way at once.
import type { Db } from '../store/db.js';
import { claimJobs, endLapsed, giveBack, LEASE, renewLeases, workspacesWaiting, type JobTable } from '../store/job-queue.js';
import type { Claimant } from '../store/leases.js';
import { logger } from '../logger.js';
import { Turns } from '../util/turns.js';

export interface JobWorkerOptions<J> {
  readonly table: JobTable;
  /** Whose workspaces: the actor's shard (the default), or every other shard's (jobs any actor may share). */
  readonly of?: 'shard' | 'others';
  /** Jobs a page (one claim). */
  readonly page: number;
  /** Pages of one workspace under way at once… */
  readonly workspacePages: number;
  /** …and in all. */
  readonly pagesInFlight: number;
  /** How often waiting workspaces are looked for while there is nothing to do or much (a nudge looks sooner). */
  readonly pollMs: number;
  /** Runs a claimed page and completes its jobs (its kind's own statements); a throw gives them back. */
  readonly run: (workspaceId: string, jobs: J[]) => Promise<void>;
  /** Called when every workspace in line has had a page end since the last call (a round). */
  readonly afterRound?: () => void;
}

export class JobWorker<J extends { id: string }> {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private nudged = false;
  /** A page ended since the last pass: its slot (and its workspace's turn) is free. */
  private freed = false;
  private heartbeat: NodeJS.Timeout | undefined;
  /** Jobs claimed here and not yet completed. */
  private readonly inFlight = new Set<string>();
  private lastLapseCheck = 0;
  private readonly turns: Turns<string>;
  /** The workspaces whose page ended in the round under way. */
  private readonly served = new Set<string>();
  private readonly pages = new Set<Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly claimant: Claimant,
    private readonly opts: JobWorkerOptions<J>,
  ) {
    this.turns = new Turns(opts.workspacePages);
  }

  start(): void {
    this.loop = this.run();
    this.heartbeat = setInterval(() => {
      void renewLeases(this.db, this.opts.table, [...this.inFlight]).catch((err) => logger.warn(`${this.opts.table.name}: renewing leases failed`, { err }));
    }, LEASE.renewMs);
  }

  /** Looks for waiting workspaces now (jobs were just added). */
  nudge(): void {
    this.nudged = true;
    this.wake?.();
  }

  /** Finishes the pages in flight, then stops. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    clearInterval(this.heartbeat);
  }

  private async run(): Promise<void> {
    let lastLook = 0;
    while (!this.stopped) {
      try {
        // After a nudge or a quiet wait, and every pollMs while busy (jobs coming due, a
        // workspace another replica drained).
        if (this.nudged || Date.now() - lastLook >= this.opts.pollMs) {
          this.nudged = false;
          lastLook = Date.now();
          await this.look();
        }
        this.freed = false;
        await this.startPages();
      } catch (err) {
        logger.error(`${this.opts.table.name}: poll failed`, { err });
      }
      if (this.stopped) break;
      // Until a page ends (a slot and maybe a workspace's turn free up), a nudge, or the next look.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(0, lastLook + this.opts.pollMs - Date.now()));
        function done() {
          clearTimeout(timer);
          resolve();
        }
        this.wake = done;
        if (this.nudged || this.freed) done();
      });
      this.wake = undefined;
    }
    await Promise.all(this.pages);
  }

  /** Lapsed claims end (at the first look, then every renewal period); the waiting workspaces join the line. */
  private async look(): Promise<void> {
    if (Date.now() - this.lastLapseCheck >= LEASE.renewMs) {
      this.lastLapseCheck = Date.now();
      await endLapsed(this.db, this.opts.table);
    }
    for (const ws of await workspacesWaiting(this.db, this.opts.table, this.claimant.shard, this.opts.of)) this.turns.join(ws);
  }

  /** Claims a page for each turn while slots are free; a workspace with nothing due leaves the line. */
  private async startPages(): Promise<void> {
    while (!this.stopped && this.pages.size < this.opts.pagesInFlight) {
      const ws = this.turns.next();
      if (ws === undefined) return;
      let jobs: J[];
      try {
        jobs = await claimJobs<J>(this.db, this.opts.table, ws, this.opts.page, this.claimant.instance.id);
      } catch (err) {
        this.turns.done(ws);
        throw err;
      }
      if (jobs.length === 0) {
        this.turns.done(ws);
        this.turns.leave(ws);
        this.served.delete(ws);
        this.roundEnded();
        continue;
      }
      for (const j of jobs) this.inFlight.add(j.id);
      const running: Promise<void> = this.runPage(ws, jobs).finally(() => {
        for (const j of jobs) this.inFlight.delete(j.id);
        this.served.add(ws);
        this.turns.done(ws);
        this.pages.delete(running);
        this.roundEnded();
        this.freed = true;
        this.wake?.();
      });
      this.pages.add(running);
    }
  }

  private async runPage(workspaceId: string, jobs: J[]): Promise<void> {
    try {
      await this.opts.run(workspaceId, jobs);
    } catch (err) {
      logger.error(`${this.opts.table.name}: a page failed; its jobs are given back`, { workspace: workspaceId, err });
      // Not given back (the store is down too): the claims lapse instead.
      await giveBack(this.db, this.opts.table, jobs.map((j) => j.id)).catch((e) => logger.warn(`${this.opts.table.name}: giving back failed`, { err: e }));
    }
  }

  /** Calls afterRound once every workspace in line has had a page end since the last call. */
  private roundEnded(): void {
    if (!this.opts.afterRound || this.served.size === 0) return;
    for (const ws of this.turns.inLine()) if (!this.served.has(ws)) return;
    this.served.clear();
    this.opts.afterRound();
  }
}

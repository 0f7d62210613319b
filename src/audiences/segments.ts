// Segments kept live on an actor (docs/audiences.md):
//   - a computation from scratch (a segment created, or its conditions changed) is a job in the
//     job loop (jobs/worker.ts): PAGE people per transaction, PAGES_PER_CLAIM pages per claim,
//     then its turn goes to the other workspaces' jobs. It never holds a lock a send needs;
//   - the people a request changed (traits, events, devices, consent, lists) are evaluated for
//     every segment of their workspace in one statement, from the change itself (the requests of
//     a tick grouped, util/batcher.ts); those who
//     enter or leave a segment get a `segment_entered` / `segment_exited` event (with
//     `segment_id`), which may trigger campaigns;
//   - windowed event conditions ("in the last 30d") change with time alone: every EXPIRY_MS the
//     people whose events just aged past a window are evaluated again, not the whole segment.
import type { Db } from '../store/db.js';
import type { Claimant } from '../store/leases.js';
import {
  computePage, evaluatePeople, failSegmentJob, liveSegments, markExpired, peopleWithEventsBetween, SEGMENT_JOBS, windowedSegments, yieldSegmentJob,
  type LiveSegment, type MembershipChange, type SegmentJob,
} from '../store/segments.js';
import { storedEvents } from '../store/event-triggers.js';
import { countsEvents, eventNamesRead, windowSeconds, type SegmentNode } from '../domain/segments.js';
import { backoffDelays } from '../util/backoff.js';
import { JobWorker } from '../jobs/worker.js';
import { Poller } from '../util/poller.js';
import { groupBy } from '../util/group-by.js';
import { Batcher } from '../util/batcher.js';
import { logger } from '../logger.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** People per computation page (one statement, one transaction). */
const PAGE = 5_000;
/** Pages per claim: then the computation waits its turn again. */
const PAGES_PER_CLAIM = 20;
const POLL_MS = 1_000;
/** How long a workspace's segments are cached for evaluations (changes made by other replicas). */
const CACHE_MS = 5_000;
/** How often windowed conditions are aged. */
const EXPIRY_MS = 10_000;
/** How long an evaluation waits for the Log's sink to store the events that changed the people (JetStream). */
const STORED_WAIT_MS = 3_000;
/** People evaluated per expiry statement. */
const EXPIRY_PAGE = 1_000;

/** People a request changed, waiting for their evaluation. */
interface Evaluation {
  workspaceId: string;
  personIds: readonly string[];
  eventIds: readonly string[];
  /** The people were changed only by events of these names: only the segments reading them are evaluated. Absent: anything may have changed. */
  names?: ReadonlySet<string>;
  resolve: () => void;
}

/** Where the segment events go: appended to the Log and fired as campaign triggers. */
export type EmitSegmentEvents = (workspaceId: string, changes: readonly MembershipChange[]) => Promise<void>;

/** The event leaves with a window: name and window in seconds. */
function windows(node: SegmentNode): { name: string; seconds: number }[] {
  if ('all' in node) return node.all.flatMap(windows);
  if ('any' in node) return node.any.flatMap(windows);
  if (!('event' in node) || node.event.within === undefined) return [];
  const seconds = windowSeconds(node.event.within);
  return seconds === undefined ? [] : [{ name: node.event.name, seconds }];
}

export class Segments {
  private readonly worker: JobWorker<SegmentJob>;
  private readonly cache = new Map<string, { at: number; segments: Promise<LiveSegment[]> }>();
  private readonly expiry = new Poller(EXPIRY_MS, 'segment windows', () => this.age());

  constructor(
    private readonly db: Db,
    claimant: Claimant,
    private readonly owns: (workspaceId: string) => boolean,
    private readonly emit: EmitSegmentEvents,
  ) {
    this.worker = new JobWorker<SegmentJob>(db, claimant, {
      table: SEGMENT_JOBS,
      page: 1,
      workspacePages: 1,
      pagesInFlight: 2,
      pollMs: POLL_MS,
      run: async (_ws, [job]) => this.compute(job!),
    });
  }

  start(): void {
    this.worker.start();
    this.expiry.start();
  }

  stop(): Promise<void> {
    return Promise.all([this.worker.stop(), this.expiry.stop()]).then(() => undefined);
  }

  /** A segment of the workspace was created, changed or deleted here: evaluations read it again, and its computation starts now. */
  changed(workspaceId: string): void {
    this.cache.delete(workspaceId);
    this.worker.nudge();
  }

  /**
   * The people of the workspace changed: each is evaluated for every segment of the workspace,
   * and the segment events of those who entered or left are emitted. Never rejects: the change
   * is committed, and a failure is logged (the next change of the person, or a recomputation,
   * makes their membership good).
   */
  async touched(workspaceId: string, personIds: readonly string[], eventIds: readonly string[] = []): Promise<void> {
    await this.evaluate({ workspaceId, personIds, eventIds });
  }

  /**
   * People performed events and nothing else about them changed (a tracked event changes no
   * trait, device, list or consent): they are evaluated for the segments that read those events'
   * names only, so a segment of traits or of other events costs a tracked event nothing. The
   * people the events created (`created`) are new to every segment, and evaluated for all.
   */
  async performed(workspaceId: string, events: readonly { id: string; person_id: string; type: string }[], created: readonly string[]): Promise<void> {
    const fresh = new Set(created);
    const known = events.filter((e) => !fresh.has(e.person_id));
    await Promise.all([
      this.evaluate({ workspaceId, personIds: [...fresh], eventIds: events.filter((e) => fresh.has(e.person_id)).map((e) => e.id) }),
      this.evaluate({ workspaceId, personIds: known.map((e) => e.person_id), eventIds: known.map((e) => e.id), names: new Set(known.map((e) => e.type)) }),
    ]);
  }

  private async evaluate(e: Omit<Evaluation, 'resolve'>): Promise<void> {
    if (e.personIds.length === 0) return;
    try {
      // A workspace without segments costs this lookup and nothing more.
      if ((await this.segmentsOf(e.workspaceId)).length === 0) return;
    } catch (err) {
      return logger.warn('segments: reading the workspace\'s segments failed', { workspaceId: e.workspaceId, err });
    }
    await new Promise<void>((resolve) => this.evaluations.add({ ...e, resolve }));
  }

  /**
   * Group commit of the evaluations: those asked in one tick, and while a run is in flight, are
   * one statement per workspace (the people of many requests together), so the cost under load is
   * per batch, not per request. One run at a time: a person is never evaluated by two at once,
   * which could announce one entry twice.
   */
  private readonly evaluations = new Batcher<Evaluation>(async (batch) => {
    for (const [workspaceId, items] of groupBy(batch, (e) => e.workspaceId)) {
      try {
        const segments = await this.segmentsOf(workspaceId);
        // Each segment with the people of the items it concerns.
        const people = new Map(segments.map((s) => [s.id, new Set<string>()]));
        for (const item of items) {
          for (const s of segments) {
            if (item.names && !eventNamesRead(s.conditions).some((n) => item.names!.has(n))) continue;
            for (const id of item.personIds) people.get(s.id)!.add(id);
          }
        }
        const evaluating = segments.map((segment) => ({ segment, people: [...people.get(segment.id)!] })).filter((e) => e.people.length > 0);
        const eventIds = items.flatMap((e) => e.eventIds);
        // Event conditions read the store: the events must be there (at once on the store's Log; shortly after with JetStream's sink).
        if (eventIds.length > 0 && evaluating.some((e) => countsEvents(e.segment.conditions))) await this.waitStored(eventIds);
        const changes = await evaluatePeople(this.db, workspaceId, evaluating);
        if (changes.length > 0) await this.emit(workspaceId, changes);
      } catch (err) {
        logger.warn('segments: evaluating changed people failed', { workspaceId, err });
      }
      for (const e of items) e.resolve();
    }
  });

  private async waitStored(ids: readonly string[]): Promise<void> {
    const deadline = Date.now() + STORED_WAIT_MS;
    for (const pause of backoffDelays({ firstMs: 5, maxMs: 200 })) {
      if ((await storedEvents(this.db, ids)).size === ids.length) return;
      if (Date.now() + pause > deadline) {
        logger.warn('segments: the events were not stored in time; evaluated without them', { events: ids.length });
        return;
      }
      await sleep(pause);
    }
  }

  private segmentsOf(workspaceId: string): Promise<LiveSegment[]> {
    const hit = this.cache.get(workspaceId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.segments;
    const segments = liveSegments(this.db, workspaceId);
    this.cache.set(workspaceId, { at: Date.now(), segments });
    segments.catch(() => this.cache.delete(workspaceId));
    return segments;
  }

  /** A claim of a computation: its pages, each committed with the cursor, then its turn ends. */
  private async compute(job: SegmentJob): Promise<void> {
    try {
      for (let i = 0; i < PAGES_PER_CLAIM; i++) {
        const done = await this.db.tx((q) => computePage(q, job, PAGE));
        if (done === null || done) return; // changed since the claim (computed again), or finished
      }
      await yieldSegmentJob(this.db, job.id, job.generation);
    } catch (err) {
      // A tree the store cannot evaluate (it was valid when saved) fails the segment, not the loop.
      if (!(err instanceof Error) || !('code' in err) || typeof err.code !== 'string' || !err.code.startsWith('22')) throw err;
      logger.warn('segment computation failed', { segment: job.id, err });
      await failSegmentJob(this.db, job.id, job.generation, err.message);
    }
  }

  /** Ages the windowed segments of this actor's workspaces: the people whose events left a window since the last time. */
  private async age(): Promise<void> {
    const now = new Date();
    for (const s of await windowedSegments(this.db)) {
      const leaves = windows(s.conditions);
      if (!this.owns(s.workspace_id) || leaves.length === 0) continue;
      const people = new Set<string>();
      for (const [name, ws] of groupBy(leaves, (w) => w.name)) {
        for (const { seconds } of ws) {
          const from = new Date(s.expired_to.getTime() - seconds * 1000);
          const to = new Date(now.getTime() - seconds * 1000);
          if (from < to) for (const id of await peopleWithEventsBetween(this.db, s.workspace_id, [name], from, to)) people.add(id);
        }
      }
      const ids = [...people];
      for (let i = 0; i < ids.length; i += EXPIRY_PAGE) {
        const changes = await evaluatePeople(this.db, s.workspace_id, [{ segment: { id: s.id, conditions: s.conditions }, people: ids.slice(i, i + EXPIRY_PAGE) }]);
        if (changes.length > 0) await this.emit(s.workspace_id, changes);
      }
      await markExpired(this.db, s.id, now);
    }
  }
}

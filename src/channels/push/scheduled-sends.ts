// Scheduled single sends (docs/channels.md): held in messages with status 'scheduled' until
// due, then claimed ('sending', one claimer whatever the number of actors and replicas) and
// sent by the actor that owns the workspace, with the skip and policy checks of that moment.
// They are jobs (store/messages.ts SCHEDULED_SEND_JOBS) in the job loop (jobs/worker.ts):
// a claim is a lease renewed while its send is under way, and one not completed (its holder
// gone, its lease stale) is marked failed, not sent again: the provider may have it.
//
// Workspaces take turns: a page of at most PAGE of one workspace's due sends per turn and
// WORKSPACE_PAGES of its pages under way, so one workspace's backlog never fills the actor's
// slots, and one whose provider is slow holds its own pages while the others' sends go out.
import type { Db } from '../../store/db.js';
import { SCHEDULED_SEND_JOBS, type PushRecord } from '../../store/messages.js';
import { peopleByIds } from '../../store/people.js';
import { compileContent } from '../../domain/templates.js';
import { logger } from '../../logger.js';
import { JobWorker } from '../../jobs/worker.js';
import { giveBack } from '../../store/job-queue.js';
import type { PushEngine, Recipient } from './engine.js';
import type { Claimant } from '../../store/leases.js';

/** How often due sends are looked for: a scheduled send goes out at most this late. */
const POLL_MS = 1_000;
/** Due sends of one workspace claimed at once… */
const PAGE = 25;
/** …at most this many pages of one workspace's under way… */
const WORKSPACE_PAGES = 2;
/** …and of all workspaces. */
const PAGES_IN_FLIGHT = 16;

export class ScheduledSends {
  private readonly worker: JobWorker<PushRecord>;

  constructor(
    private readonly db: Db,
    private readonly engine: PushEngine,
    claimant: Claimant,
  ) {
    this.worker = new JobWorker(db, claimant, {
      table: SCHEDULED_SEND_JOBS,
      page: PAGE,
      workspacePages: WORKSPACE_PAGES,
      pagesInFlight: PAGES_IN_FLIGHT,
      pollMs: POLL_MS,
      run: (ws, messages) => this.sendAll(ws, messages),
    });
  }

  start(): void {
    this.worker.start();
  }

  /** No claim after this; resolves when the sends under way have been recorded. */
  stop(): Promise<void> {
    return this.worker.stop();
  }

  /** Each claimed message is its own send (its own content), the page's all at once. */
  private async sendAll(workspaceId: string, messages: PushRecord[]): Promise<void> {
    const people = new Map((await peopleByIds(this.db, workspaceId, messages.map((m) => m.person_id))).map((p) => [p.id, p]));
    const unrecorded: string[] = [];
    await Promise.all(
      messages.map(async (m) => {
        try {
          const recipient: Recipient = { person: people.get(m.person_id) ?? null, variables: m.variables ?? {}, scheduledId: m.id };
          const content = compileContent({ title: m.title ?? undefined, body: m.body ?? undefined, image_url: m.image_url ?? undefined, action_url: m.action_url ?? undefined, custom_data: m.custom_data ?? undefined });
          const send = { workspaceId, content, tags: m.tags ?? undefined, campaignId: m.campaign_id ?? undefined, eventId: m.event_id ?? undefined, renderErrors: 'fail' as const };
          await this.engine.send(send, [recipient]);
        } catch (err) {
          logger.error('scheduled send failed', { id: m.id, err });
          unrecorded.push(m.id);
        }
      }),
    );
    // Given back, so failed at once, never sent again (the provider may have had it).
    await giveBack(this.db, SCHEDULED_SEND_JOBS, unrecorded);
  }
}

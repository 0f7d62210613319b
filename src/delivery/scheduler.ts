// Scheduled single sends (DECISIONS §11): held in push_messages with status 'scheduled' until
// due, then claimed ('sending', one claimer whatever the number of actors and replicas) and
// sent by the actor that owns the workspace, with the skip and policy checks of that moment.
// A claim whose process died is marked failed, not sent again: the provider may have it.
import type { Db } from '../store/db.js';
import { claimScheduled, dueScheduled, failInterrupted, type PushRecord } from '../store/push-messages.js';
import { peopleByIds } from '../store/people.js';
import { compileContent } from '../domain/templates.js';
import { logger } from '../logger.js';
import { groupBy } from '../util/group-by.js';
import { Poller } from '../util/poller.js';
import type { PushEngine, Recipient } from './engine.js';

/** How often due sends are looked for: a scheduled send goes out at most this late. */
const POLL_MS = 1_000;
/** Due sends looked at per poll. */
const PAGE = 200;
/** A claim older than this belongs to a process that stopped (a send's retries take well under it). */
const STALE_CLAIM_MS = 120_000;

export class Scheduler {
  private readonly poller = new Poller(POLL_MS, 'scheduled sends', () => this.tick());

  constructor(
    private readonly db: Db,
    private readonly engine: PushEngine,
    /** Whether this actor owns the workspace. */
    private readonly owns: (workspaceId: string) => boolean,
  ) {}

  start(): void {
    this.poller.start();
  }

  stop(): Promise<void> {
    return this.poller.stop();
  }

  private async tick(): Promise<void> {
    await failInterrupted(this.db, STALE_CLAIM_MS);
    const due = (await dueScheduled(this.db, PAGE)).filter((m) => this.owns(m.workspace_id));
    if (due.length === 0) return;
    const claimed = await claimScheduled(this.db, due.map((m) => m.id));
    for (const [workspaceId, messages] of groupBy(claimed, (m) => m.workspace_id)) await this.sendAll(workspaceId, messages);
  }

  /** Each claimed message is its own send (its own content), the workspace's all at once. */
  private async sendAll(workspaceId: string, messages: PushRecord[]): Promise<void> {
    const people = new Map((await peopleByIds(this.db, workspaceId, messages.map((m) => m.person_id))).map((p) => [p.id, p]));
    await Promise.all(
      messages.map(async (m) => {
        const recipient: Recipient = { person: people.get(m.person_id) ?? null, variables: m.variables ?? {}, scheduledId: m.id };
        const content = compileContent({ title: m.title ?? undefined, body: m.body ?? undefined, image_url: m.image_url ?? undefined, action_url: m.action_url ?? undefined, custom_data: m.custom_data ?? undefined });
        const send = { workspaceId, content, tags: m.tags ?? undefined, campaignId: m.campaign_id ?? undefined, eventId: m.event_id ?? undefined, renderErrors: 'fail' as const };
        await this.engine.send(send, [recipient]).catch((err) => logger.error('scheduled send failed', { id: m.id, err }));
      }),
    );
  }
}

// Scheduled single sends (DECISIONS §11): held in push_messages with status 'scheduled' until
// due, then claimed ('sending', one claimer whatever the number of actors and replicas) and
// sent by the actor that owns the workspace, with the skip and policy checks of that moment.
// A claim is a lease (store/leases.ts), refreshed while its send is under way; one whose holder
// is gone (at once) or that went stale is marked failed, not sent again: the provider may have it.
//
// Workspaces are served side by side: each poll claims, for every owned workspace with sends
// due, at most its room under WORKSPACE_SENDS (its sends claimed and not yet recorded count
// against it), and the sends go out concurrently without holding the next poll. So one
// workspace's backlog never fills a poll, and one whose provider is slow holds its own
// WORKSPACE_SENDS claims while the others' sends go out on every poll.
import type { Db } from '../store/db.js';
import { claimScheduled, failInterrupted, refreshScheduledClaims, workspacesDue, type PushRecord } from '../store/push-messages.js';
import { peopleByIds } from '../store/people.js';
import { compileContent } from '../domain/templates.js';
import { logger } from '../logger.js';
import { groupBy } from '../util/group-by.js';
import { Poller } from '../util/poller.js';
import type { PushEngine, Recipient } from './engine.js';
import type { Claimant } from '../store/leases.js';

/** How often due sends are looked for: a scheduled send goes out at most this late. */
const POLL_MS = 1_000;
/** Due sends claimed per poll, all workspaces together… */
const PAGE = 200;
/** …and at most this many of one workspace's under way at once. */
const WORKSPACE_SENDS = 50;
/** Claims under way are refreshed this often… */
const HEARTBEAT_MS = 10_000;
/** …and one not refreshed for this long lapses even though its holder lives. */
const STALE_CLAIM_MS = 120_000;

export class ScheduledSends {
  private readonly poller = new Poller(POLL_MS, 'scheduled sends', () => this.tick());
  /** Sends claimed and not yet recorded: their ids, and how many per workspace. */
  private readonly claimed = new Set<string>();
  private readonly underWay = new Map<string, number>();
  private readonly sending = new Set<Promise<void>>();
  private lastRefresh = 0;

  constructor(
    private readonly db: Db,
    private readonly engine: PushEngine,
    private readonly claimant: Claimant,
  ) {}

  start(): void {
    this.poller.start();
  }

  /** No poll after this; resolves when the sends under way have been recorded. */
  async stop(): Promise<void> {
    await this.poller.stop();
    await Promise.all(this.sending);
  }

  private async tick(): Promise<void> {
    if (Date.now() - this.lastRefresh >= HEARTBEAT_MS) {
      this.lastRefresh = Date.now();
      await refreshScheduledClaims(this.db, [...this.claimed]);
    }
    await failInterrupted(this.db, STALE_CLAIM_MS);
    const rooms = (await workspacesDue(this.db))
      .filter((ws) => this.claimant.owns(ws))
      .map((workspaceId) => ({ workspaceId, room: WORKSPACE_SENDS - (this.underWay.get(workspaceId) ?? 0) }))
      .filter((x) => x.room > 0);
    if (rooms.length === 0) return;
    const claimed = await claimScheduled(this.db, rooms, PAGE, this.claimant.instance.id);
    for (const [workspaceId, messages] of groupBy(claimed, (m) => m.workspace_id)) {
      this.underWay.set(workspaceId, (this.underWay.get(workspaceId) ?? 0) + messages.length);
      for (const m of messages) this.claimed.add(m.id);
      const sending: Promise<void> = this.sendAll(workspaceId, messages)
        .catch((err) => logger.error('scheduled sends failed', { workspace: workspaceId, err }))
        .finally(() => {
          for (const m of messages) this.release(workspaceId, m.id);
          this.sending.delete(sending);
        });
      this.sending.add(sending);
    }
  }

  /** Each claimed message is its own send (its own content), the workspace's all at once; each frees its room once recorded. */
  private async sendAll(workspaceId: string, messages: PushRecord[]): Promise<void> {
    const people = new Map((await peopleByIds(this.db, workspaceId, messages.map((m) => m.person_id))).map((p) => [p.id, p]));
    await Promise.all(
      messages.map(async (m) => {
        try {
          const recipient: Recipient = { person: people.get(m.person_id) ?? null, variables: m.variables ?? {}, scheduledId: m.id };
          const content = compileContent({ title: m.title ?? undefined, body: m.body ?? undefined, image_url: m.image_url ?? undefined, action_url: m.action_url ?? undefined, custom_data: m.custom_data ?? undefined });
          const send = { workspaceId, content, tags: m.tags ?? undefined, campaignId: m.campaign_id ?? undefined, eventId: m.event_id ?? undefined, renderErrors: 'fail' as const };
          await this.engine.send(send, [recipient]);
        } catch (err) {
          logger.error('scheduled send failed', { id: m.id, err });
        } finally {
          this.release(workspaceId, m.id);
        }
      }),
    );
  }

  /** The send is no longer under way (recorded, or given up: its claim goes stale). */
  private release(workspaceId: string, id: string): void {
    if (!this.claimed.delete(id)) return;
    const n = (this.underWay.get(workspaceId) ?? 1) - 1;
    if (n > 0) this.underWay.set(workspaceId, n);
    else this.underWay.delete(workspaceId);
  }
}

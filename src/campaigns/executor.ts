// The workflow executor (docs/campaigns-runtime.md): runs due enrolments through their campaign's nodes, one
// node per step. Enrolments are jobs (store/job-queue.ts) in the job loop (jobs/worker.ts):
// claimed PAGE at a time, so memory and concurrency stay bounded however large the audience, at
// most PAGES_IN_FLIGHT pages per actor, each push node's share of a page one engine send; the
// workspaces take turns, and the engine's per-workspace share of provider sends
// (channels/send-shares.ts) does the same one level down.
//
// A campaign's sends are spread over every actor: each actor runs the enrolments of the workspaces
// it owns, and, beside them, its part of every other workspace's that any actor may run
// (store/enrolments.ts SHARED_ENROLMENT_JOBS): push and delay steps of a workspace whose send
// policy sets no cap, once they have waited SHARED_AFTER_MS (a fan-out's backlog; an event's few
// enrolments stay with the owner, which takes them at once, without the others' claims). The
// send-policy counters stay right because only the owner decides a capped send: a workspace with a cap
// is the owner's alone (its counters are the owner's, channels/counters.ts), and an owner's
// counters are read again from the records once the workspace's settings change, so sends other
// actors made while no cap was set are counted when one is set (a page claimed before the change
// goes out under the policy it was claimed under, as a send already decided does). Email and SMS
// steps stay with the owner: its connection pools are the ones `max_connections` sizes.
//
// - push node: the page goes through the PushEngine (send policy per recipient,
//   bypass_frequency_cap skipping the caps, never quiet hours), each recipient's record under a
//   deterministic id, UUIDv5 of (enrolment id, node id), skips included.
// - delay node: a durable timer: the enrolment's due_at moves `minutes` later and it waits.
// - wait_for_event node: claimed there, its wait starts: due (and timed out) `timeout` after it
//   became due there, its deadline on its row; the awaited event resumes it to `on_event` first
//   (event-waits.ts), or the timeout's claim moves it to `on_timeout`. Both are conditional
//   UPDATEs on the row's node and state (store/enrolment-waits.ts): one of them moves it.
// Durations are multiplied by HERALD_TIME_SCALE (1; tests shorten them).
//
// The claim is what makes a send happen once. A claim is a lease (store/leases.ts): it names this
// actor's instance and is renewed while the executor works on it; after a kill -9 the instance's
// lock is gone and the next look of any actor, a restarted one's first, ends the claim, and the
// enrolment is claimed again at the same node, which the claim counter shows (a page that failed
// gives its claims back at once, the same way). A push node claimed a second time is never sent
// again: the record the engine wrote before the kill stands, and an enrolment without one (its
// send was with the engine or the provider, which may have it) is recorded `failed` with the
// interruption as its error. Every enrolment not claimed at the kill is sent as usual. So nobody
// is messaged twice by Herald, and everybody enrolled ends with one record per push node.
//
// The blast radius is the claims in flight, so they are bounded by what the providers take at
// once: a workspace's pages in flight, all actors together, are WORKSPACE_PAGES of PAGE, the
// engine's share of one workspace (WORKSPACE_SHARE), each actor holding its part; and an actor's
// pages of its own workspaces are its send concurrency (SEND_CONCURRENCY). At most that many
// people of a workspace are recorded `failed` by a kill, about those whose send was with the
// provider; a page is recorded as soon as its own sends end, not with the others.
import { v5 as uuidv5 } from 'uuid';
import type { Db, Queryable } from '../store/db.js';
import { ENROLMENT_JOBS, holdOut, moveOn, SHARED_ENROLMENT_JOBS, stopEnrolments, type ClaimedEnrolment } from '../store/enrolments.js';
import { giveBack, type JobTable } from '../store/job-queue.js';
import { loadCampaignsByIds } from '../store/campaigns.js';
import { templateContents } from '../store/templates.js';
import { peopleByIds, type PersonRow } from '../store/people.js';
import { recordInterrupted } from '../store/messages.js';
import { splitAudience, templateIdsOf, type MessageNode, type RandomSplitNode, type SplitNode, type WaitForEventNode, type Workflow } from '../domain/campaigns.js';
import { parseDuration } from '../domain/time.js';
import { startWaits } from '../store/enrolment-waits.js';
import { heldOut, nextNode, pickBranch } from '../domain/journeys.js';
import { matchingPeople } from '../store/audience.js';
import { logger } from '../logger.js';
import { groupBy } from '../util/group-by.js';
import { SEND_CONCURRENCY, WORKSPACE_SHARE } from '../channels/push/engine.js';
import type { Claimant } from '../store/leases.js';
import { JobWorker } from '../jobs/worker.js';
import { CHANNELS } from '../channels/index.js';
import type { ChannelDeps } from '../channels/channel.js';
import { optedOutOf } from '../store/topics.js';

/** Pages of one workspace under way at once, all actors together… */
const WORKSPACE_PAGES = 4;
/** …each this many enrolments (one engine send), so a workspace's claims are its provider share… */
const PAGE = WORKSPACE_SHARE / WORKSPACE_PAGES;
/** …and the actor's pages its send concurrency. */
const PAGES_IN_FLIGHT = SEND_CONCURRENCY / PAGE;
/** How often due enrolments are looked for (a nudge looks sooner). */
const POLL_MS = 500;

/** Namespace of campaign send ids: UUIDv5 of (enrolment id, node id). */
const SEND_NS = 'b3e2f0a4-5c1d-4e7f-8a9b-0c1d2e3f4a5b';
const campaignSendId = (enrolmentId: string, nodeId: string): string => uuidv5(`${enrolmentId}/${nodeId}`, SEND_NS);

export class Executor {
  /** The workspaces this actor owns, and (with more than one actor) its share of the others' fan-outs. */
  private readonly workers: JobWorker<ClaimedEnrolment>[];

  constructor(
    private readonly db: Db,
    claimant: Claimant,
    /** What the channels send nodes with (docs/channels.md). */
    private readonly channels: ChannelDeps,
    /** HERALD_TIME_SCALE: delays and waits last this many times their duration. */
    private readonly timeScale = 1,
  ) {
    // A workspace's claims in flight, all actors together, stay WORKSPACE_PAGES pages: each
    // actor holds its part of them.
    const actors = claimant.shard.count;
    const workspacePages = Math.max(1, Math.floor(WORKSPACE_PAGES / actors));
    const worker = (table: JobTable, of: 'shard' | 'others', pagesInFlight: number) =>
      new JobWorker<ClaimedEnrolment>(db, claimant, { table, of, page: PAGE, workspacePages, pagesInFlight, pollMs: POLL_MS, run: (ws, page) => this.runPage(ws, page) });
    this.workers = [worker(ENROLMENT_JOBS, 'shard', PAGES_IN_FLIGHT)];
    if (actors > 1) this.workers.push(worker(SHARED_ENROLMENT_JOBS, 'others', PAGES_IN_FLIGHT / 2));
  }

  start(): void {
    for (const w of this.workers) w.start();
  }

  /** Looks for due enrolments of the owned workspaces now (something was just enrolled; the others' wait SHARED_AFTER_MS anyway). */
  nudge(): void {
    this.workers[0]!.nudge();
  }

  /** Finishes the pages in flight, then stops. */
  async stop(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.stop()));
  }

  /** Runs each claimed enrolment's next node, the page's enrolments grouped by campaign and node. */
  private async runPage(workspaceId: string, page: ClaimedEnrolment[]): Promise<void> {
    const campaigns = await loadCampaignsByIds(this.db, workspaceId, [...new Set(page.map((e) => e.campaign_id))]);
    const groups = groupBy(page, (e) => `${e.campaign_id}/${e.next_node ?? campaigns.get(e.campaign_id)?.workflow_definition.nodes[0]?.id ?? ''}`);
    const people = new Map((await peopleByIds(this.db, workspaceId, [...new Set(page.map((e) => e.person_id))])).map((p) => [p.id, p]));
    for (const [key, enrolments] of groups) {
      const campaignId = key.slice(0, key.indexOf('/'));
      const nodeId = key.slice(key.indexOf('/') + 1);
      const campaign = campaigns.get(campaignId);
      if (!campaign) continue; // deleted since the claim, its enrolments with it
      try {
        if (campaign.status === 'archived' || campaign.status === 'failed') await stopEnrolments(this.db, enrolments.map((e) => e.id));
        else {
          // The holdout is decided as a journey starts, from the enrolment id: the same if claimed again.
          const held = enrolments.filter((e) => e.next_node === null && heldOut(e.id, campaign.holdout_percent));
          await holdOut(this.db, held.map((e) => e.id));
          const going = held.length === 0 ? enrolments : enrolments.filter((e) => !held.includes(e));
          if (going.length > 0) await this.runNode(workspaceId, campaignId, campaign.workflow_definition, nodeId, going, people);
        }
      } catch (err) {
        // Given back: claimed again, the node records the sends the engine did not as interrupted.
        logger.error('campaign executor: a node failed', { campaign: campaignId, node: nodeId, err });
        await giveBack(this.db, ENROLMENT_JOBS, enrolments.map((e) => e.id));
      }
    }
  }

  private async runNode(workspaceId: string, campaignId: string, workflow: Workflow, nodeId: string, enrolments: ClaimedEnrolment[], people: Map<string, PersonRow>): Promise<void> {
    const ids = enrolments.map((e) => e.id);
    const index = workflow.nodes.findIndex((n) => n.id === nodeId);
    // An empty workflow ends at once; a node removed from the workflow since stops its enrolments.
    if (workflow.nodes.length === 0) return moveOn(this.db, ids, null, null);
    if (index < 0) return stopEnrolments(this.db, ids);
    const node = workflow.nodes[index]!;
    const next = nextNode(workflow.nodes, index);
    switch (node.type) {
      case 'delay':
        return moveOn(this.db, ids, node.id, next, node.minutes * 60 * this.timeScale);
      case 'wait_for_event':
        return this.wait(node, enrolments);
      case 'exit':
        return moveOn(this.db, ids, node.id, null);
      case 'split':
        return this.split(workspaceId, node, enrolments);
      case 'random_split':
        return this.randomSplit(node, enrolments);
      default:
        return this.message(workspaceId, campaignId, node, enrolments, people, (q) => moveOn(q, ids, node.id, next));
    }
  }

  /** A split: the page's people evaluated now, in one statement, each enrolment moved to `yes` or `no`. */
  private async split(workspaceId: string, node: SplitNode, enrolments: ClaimedEnrolment[]): Promise<void> {
    const yes = await matchingPeople(this.db, workspaceId, splitAudience(node), [...new Set(enrolments.map((e) => e.person_id))]);
    await this.db.tx(async (q) => {
      await moveOn(q, enrolments.filter((e) => yes.has(e.person_id)).map((e) => e.id), node.id, node.yes);
      await moveOn(q, enrolments.filter((e) => !yes.has(e.person_id)).map((e) => e.id), node.id, node.no);
    });
  }

  /** A wait: those claimed before it started start it; those claimed at its deadline (not resumed by the event) time out. */
  private async wait(node: WaitForEventNode, enrolments: ClaimedEnrolment[]): Promise<void> {
    const seconds = ((parseDuration(node.timeout) ?? 0) / 1000) * this.timeScale;
    await startWaits(this.db, enrolments.filter((e) => e.wait_until === null).map((e) => e.id), node.id, seconds);
    await moveOn(this.db, enrolments.filter((e) => e.wait_until !== null).map((e) => e.id), node.id, node.on_timeout);
  }

  /** A random split: each enrolment to the branch its id's hash picks by weight (the same if claimed again). */
  private async randomSplit(node: RandomSplitNode, enrolments: ClaimedEnrolment[]): Promise<void> {
    const byBranch = groupBy(enrolments, (e) => pickBranch(e.id, node.id, node.branches)?.next ?? '');
    await this.db.tx(async (q) => {
      for (const [next, group] of byBranch) await moveOn(q, group.map((e) => e.id), node.id, next === '' ? null : next);
    });
  }

  /**
   * A message node for the enrolments, through its channel (channels/index.ts): one send, or, for
   * those claimed here before, the interruption recorded; then `movedOn`, in the transaction of
   * the send's records (one commit for both).
   */
  private async message(workspaceId: string, campaignId: string, node: MessageNode, enrolments: ClaimedEnrolment[], people: Map<string, PersonRow>, movedOn: (q: Queryable) => Promise<void>): Promise<void> {
    const present = enrolments.filter((e) => people.has(e.person_id));
    const p = (e: ClaimedEnrolment) => people.get(e.person_id)!;
    await recordInterrupted(this.db, present.filter((e) => e.claims > 1).map((e) => ({ id: campaignSendId(e.id, node.id), workspace_id: workspaceId, person_id: e.person_id, external_id: p(e).external_id, campaign_id: campaignId, node_id: node.id, event_id: e.context.event?.id ?? null, channel: node.type })));
    const fresh = present.filter((e) => e.claims === 1);
    if (fresh.length === 0) return movedOn(this.db);
    const recipients = fresh.map((e) => ({ id: campaignSendId(e.id, node.id), person: p(e), variables: e.context.variables ?? {}, event: e.context.event?.parameters, trigger: e.context.trigger, eventId: e.context.event?.id }));
    const templates = await templateContents(this.db, workspaceId, templateIdsOf({ nodes: [node] }));
    const optedOut = await this.optedOut(workspaceId, node.topic_id, recipients.map((r) => r.person.id));
    await CHANNELS[node.type].sendNode(this.channels, { workspaceId, campaignId, node, templates, withRecords: movedOn, optedOut }, recipients);
  }

  /** A node naming a topic: those of the people not subscribed to it (docs/audiences.md). */
  private async optedOut(workspaceId: string, topicId: string | undefined, personIds: string[]): Promise<ReadonlySet<string> | undefined> {
    return topicId === undefined ? undefined : optedOutOf(this.db, workspaceId, topicId.toLowerCase(), personIds);
  }
}

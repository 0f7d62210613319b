// Event triggers on the ingest path (docs/campaigns-runtime.md; README, Request bodies and Routes). Each actor keeps an
// index of its workspaces' active event campaigns (workspace → event name → triggers;
// campaigns/workspace-index.ts keeps it current). So a tracked event that no campaign listens
// to costs one map lookup.
//
// `fire` runs once the events are durable. It first resumes the journeys waiting for them
// (event-waits.ts), so an event never resumes the enrolment it creates. Per matching (event, campaign):
//   - the conditions: parameters from the event; the person loaded only when a condition
//     reads traits.* or person.*; performed_count_* read once the sink has stored the event
//     (so the count includes it and every event acknowledged before it), waited for up to
//     COUNT_WAIT_MS;
//   - first_occurrence: the first-seen record names this event (store/event-triggers.ts);
//   - the enrolment: run id = the event id, so a retried or redelivered event cannot enrol
//     twice, and max_per_user and debounce held by the storage keys (campaigns/enrol.ts);
//     the workflow due `delay_minutes` from now (times HERALD_TIME_SCALE).
// A failure is a warning on its event, never an error: the event is already acknowledged.
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelays, type Backoff } from '../util/backoff.js';
import type { Db } from '../store/db.js';
import { activeEventCampaigns, eventCounts, firstOccurrences, storedEvents, type EventCampaignRow } from '../store/event-triggers.js';
import { peopleByIds } from '../store/people.js';
import { eventTriggerOf, triggerHolds, type EventTrigger } from '../domain/event-trigger.js';
import type { EventRecord } from '../domain/events.js';
import { groupBy } from '../util/group-by.js';
import { groupedWriter, type Waiting } from '../util/grouped-writer.js';
import { enrol } from './enrol.js';
import { EventWaits } from './event-waits.js';
import { WorkspaceIndex } from './workspace-index.js';
import { personSubject } from './person-subject.js';

/** How long count conditions wait for the sink to store their event. */
const COUNT_WAIT_MS = 3_000;
/** Meanwhile, the store is asked again after 5 ms, doubling up to 200 ms. */
const STORED_POLL: Backoff = { firstMs: 5, maxMs: 200 };

type TriggersByEvent = Map<string, EventTrigger[]>;

/** What `fire` answers when no campaign listens: nothing allocated on the hot path. */
const NO_WARNINGS: ReadonlyMap<string, string[]> = new Map();

/** An event and a campaign it triggers, on its way through the checks. */
interface Match {
  event: EventRecord;
  trigger: EventTrigger;
}

/** A match passed the checks, waiting for its enrolment's group. */
interface PendingEnrolment extends Waiting<true> {
  match: Match;
}

/** A workspace's event campaigns by the event names they listen to. */
function triggersByEvent(campaigns: EventCampaignRow[]): TriggersByEvent {
  const listening = campaigns.map(eventTriggerOf).flatMap((trigger) => [...new Set(trigger.eventNames)].map((name) => ({ name, trigger })));
  return new Map([...groupBy(listening, (l) => l.name)].map(([name, ls]) => [name, ls.map((l) => l.trigger)]));
}

export class EventTriggers {
  private readonly index: WorkspaceIndex<EventCampaignRow, TriggersByEvent>;
  /** The journeys waiting for events (wait_for_event), resumed by them. */
  private readonly waits: EventWaits;
  /**
   * Group commit of the enrolments: the matches of the requests in one tick, and of those that
   * came while a write was in flight, enrolled in one statement per campaign (not one per
   * event); a person's second match in a campaign goes to the next round, and a failed
   * campaign's matches are tried alone, so one cannot fail another.
   */
  private readonly enrolMatch = groupedWriter<PendingEnrolment, true>({
    key: (p) => `${p.match.trigger.campaignId}/${p.match.event.person_id}`,
    writeRound: async (round) => {
      const written = new Set<string>();
      await Promise.all(
        [...groupBy(round, (p) => p.match.trigger.campaignId)].map(([campaignId, ps]) =>
          this.enrolCampaign(ps.map((p) => p.match)).then(
            () => written.add(campaignId),
            () => {},
          ),
        ),
      );
      return round.map((p) => (written.has(p.match.trigger.campaignId) ? true : undefined));
    },
    alone: async (p) => {
      await this.enrolCampaign([p.match]);
      return true;
    },
  });

  constructor(
    private readonly db: Db,
    /** Whether this actor owns the workspace. */
    owns: (workspaceId: string) => boolean,
    /** Tells the workflow executor that enrolments are due. */
    private readonly enrolled: () => void,
    /** HERALD_TIME_SCALE: a trigger's delay_minutes last this many times as long. */
    private readonly timeScale = 1,
  ) {
    this.index = new WorkspaceIndex('event trigger index', { read: (ws) => activeEventCampaigns(db, ws), build: triggersByEvent }, owns);
    this.waits = new EventWaits(db, owns, enrolled);
  }

  async start(): Promise<void> {
    await Promise.all([this.index.start(), this.waits.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.index.stop(), this.waits.stop()]);
  }

  /** A campaign of the workspace changed here: what it listens for is read again before the change is answered; never rejects. */
  async changed(workspaceId: string): Promise<void> {
    await Promise.all([this.index.changed(workspaceId), this.waits.changed(workspaceId)]);
  }

  /** Enrols the durable events' people in the campaigns they trigger; answers the warnings by event id. */
  async fire(workspaceId: string, events: readonly EventRecord[]): Promise<ReadonlyMap<string, string[]>> {
    await this.waits.resume(workspaceId, events);
    const ws = this.index.get(workspaceId);
    if (!ws) return NO_WARNINGS;
    const matches = events.flatMap((event) => (ws.get(event.type) ?? []).map((trigger) => ({ event, trigger })));
    if (matches.length === 0) return NO_WARNINGS;
    const warnings = new Map<string, string[]>();
    const warn = (m: Match, err: unknown) => {
      const list = warnings.get(m.event.id) ?? [];
      list.push(`campaign ${m.trigger.campaignId} was not triggered: ${(err as Error).message}`);
      warnings.set(m.event.id, list);
    };
    let passed: Match[];
    try {
      passed = await this.passing(workspaceId, matches, warn);
    } catch (err) {
      for (const m of matches) warn(m, err);
      return warnings;
    }
    await Promise.all(passed.map((match) => new Promise<true>((resolve, reject) => this.enrolMatch({ match, resolve, reject })).catch((err: unknown) => warn(match, err))));
    return warnings;
  }

  /** The matches whose conditions and first_occurrence hold; those that could not be decided are warned of. */
  private async passing(workspaceId: string, matches: Match[], warn: (m: Match, err: unknown) => void): Promise<Match[]> {
    const personIds = (ms: Match[]) => [...new Set(ms.map((m) => m.event.person_id))];
    const needPerson = matches.filter((m) => m.trigger.readsPerson);
    const people = new Map(needPerson.length === 0 ? [] : (await peopleByIds(this.db, workspaceId, personIds(needPerson))).map((p) => [p.id, p]));
    let candidates = matches;
    const needCounts = matches.filter((m) => m.trigger.countedEvents.length > 0);
    let counts = new Map<string, Record<string, number>>();
    if (needCounts.length > 0) {
      const stored = await this.waitStored(needCounts.map((m) => m.event.id));
      const late = new Error(`its count conditions need the event stored, and the event store had not stored it within ${COUNT_WAIT_MS} ms`);
      for (const m of needCounts) if (!stored.has(m.event.id)) warn(m, late);
      candidates = candidates.filter((m) => m.trigger.countedEvents.length === 0 || stored.has(m.event.id));
      counts = await eventCounts(this.db, personIds(needCounts), [...new Set(needCounts.flatMap((m) => m.trigger.countedEvents))]);
    }
    candidates = candidates.filter((m) =>
      triggerHolds(m.trigger, { parameters: m.event.parameters, ...personSubject(people.get(m.event.person_id)), counts: counts.get(m.event.person_id) ?? {} }),
    );
    const firsts = candidates.filter((m) => m.trigger.firstOccurrence);
    if (firsts.length === 0) return candidates;
    const first = await firstOccurrences(
      this.db,
      firsts.map((m) => ({ personId: m.event.person_id, type: m.event.type, eventId: m.event.id, at: m.event.created_at })),
    );
    return candidates.filter((m) => !m.trigger.firstOccurrence || first.has(m.event.id));
  }

  /** The events of `ids` stored (at once on the store's Log; by the JetStream sink), waiting up to COUNT_WAIT_MS for all of them. */
  private async waitStored(ids: string[]): Promise<Set<string>> {
    const deadline = Date.now() + COUNT_WAIT_MS;
    for (const pauses = backoffDelays(STORED_POLL); ; ) {
      const stored = await storedEvents(this.db, ids);
      const pause = pauses.next().value;
      if (stored.size === ids.length || Date.now() + pause > deadline) return stored;
      await sleep(pause);
    }
  }

  /** Enrols the matches of one campaign, each event its own run (a redelivered event cannot enrol twice) and context. */
  private async enrolCampaign(matches: Match[]): Promise<void> {
    const t = matches[0]!.trigger;
    const enrolled = await enrol(
      this.db,
      { id: t.campaignId, workspace_id: t.workspaceId },
      matches.map(({ event }, i) => ({ runId: event.id, personId: event.person_id, context: i })),
      matches.map(({ event }) => ({ event: { id: event.id, name: event.type, parameters: event.parameters } })),
      {
        rules: { maxPerUser: t.maxPerUser, debounceSeconds: t.debounceSeconds },
        startAt: t.delayMinutes ? new Date(Date.now() + t.delayMinutes * 60_000 * this.timeScale) : undefined,
      },
    );
    if (enrolled > 0) this.enrolled();
  }
}

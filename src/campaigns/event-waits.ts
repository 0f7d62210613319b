// Journeys waiting for an event (docs/campaigns-runtime.md, Journeys): each actor keeps an index
// of its workspaces' wait_for_event nodes (workspace → event name → waits, workspace-index.ts),
// and a durable event of that name, passing the node's filters, resumes its person's enrolments
// waiting there to `on_event` (store/enrolment-waits.ts): no polling, and an event no wait listens
// for costs one map lookup. The timeout is the enrolment's own delayed job (campaigns/executor.ts).
// A failure is logged, never the event's: the event is acknowledged, and the wait times out.
import type { Db } from '../store/db.js';
import { notStarted, resumeWaits, waitingCampaigns, type WaitingCampaignRow } from '../store/enrolment-waits.js';
import { peopleByIds } from '../store/people.js';
import { conditionsHold, type Condition } from '../domain/conditions.js';
import type { EventRecord } from '../domain/events.js';
import { heldOut } from '../domain/journeys.js';
import { groupBy } from '../util/group-by.js';
import { logger } from '../logger.js';
import { WorkspaceIndex } from './workspace-index.js';
import { personSubject } from './person-subject.js';

/** A wait_for_event node of a campaign, as the index holds it. */
interface Wait {
  campaignId: string;
  nodeId: string;
  /** Whether it is the workflow's first node (its enrolments not started are there too, the holdout not yet decided). */
  first: boolean;
  holdoutPercent: number;
  onEvent: string;
  filters: readonly Condition[];
  /** Whether a filter reads the person (traits.*, person.*): the person is then loaded. */
  readsPerson: boolean;
}

type WorkspaceWaits = Map<string, Wait[]>;

/** A workspace's waits by the event names they wait for. */
function waitsByEvent(campaigns: WaitingCampaignRow[]): WorkspaceWaits {
  const waits = campaigns.flatMap((c) =>
    c.workflow_definition.nodes.flatMap((n, i) => {
      if (n.type !== 'wait_for_event') return [];
      const filters = n.filters ?? [];
      const wait: Wait = { campaignId: c.id, nodeId: n.id, first: i === 0, holdoutPercent: c.holdout_percent, onEvent: n.on_event, filters, readsPerson: filters.some((f) => !f.field.startsWith('parameters.')) };
      return [{ name: n.event_name, wait }];
    }),
  );
  return new Map([...groupBy(waits, (w) => w.name)].map(([name, ws]) => [name, ws.map((w) => w.wait)]));
}

/** The wait index: started, stopped and told of campaign changes as every workspace index is. */
export class EventWaits extends WorkspaceIndex<WaitingCampaignRow, WorkspaceWaits> {
  constructor(
    private readonly db: Db,
    owns: (workspaceId: string) => boolean,
    /** Tells the workflow executor that enrolments are due. */
    private readonly resumed: () => void,
  ) {
    super('journey wait index', { read: (ws) => waitingCampaigns(db, ws), build: waitsByEvent }, owns);
  }

  /** Resumes the enrolments waiting for the durable events (one statement per wait node). */
  async resume(workspaceId: string, events: readonly EventRecord[]): Promise<void> {
    const ws = this.get(workspaceId);
    if (!ws) return;
    const matches = events.flatMap((event) => (ws.get(event.type) ?? []).map((wait) => ({ event, wait })));
    if (matches.length === 0) return;
    try {
      const needPerson = matches.filter((m) => m.wait.readsPerson);
      const people = new Map(needPerson.length === 0 ? [] : (await peopleByIds(this.db, workspaceId, [...new Set(needPerson.map((m) => m.event.person_id))])).map((p) => [p.id, p]));
      const passing = matches.filter((m) => conditionsHold(m.wait.filters, 'all', { parameters: m.event.parameters, ...personSubject(people.get(m.event.person_id)) }));
      const moved = await Promise.all(
        [...groupBy(passing, (m) => m.wait)].map(async ([wait, ms]) => {
          const personIds = [...new Set(ms.map((m) => m.event.person_id))];
          // The holdout is decided as a journey starts: those it holds out never wait.
          const except = wait.first && wait.holdoutPercent > 0 ? (await notStarted(this.db, wait.campaignId, personIds)).map((e) => e.id).filter((id) => heldOut(id, wait.holdoutPercent)) : [];
          return resumeWaits(this.db, { campaignId: wait.campaignId, nodeId: wait.nodeId, first: wait.first, onEvent: wait.onEvent, personIds, except });
        }),
      );
      if (moved.includes(true)) this.resumed();
    } catch (err) {
      logger.warn('journey waits: resuming on events failed; those waits time out instead', { workspaceId, err });
    }
  }
}

// Campaign goals on the ingest path (docs/campaigns-runtime.md, Goals and conversions). Each
// actor keeps an index of its workspaces' campaigns with a goal that may still convert
// (workspace → event name → goals; campaigns/workspace-index.ts keeps it current), so an event
// no goal listens to costs one map lookup. The events of a request that goals listen to are
// recorded in one statement (store/conversions.ts), which converts each person once per campaign.
import type { Db } from '../store/db.js';
import { campaignGoals, recordConversions, type GoalEvent, type GoalRow } from '../store/conversions.js';
import { goalSeconds } from '../domain/goals.js';
import type { EventRecord } from '../domain/events.js';
import { groupBy } from '../util/group-by.js';
import { logger } from '../logger.js';
import { WorkspaceIndex } from './workspace-index.js';

interface CampaignGoal {
  campaignId: string;
  withinSeconds: number;
}

type GoalsByEvent = Map<string, CampaignGoal[]>;

const goalsByEvent = (rows: GoalRow[]): GoalsByEvent =>
  new Map([...groupBy(rows, (r) => r.goal.event_name)].map(([name, rs]) => [name, rs.map((r) => ({ campaignId: r.id, withinSeconds: goalSeconds(r.goal) }))]));

/** The goal index: started, stopped and told of campaign changes as every workspace index is. */
export class Goals extends WorkspaceIndex<GoalRow, GoalsByEvent> {
  constructor(
    private readonly db: Db,
    /** Whether this actor owns the workspace. */
    owns: (workspaceId: string) => boolean,
  ) {
    super('goal index', { read: (ws) => campaignGoals(db, ws), build: goalsByEvent }, owns);
  }

  /** Records the conversions the durable events make. Never rejects: the events are acknowledged, a failure is logged. */
  async reached(workspaceId: string, events: readonly EventRecord[]): Promise<void> {
    const goals = this.get(workspaceId);
    if (!goals) return;
    const reached: GoalEvent[] = events.flatMap((e) =>
      (goals.get(e.type) ?? []).map((g) => ({ campaignId: g.campaignId, personId: e.person_id, eventId: e.id, at: e.created_at, withinSeconds: g.withinSeconds })),
    );
    if (reached.length === 0) return;
    try {
      await recordConversions(this.db, workspaceId, reached);
    } catch (err) {
      logger.warn('goals: the conversions of acknowledged events were not recorded', { workspaceId, err });
    }
  }
}

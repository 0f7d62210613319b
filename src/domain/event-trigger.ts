// Event triggers (docs/campaigns-runtime.md; README, Request bodies): what an active `event` campaign's trigger_config
// says, read once when the campaign enters an actor's index, and whether an event passes it.
// Pure: campaigns/event-triggers.ts loads what a trigger needs and enrols.
import { COUNT_OPERATORS, conditionsHold, type Condition, type ConditionSubject } from './conditions.js';

export interface EventTrigger {
  campaignId: string;
  workspaceId: string;
  eventNames: readonly string[];
  /** `filters` and `properties` (each key a `parameters.<key> eq value` condition), all to hold. */
  conditions: readonly Condition[];
  debounceSeconds?: number;
  delayMinutes?: number;
  /** max_per_user; first_occurrence implies 1. */
  maxPerUser?: number;
  firstOccurrence: boolean;
  /** Whether a condition reads the person (traits.*, person.*): the person is then loaded. */
  readsPerson: boolean;
  /** The event names whose counts a performed_count_* condition reads (empty: none). */
  countedEvents: readonly string[];
}

const isCount = (c: Condition) => (COUNT_OPERATORS as readonly string[]).includes(c.operator);
const number = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

/** The trigger of an active event campaign (its config passed activation, so shapes are known). */
export function eventTriggerOf(c: { id: string; workspace_id: string; trigger_config: Record<string, unknown> }): EventTrigger {
  const cfg = c.trigger_config;
  const properties = typeof cfg.properties === 'object' && cfg.properties !== null ? (cfg.properties as Record<string, unknown>) : {};
  const conditions: Condition[] = [
    ...((Array.isArray(cfg.filters) ? cfg.filters : []) as Condition[]),
    ...Object.entries(properties).map(([key, value]): Condition => ({ field: `parameters.${key}`, operator: 'eq', value })),
  ];
  const firstOccurrence = cfg.first_occurrence === true;
  const maxPerUser = firstOccurrence ? 1 : Number.isInteger(cfg.max_per_user) ? (cfg.max_per_user as number) : undefined;
  return {
    campaignId: c.id,
    workspaceId: c.workspace_id,
    eventNames: (cfg.event_names as string[] | undefined) ?? [],
    conditions,
    debounceSeconds: number(cfg.debounce) || undefined,
    delayMinutes: number(cfg.delay_minutes) || undefined,
    maxPerUser,
    firstOccurrence,
    readsPerson: conditions.some((x) => !isCount(x) && (x.field.startsWith('traits.') || x.field.startsWith('person.'))),
    countedEvents: [...new Set(conditions.filter(isCount).map((x) => x.field))],
  };
}

/** Whether the event (with its person and counts, where the trigger reads them) passes the trigger's conditions. */
export function triggerHolds(t: EventTrigger, subject: ConditionSubject): boolean {
  return conditionsHold(t.conditions, 'all', subject);
}

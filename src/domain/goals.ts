// A campaign's goal (docs/campaigns-runtime.md, Goals and conversions): `{event_name, within}`,
// `within` a window as segments take it ("3d", "12h", "45m", at most 366 days). A person who
// performs the event within that time after their first message of the campaign is converted
// once, and leaves the journey. Pure.
import { InvalidInput } from './errors.js';
import { windowSeconds } from './segments.js';

export interface Goal {
  event_name: string;
  within: string;
}

/** What a goal's window must be, as its refusal says it (here and where the schema's pattern refuses it). */
export const GOAL_WINDOW_RULE = 'must be a window such as "3d", "12h" or "45m", at most 366 days';

/** Throws VALIDATION_ERROR (field `goal.within`) unless the goal's window is one; the schema has checked its shape. */
export function checkGoal(goal: Goal | null | undefined): void {
  if (goal && windowSeconds(goal.within) === undefined) {
    throw new InvalidInput(`goal.within ${GOAL_WINDOW_RULE}`, [{ field: 'goal.within', message: GOAL_WINDOW_RULE }]);
  }
}

/** A goal's window in seconds (a stored goal was checked; one that no longer parses counts nothing). */
export const goalSeconds = (goal: Goal): number => windowSeconds(goal.within) ?? 0;

// Tracked events (docs/ingest.md; README, Request bodies and Routes): the record appended to the Log, and its time.
import { InvalidInput, type FieldError } from './errors.js';
import { normalizeTimestamp } from './time.js';

/** One tracked event as the Log carries it to the sinks. */
export interface EventRecord {
  id: string;
  workspace_id: string;
  person_id: string;
  external_id: string;
  type: string;
  parameters: Record<string, unknown>;
  created_at: string;
}

/** The event's instant: `timestamp` (domain/time.ts says which are accepted), else now. */
export function eventTime(timestamp: string | undefined): string {
  return timestamp === undefined ? new Date().toISOString() : normalizeTimestamp(timestamp, 'timestamp');
}

/** How deeply event parameters may nest: as traits (an object or array directly under a key is level 1). */
const PARAMETERS_MAX_DEPTH = 10;

/** Refuses parameters nested deeper than PARAMETERS_MAX_DEPTH; `field` names them as sent (`parameters` or `properties`). */
export function checkParameters(parameters: Record<string, unknown>, field: string): void {
  const problems: FieldError[] = [];
  for (const [key, value] of Object.entries(parameters)) {
    if (depthOf(value, PARAMETERS_MAX_DEPTH + 1) > PARAMETERS_MAX_DEPTH) problems.push({ field: `${field}.${key}`, message: `nests deeper than ${PARAMETERS_MAX_DEPTH} levels` });
  }
  if (problems.length > 0) throw new InvalidInput(`${field} nest too deeply: ${problems.map((p) => p.field).join(', ')}`, problems);
}

/** Levels of arrays and objects in `v` (a scalar is 0), counted no further than `stop`. */
function depthOf(v: unknown, stop: number): number {
  if (v === null || typeof v !== 'object' || stop === 0) return 0;
  let deepest = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v)) {
    deepest = Math.max(deepest, depthOf(x, stop - 1));
    if (deepest >= stop - 1) break;
  }
  return 1 + deepest;
}

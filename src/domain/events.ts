// Tracked events (INTERFACE 2.4, 4.1, 6.1): the record appended to the Log, and its time.
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

// Tracked events (INTERFACE 2.4, 4.1, 6.1): the record appended to the Log, and its time.
import { InvalidInput } from './errors.js';

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

/** The event's instant: `timestamp`, else now. RFC 3339 allows a leap second (:60), an instant no Date holds. */
export function eventTime(timestamp: string | undefined): string {
  if (timestamp === undefined) return new Date().toISOString();
  const ms = Date.parse(timestamp);
  if (Number.isNaN(ms)) throw new InvalidInput('timestamp is not a representable instant', [{ field: 'timestamp', message: 'is not a representable instant (e.g. a leap second)' }]);
  return new Date(ms).toISOString();
}

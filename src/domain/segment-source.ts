// How a message of the Segment-compatible source becomes a track or an identify (README,
// Segment-compatible source; docs/ingest.md): the source is a translation in front of the
// ingest path, never a second one.
import { InvalidInput } from './errors.js';
import type { IdentifyBody } from './identify.js';
import { normalizeTimestamp } from './time.js';

/** A message's fields as Segment's and RudderStack's libraries send them (schemas/segment-source.ts checked their types). */
export interface SourceMessage {
  userId?: string;
  anonymousId?: string;
  event?: string;
  name?: string;
  category?: string;
  properties?: Record<string, unknown>;
  traits?: Record<string, unknown>;
  groupId?: string;
  previousId?: string;
  context?: Record<string, unknown>;
  timestamp?: string;
  originalTimestamp?: string;
  sentAt?: string;
  messageId?: string;
  message_id?: string;
  messageID?: string;
}

/** What a batch adds to each of its messages, and when the request arrived. */
export interface Envelope {
  context?: Record<string, unknown>;
  sentAt?: string;
  receivedAt: number;
}

/** A track body of the ingest path (the fields /track reads). */
interface TrackFields {
  event: string;
  userId: string;
  parameters: Record<string, unknown>;
  timestamp: string;
  messageId?: string;
  message_id?: string;
  messageID?: string;
}

export type Mapped = { kind: 'track'; body: TrackFields } | { kind: 'identify'; body: IdentifyBody };

/** The message types that write a person (and need a people permission) rather than an event. */
export const IDENTIFYING_TYPES: ReadonlySet<string> = new Set(['identify', 'group', 'alias']);

/** Segment's spec names for what Herald keeps as dedicated person fields. */
const SPEC_TRAITS: Readonly<Record<string, string>> = { firstName: 'first_name', lastName: 'last_name' };

export function mapMessage(type: 'identify' | 'track' | 'page' | 'screen' | 'group' | 'alias', m: SourceMessage, env: Envelope): Mapped {
  const ids = { messageId: m.messageId, message_id: m.message_id, messageID: m.messageID };
  const timestamp = eventTime(m, env);
  switch (type) {
    case 'identify':
      return { kind: 'identify', body: { ...person(m), traits: specTraits(m.traits ?? {}), timestamp, ...ids } };
    case 'group':
      return { kind: 'identify', body: { userId: subject(m), traits: { group_id: m.groupId, group: m.traits ?? {} }, timestamp, ...ids } };
    case 'alias':
      // previousId's person (as an anonymousId, or a userId used before) folds into userId's.
      return { kind: 'identify', body: { userId: m.userId, ...(m.previousId === m.userId ? {} : { anonymousId: m.previousId }), timestamp, ...ids } };
    default: {
      const named = type === 'track' ? m.event! : type === 'page' ? 'page_viewed' : 'screen_viewed';
      const parameters: Record<string, unknown> = { ...(m.properties ?? {}) };
      if (type !== 'track') {
        if (m.name !== undefined) parameters.name = m.name;
        if (m.category !== undefined) parameters.category = m.category;
      }
      const context = { ...(env.context ?? {}), ...(m.context ?? {}) };
      if (Object.keys(context).length > 0) parameters.context = context;
      return { kind: 'track', body: { event: named, userId: subject(m), parameters, timestamp, ...ids } };
    }
  }
}

/** Who a message is about: its userId, else its anonymousId (the person an identify later merges in). */
function subject(m: SourceMessage): string {
  const id = m.userId ?? m.anonymousId;
  if (id === undefined) throw new InvalidInput('A message needs a userId or an anonymousId', [{ field: 'userId', message: 'is required without anonymousId' }]);
  return id;
}

/** An identify with a userId folds the anonymousId's person into it; one without is about the anonymousId. */
function person(m: SourceMessage): Pick<IdentifyBody, 'userId' | 'anonymousId'> {
  const userId = subject(m);
  return m.userId !== undefined && m.anonymousId !== undefined && m.anonymousId !== m.userId ? { userId, anonymousId: m.anonymousId } : { userId };
}

function specTraits(traits: Record<string, unknown>): Record<string, unknown> {
  const out = { ...traits };
  for (const [spec, field] of Object.entries(SPEC_TRAITS)) {
    if (spec in out && !(field in out)) {
      out[field] = out[spec];
      delete out[spec];
    }
  }
  return out;
}

/**
 * `timestamp` when sent; else `originalTimestamp` corrected for the client's clock as Segment
 * does (receipt − (sentAt − originalTimestamp)); else the receipt.
 */
function eventTime(m: SourceMessage, env: Envelope): string {
  if (m.timestamp !== undefined) return normalizeTimestamp(m.timestamp, 'timestamp');
  if (m.originalTimestamp === undefined) return new Date(env.receivedAt).toISOString();
  const original = normalizeTimestamp(m.originalTimestamp, 'originalTimestamp');
  const sentAt = m.sentAt ?? env.sentAt;
  if (sentAt === undefined) return original;
  const corrected = env.receivedAt - (Date.parse(normalizeTimestamp(sentAt, 'sentAt')) - Date.parse(original));
  // The client's clock may be off by anything: a correction out of range keeps the client's time.
  return Number.isFinite(corrected) && corrected >= 0 && corrected < Date.UTC(2106, 1, 7) ? normalizeTimestamp(new Date(corrected).toISOString(), 'originalTimestamp') : original;
}

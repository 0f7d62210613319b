// Turns a schema-valid identify body (identify, people create/upsert, each batch entry) into
// what the store writes, applying the identifier-alias and trait rules.
import { DomainError, InvalidInput, fieldProblems } from './errors.js';
import { dedicatedFields, traitProblems } from './traits.js';
import { normalizeTimestamp } from './time.js';

export interface IdentifyBody {
  userId?: string;
  user_id?: string;
  external_id?: string;
  email?: string;
  phone?: string;
  anonymousId?: string;
  traits?: Record<string, unknown>;
  timestamp?: string;
  messageId?: string;
  message_id?: string;
  messageID?: string;
}

export interface IdentifyInput {
  userId: string;
  /** Dedicated fields to set (null clears). */
  fields: Record<string, string | null>;
  traits: Record<string, unknown>;
  anonymousId?: string;
  seenAt: string;
  /** Its messageId: written once per workspace in 7 days. */
  messageId?: string;
}

/** The one identifier among the aliases `userId`, `user_id`, `external_id`. */
export function resolveUserId(body: { userId?: string; user_id?: string; external_id?: string }): string {
  const given = [body.userId, body.user_id, body.external_id].filter((v): v is string => v !== undefined);
  if (given.length === 0) throw new InvalidInput('userId is required (aliases: user_id, external_id)', [{ field: 'userId', message: 'is required' }]);
  if (given.some((v) => v !== given[0])) throw new DomainError('IDENTIFIER_CONFLICT', 'userId, user_id and external_id name one identifier; the values sent disagree');
  return given[0]!;
}

/** A body's messageId among its aliases `messageId`, `message_id`, `messageID` (README, messageId); undefined when none. */
export function resolveMessageId(body: { messageId?: string; message_id?: string; messageID?: string }): string | undefined {
  const given = [body.messageId, body.message_id, body.messageID].filter((v): v is string => v !== undefined);
  if (given.some((v) => v !== given[0])) throw new InvalidInput('messageId, message_id and messageID name one id; the values sent disagree', [{ field: 'messageId', message: 'aliases disagree' }]);
  return given[0];
}

/** Checks traits (README, Request bodies) and returns the dedicated person fields they set. */
export function checkTraits(traits: Record<string, unknown>): Record<string, string | null> {
  const problems = traitProblems(traits);
  const { fields, problems: fieldLengthProblems } = dedicatedFields(traits);
  problems.push(...fieldLengthProblems);
  if (problems.length > 0) throw fieldProblems('INVALID_TRAITS', 'Invalid traits', problems);
  return fields;
}

export function identifyInput(body: IdentifyBody): IdentifyInput {
  const userId = resolveUserId(body);
  const traits = body.traits ?? {};
  const fields = checkTraits(traits);
  // Top-level email and phone win over the same keys in traits.
  if (body.email !== undefined) fields.email = body.email === '' ? null : body.email;
  if (body.phone !== undefined) fields.phone = body.phone === '' ? null : body.phone;
  return {
    userId,
    fields,
    traits,
    anonymousId: body.anonymousId || undefined,
    seenAt: body.timestamp === undefined ? new Date().toISOString() : normalizeTimestamp(body.timestamp, 'timestamp'),
    messageId: resolveMessageId(body),
  };
}

// The webhook trigger's rules (docs/ingest.md; README, Routes, Errors and Request bodies): which campaigns a trigger may run,
// what an Idempotency-Key may be, and what a key already claimed answers: a replay (same
// trigger_data, finished), 409 (still in progress) or 422 (other trigger_data).
import { createHash } from 'node:crypto';
import { DomainError } from './errors.js';
import type { CampaignStatus, TriggerType } from './campaigns.js';

const IDEMPOTENCY_KEY_MAX_BYTES = 255;
/** How long a key is remembered after its trigger was claimed or completed. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60_000;

/** Only `active` `webhook` campaigns can be triggered; an unknown one (or another workspace's) is 404. */
export function checkTriggerable(campaign: { trigger_type: TriggerType; status: CampaignStatus } | null): void {
  if (!campaign) throw new DomainError('NOT_FOUND', 'Campaign not found');
  if (campaign.trigger_type !== 'webhook') throw new DomainError('VALIDATION_ERROR', `Campaign is triggered by ${campaign.trigger_type}, not by webhook: only webhook campaigns can be triggered through the API`);
  if (campaign.status !== 'active') throw new DomainError('VALIDATION_ERROR', `Campaign is ${campaign.status}: only active campaigns can be triggered`);
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The key the request's `Idempotency-Key` headers carry (every value sent, as the front read
 * them), or null when none was sent. Sent empty, twice, with a character outside printable
 * ASCII (0x20-0x7E: a tab, DEL, anything non-ASCII) or over 255 bytes: 400.
 */
export function idempotencyKeyOf(values: readonly string[] | undefined): string | null {
  if (values === undefined || values.length === 0) return null;
  if (values.length > 1) throw new DomainError('VALIDATION_ERROR', 'Idempotency-Key was sent more than once; send one key');
  const key = values[0]!;
  if (key === '') throw new DomainError('VALIDATION_ERROR', 'Idempotency-Key is empty; send 1 to 255 bytes of printable ASCII, or no header');
  if (!PRINTABLE_ASCII.test(key)) {
    const at = [...key].findIndex((c) => !PRINTABLE_ASCII.test(c));
    throw new DomainError('VALIDATION_ERROR', `Idempotency-Key must be printable ASCII (0x20 to 0x7E); character ${at + 1} is not`);
  }
  // Printable ASCII is one byte a character.
  if (key.length > IDEMPOTENCY_KEY_MAX_BYTES) throw new DomainError('VALIDATION_ERROR', `Idempotency-Key is ${key.length} bytes; at most ${IDEMPOTENCY_KEY_MAX_BYTES}`);
  return key;
}

/** JSON with every object's keys in sorted order, so equal data has one text whatever order it was sent in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the canonical trigger_data (absent is `{}`): what a replay must match. */
export function triggerFingerprint(triggerData: Record<string, unknown> | undefined): string {
  return createHash('sha256').update(canonicalJson(triggerData ?? {})).digest('hex');
}

/**
 * What a key another trigger claimed answers: its outcome when it finished with the same
 * trigger_data (a replay: nothing is sent again); 422 when the data differ, whatever its
 * state; 409 while it is in progress.
 */
export function replayOf<T>(found: { fingerprint: string; outcome: T | null }, fingerprint: string): T {
  if (found.fingerprint !== fingerprint) {
    throw new DomainError('IDEMPOTENCY_KEY_REUSED', 'Idempotency-Key was already used for this campaign with different trigger_data; use a new key for a new trigger');
  }
  if (found.outcome === null) throw new DomainError('TRIGGER_IN_PROGRESS', 'A trigger with this Idempotency-Key is still in progress; nothing was sent again. Retry later to get its outcome');
  return found.outcome;
}

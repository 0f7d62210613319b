// Address suppressions (DECISIONS §13, migration 200): an email address (lower case) or an E.164
// number a workspace sends nothing to on that channel, once per type.
import type { Queryable } from './db.js';
import { newId } from '../ids.js';

export type AddressChannel = 'email' | 'sms';
export type AddressSuppressionType = 'hard_bounce' | 'complaint' | 'invalid_address' | 'opt_out' | 'manual';

/** The form addresses are stored and compared in. */
export const addressKey = (channel: AddressChannel, address: string): string => (channel === 'email' ? address.trim().toLowerCase() : address);

/** Suppresses the address under the type; nothing when it already is. */
export async function suppressAddress(q: Queryable, workspaceId: string, channel: AddressChannel, address: string, type: AddressSuppressionType, reason: string | null): Promise<void> {
  await q.query(
    `INSERT INTO address_suppressions (id, workspace_id, channel, address, suppression_type, reason) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (workspace_id, channel, address, suppression_type) DO NOTHING`,
    [newId(), workspaceId, channel, addressKey(channel, address), type, reason],
  );
}

/** Which of `addresses` are suppressed on the channel (in their stored form). */
export async function suppressedAddresses(q: Queryable, workspaceId: string, channel: AddressChannel, addresses: readonly string[]): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const r = await q.query<{ address: string }>(
    'SELECT DISTINCT address FROM address_suppressions WHERE workspace_id = $1 AND channel = $2 AND address = ANY($3::text[])',
    [workspaceId, channel, addresses.map((a) => addressKey(channel, a))],
  );
  return new Set(r.rows.map((x) => x.address));
}

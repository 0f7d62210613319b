// Address suppressions (docs/channels.md, migration 200): an email address (lower case) or an E.164
// number a workspace sends nothing to on that channel, once per type.
import { startsWith, type Queryable } from './db.js';
import { newId } from '../ids.js';
import type { AddressChannel, AddressSuppressionType } from '../domain/messages.js';


/** The form addresses are stored and compared in. */
export const addressKey = (channel: AddressChannel, address: string): string => (channel === 'email' ? address.trim().toLowerCase() : address);

/** Suppresses the address under the type; nothing when it already is. */
export async function suppressAddress(q: Queryable, workspaceId: string, channel: AddressChannel, address: string, type: AddressSuppressionType, reason: string | null): Promise<void> {
  await suppressAddresses(q, [{ workspaceId, channel, address, type, reason }]);
}

export interface AddressToSuppress {
  workspaceId: string;
  channel: AddressChannel;
  address: string;
  type: AddressSuppressionType;
  reason: string | null;
}

/** Suppresses each address under its type in one statement; nothing for those that already are (the first of a repeated one wins). */
export async function suppressAddresses(q: Queryable, rows: readonly AddressToSuppress[]): Promise<void> {
  if (rows.length === 0) return;
  await q.query(
    `INSERT INTO address_suppressions (id, workspace_id, channel, address, suppression_type, reason)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[])
     ON CONFLICT (workspace_id, channel, address, suppression_type) DO NOTHING`,
    [rows.map(() => newId()), rows.map((r) => r.workspaceId), rows.map((r) => r.channel), rows.map((r) => addressKey(r.channel, r.address)), rows.map((r) => r.type), rows.map((r) => r.reason)],
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

export interface AddressSuppressionRow {
  id: string;
  channel: AddressChannel;
  address: string;
  suppression_type: AddressSuppressionType;
  reason: string | null;
  created_at: Date;
}

const ROW = 'id, channel, address, suppression_type, reason, created_at';

/**
 * The workspace's suppressions, newest first, optionally of one channel and of the addresses
 * starting with `prefix` (in their stored form; an index serves it, migration 401).
 */
export async function listAddressSuppressions(q: Queryable, workspaceId: string, channel: AddressChannel | undefined, limit: number, offset: number, prefix?: string): Promise<{ rows: AddressSuppressionRow[]; total: number }> {
  const where = `workspace_id = $1 AND ($2::text IS NULL OR channel = $2)${prefix === undefined ? '' : ` AND ${startsWith('address', '$3')}`}`;
  const params = [workspaceId, channel ?? null, ...(prefix === undefined ? [] : [prefix])];
  const r = await q.query<AddressSuppressionRow & { total: number }>(
    `SELECT ${ROW}, count(*) OVER ()::int AS total FROM address_suppressions
     WHERE ${where} ORDER BY created_at DESC, id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, limit, offset],
  );
  const total = r.rows[0]?.total ?? (offset > 0 ? (await q.query<{ n: number }>(`SELECT count(*)::int AS n FROM address_suppressions WHERE ${where}`, params)).rows[0]!.n : 0);
  return { rows: r.rows.map(({ total: _t, ...row }) => row), total };
}

/** The row of (address, type), created or already there. */
export async function addressSuppression(q: Queryable, workspaceId: string, channel: AddressChannel, address: string, type: AddressSuppressionType): Promise<AddressSuppressionRow> {
  const r = await q.query<AddressSuppressionRow>(`SELECT ${ROW} FROM address_suppressions WHERE workspace_id = $1 AND channel = $2 AND address = $3 AND suppression_type = $4`, [workspaceId, channel, addressKey(channel, address), type]);
  return r.rows[0]!;
}

/** Lifts one suppression; false when the workspace has none of that id. */
export async function deleteAddressSuppression(q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return (await q.query(`DELETE FROM address_suppressions WHERE workspace_id = $1 AND id = $2`, [workspaceId, id])).rowCount > 0;
}

/** Lifts the address's suppression of that type (an SMS START lifts an `opt_out`), in the caller's transaction. */
export async function liftAddressSuppression(q: Queryable, workspaceId: string, channel: AddressChannel, address: string, type: AddressSuppressionType): Promise<void> {
  await q.query(`DELETE FROM address_suppressions WHERE workspace_id = $1 AND channel = $2 AND address = $3 AND suppression_type = $4`, [workspaceId, channel, address, type]);
}

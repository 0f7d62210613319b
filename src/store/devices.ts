// Device push tokens; a token is unique in a workspace (by its md5: migration 5).
import type { Queryable } from './db.js';
import { newId } from '../ids.js';
import type { DevicePlatform } from '../domain/tokens.js';

export interface DeviceRow {
  id: string;
  workspace_id: string;
  person_id: string;
  device_token: string;
  platform: string;
  device_name: string | null;
  device_model: string | null;
  os_version: string | null;
  app_version: string | null;
  is_active: boolean;
  is_valid: boolean;
  last_used_at: Date;
  registration_count: number;
  created_at: Date;
  updated_at: Date;
}

export interface DeviceInput {
  token: string;
  platform: string;
  device_name?: string;
  device_model?: string;
  os_version?: string;
  app_version?: string;
}

/**
 * The registration upsert of the rows `source` selects (id, workspace_id, person_id,
 * device_token, platform, device_name, device_model, os_version, app_version): a known token
 * is updated, re-activated and moved to the row's person. Returns id, created and `returning`.
 */
export const DEVICE_UPSERT = (source: string, returning = '') => `
  INSERT INTO devices AS d (id, workspace_id, person_id, device_token, platform, device_name, device_model, os_version, app_version)
  ${source}
  ON CONFLICT (workspace_id, md5(device_token)) DO UPDATE SET
    person_id = EXCLUDED.person_id, platform = EXCLUDED.platform,
    device_name = COALESCE(EXCLUDED.device_name, d.device_name), device_model = COALESCE(EXCLUDED.device_model, d.device_model),
    os_version = COALESCE(EXCLUDED.os_version, d.os_version), app_version = COALESCE(EXCLUDED.app_version, d.app_version),
    is_active = true, is_valid = true, last_used_at = now(), registration_count = d.registration_count + 1, updated_at = now()
  RETURNING d.id, (xmax = 0) AS created,
    -- The person a known token was registered to before (the subquery reads the statement's snapshot, so the row as it was), when another.
    NULLIF((SELECT o.person_id FROM devices o WHERE o.id = d.id), d.person_id) AS moved_from${returning ? `, ${returning}` : ''}`;

const ONE_UPSERT = DEVICE_UPSERT('VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)');

/** A token registered: its device, whether new, and the person it moved from (null: none, or the same). */
export interface UpsertedDevice {
  id: string;
  created: boolean;
  moved_from: string | null;
}

/** Registers one token for the person (store/device-registrar.ts groups them; this is its one-by-one path). */
export async function upsertDevice(q: Queryable, workspaceId: string, personId: string, d: DeviceInput): Promise<UpsertedDevice> {
  const r = await q.query<UpsertedDevice>(ONE_UPSERT, [
    newId(), workspaceId, personId, d.token, d.platform, d.device_name ?? null, d.device_model ?? null, d.os_version ?? null, d.app_version ?? null,
  ]);
  return r.rows[0]!;
}

/** The person's devices, most recently used first. */
export async function devicesOf(q: Queryable, personId: string): Promise<DeviceRow[]> {
  const r = await q.query<DeviceRow>(
    `SELECT id, workspace_id, person_id, device_token, platform, device_name, device_model, os_version, app_version, is_active, is_valid,
            last_used_at, registration_count, created_at, updated_at
     FROM devices WHERE person_id = $1 ORDER BY last_used_at DESC, created_at DESC`,
    [personId],
  );
  return r.rows;
}

/** Marks the person's device inactive; false when the person has no such token. */
export async function deactivateDevice(q: Queryable, workspaceId: string, externalId: string, token: string): Promise<boolean> {
  const r = await q.query(
    `UPDATE devices d SET is_active = false, updated_at = now() FROM people p
     WHERE p.workspace_id = $1 AND p.external_id = $2 AND d.person_id = p.id AND d.device_token = $3`,
    [workspaceId, externalId, token],
  );
  return r.rowCount > 0;
}

/** A device a push can go to (active and valid): store/send-context.ts reads them. */
export interface SendableDevice {
  id: string;
  person_id: string;
  device_token: string;
  platform: DevicePlatform;
}

/** A provider said these tokens are gone (docs/channels.md): later sends leave them out. */
export async function invalidateDevices(q: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await q.query('UPDATE devices SET is_valid = false, is_active = false, updated_at = now() WHERE id = ANY ($1::uuid[])', [ids]);
}

export interface DeviceState {
  is_active: boolean;
  is_valid: boolean;
}

/** The workspace's devices holding any of these tokens, by token: one query however many tokens. */
export async function devicesByTokens(q: Queryable, workspaceId: string, tokens: readonly string[]): Promise<Map<string, DeviceState>> {
  if (tokens.length === 0) return new Map();
  const r = await q.query<DeviceState & { device_token: string }>(
    `SELECT device_token, is_active, is_valid FROM devices
     WHERE workspace_id = $1 AND md5(device_token) = ANY (SELECT md5(t) FROM unnest($2::text[]) AS t) AND device_token = ANY ($2::text[])`,
    [workspaceId, tokens],
  );
  return new Map(r.rows.map(({ device_token, ...state }) => [device_token, state]));
}

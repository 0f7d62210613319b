// What a push send reads before it decides (src/channels/push/engine.ts), in one round trip however
// many recipients: the workspace's send policy, the recipients' sendable devices (active and
// valid, most recently used first) and which of their tokens are suppressed.
import { prepared, type Queryable } from './db.js';
import type { SendableDevice } from './devices.js';
import type { TrackingSettings } from '../domain/tracking.js';

export interface SendContext {
  policy: unknown;
  /** When the workspace's settings (its send policy among them) last changed, epoch ms. */
  policySince: number;
  devices: SendableDevice[];
  suppressed: Set<string>;
}

export async function sendContext(q: Queryable, workspaceId: string, personIds: readonly string[]): Promise<SendContext> {
  const r = await q.query<{ policy: unknown; policy_since: Date | null; devices: SendableDevice[]; suppressed: string[] }>(SEND_CONTEXT, [workspaceId, personIds]);
  const row = r.rows[0]!;
  return { policy: row.policy ?? null, policySince: row.policy_since?.getTime() ?? 0, devices: row.devices, suppressed: new Set(row.suppressed) };
}

/** Read for every page of a fan-out: prepared, as its planning cost as much as its run. */
const SEND_CONTEXT = prepared(
  'send-context',
  `WITH d AS (
       SELECT id, person_id, device_token, platform, last_used_at, created_at FROM devices
       WHERE person_id = ANY ($2::uuid[]) AND is_active AND is_valid
     ), s AS (
       SELECT DISTINCT t.device_token FROM token_suppressions t
       WHERE t.workspace_id = $1 AND md5(t.device_token) IN (SELECT md5(device_token) FROM d) AND t.device_token IN (SELECT device_token FROM d)
     )
     SELECT (SELECT settings->'send_policy' FROM workspaces WHERE id = $1) AS policy,
       (SELECT updated_at FROM workspaces WHERE id = $1) AS policy_since,
       COALESCE((SELECT json_agg(json_build_object('id', id, 'person_id', person_id, 'device_token', device_token, 'platform', platform)
         ORDER BY last_used_at DESC, created_at DESC) FROM d), '[]') AS devices,
       COALESCE((SELECT json_agg(device_token) FROM s), '[]') AS suppressed`,
);

/** The workspace's send policy alone (a send with no devices to read: SMS's quiet hours). */
export async function sendPolicy(q: Queryable, workspaceId: string): Promise<unknown> {
  const r = await q.query<{ p: unknown }>(`SELECT settings->'send_policy' AS p FROM workspaces WHERE id = $1`, [workspaceId]);
  return r.rows[0]?.p ?? null;
}

/** The workspace's `settings.tracking` as stored (docs/tracking.md); null when it has none. */
export async function trackingSettings(q: Queryable, workspaceId: string): Promise<Partial<TrackingSettings> | null> {
  const r = await q.query<{ t: Partial<TrackingSettings> | null }>(`SELECT settings->'tracking' AS t FROM workspaces WHERE id = $1`, [workspaceId]);
  return r.rows[0]?.t ?? null;
}

// Device push tokens (INTERFACE 2.5, 4.4; DECISIONS §3, §10), addressed by the person's
// external id. Registration creates an unknown person; a token is unique in a workspace.
import type { Handler } from '../actors/context.js';
import { HttpError, InvalidRequest, json } from '../http/reply.js';
import { newId } from '../ids.js';
import { iso } from './time.js';
import { ensurePerson, findPerson } from './people-store.js';
import { checkPathUserId } from './identify-input.js';

interface DeviceRow {
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

const present = (d: DeviceRow) => ({
  ...d,
  last_used_at: iso(d.last_used_at),
  created_at: iso(d.created_at),
  updated_at: iso(d.updated_at),
});

/** A web push subscription object (`{endpoint, keys}`), sent whole or as JSON text, is not a token. */
function isSubscriptionObject(token: string): boolean {
  if (!token.trimStart().startsWith('{')) return false;
  try {
    const v = JSON.parse(token);
    return typeof v === 'object' && v !== null && ('endpoint' in v || 'keys' in v);
  } catch {
    return false;
  }
}

const register: Handler = async (ctx) => {
  const b = ctx.body as { token: string; platform: string; device_name?: string; device_model?: string; os_version?: string; app_version?: string; person_id?: unknown; workspace_id?: unknown };
  const refused = (['person_id', 'workspace_id'] as const).filter((f) => f in b);
  if (refused.length > 0) {
    throw new InvalidRequest(`${refused.join(' and ')} are not accepted: the person comes from the path and the workspace from the API key`, refused.map((field) => ({ field, message: 'is not accepted' })));
  }
  if (isSubscriptionObject(b.token)) {
    throw new InvalidRequest('token must be the push registration token, not a browser subscription object', [{ field: 'token', message: 'is a subscription object' }]);
  }
  const ws = ctx.workspaceId!;
  const { device, created, personCreated } = await ctx.db.tx(async (q) => {
    const { person, created: personCreated } = await ensurePerson(q, ws, checkPathUserId(ctx.params.id!));
    // Re-registering a known token updates it, re-activates it and moves it to this person.
    const r = await q.query<DeviceRow & { created: boolean }>(
      `INSERT INTO devices AS d (id, workspace_id, person_id, device_token, platform, device_name, device_model, os_version, app_version)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (workspace_id, device_token) DO UPDATE SET
         person_id = EXCLUDED.person_id, platform = EXCLUDED.platform,
         device_name = COALESCE(EXCLUDED.device_name, d.device_name), device_model = COALESCE(EXCLUDED.device_model, d.device_model),
         os_version = COALESCE(EXCLUDED.os_version, d.os_version), app_version = COALESCE(EXCLUDED.app_version, d.app_version),
         is_active = true, is_valid = true, last_used_at = now(), registration_count = d.registration_count + 1, updated_at = now()
       RETURNING d.id, (xmax = 0) AS created`,
      [newId(), ws, person.id, b.token, b.platform, b.device_name ?? null, b.device_model ?? null, b.os_version ?? null, b.app_version ?? null],
    );
    return { device: r.rows[0]!, created: r.rows[0]!.created, personCreated };
  });
  return json(created ? 201 : 200, {
    success: true,
    device_id: device.id,
    message: created ? 'Device registered' : 'Device updated',
    ...(personCreated ? { person_created: true } : {}),
  });
};

const list: Handler = async (ctx) => {
  const person = await findPerson(ctx.db, ctx.workspaceId!, ctx.params.id!);
  if (!person) throw new HttpError(404, 'PERSON_NOT_FOUND', `No person with userId '${ctx.params.id}' in this workspace`);
  const r = await ctx.db.query<DeviceRow>(
    `SELECT id, workspace_id, person_id, device_token, platform, device_name, device_model, os_version, app_version, is_active, is_valid,
            last_used_at, registration_count, created_at, updated_at
     FROM devices WHERE person_id = $1 ORDER BY last_used_at DESC, created_at DESC`,
    [person.id],
  );
  return json(200, { success: true, devices: r.rows.map(present), count: r.rows.length });
};

const unregister: Handler = async (ctx) => {
  const token = (ctx.body?.token ?? ctx.query.token) as string | undefined;
  if (!token) throw new InvalidRequest('token is required, in the body or as ?token=', [{ field: 'token', message: 'is required' }]);
  const r = await ctx.db.query(
    `UPDATE devices d SET is_active = false, updated_at = now() FROM people p
     WHERE p.workspace_id = $1 AND p.external_id = $2 AND d.person_id = p.id AND d.device_token = $3`,
    [ctx.workspaceId, ctx.params.id, token],
  );
  if (r.rowCount === 0) throw new HttpError(404, 'NOT_FOUND', 'This person has no such device token');
  return json(200, { success: true, message: 'Device unregistered' });
};

export const deviceHandlers: Record<string, Handler> = {
  'POST /people/{id}/devices': register,
  'GET /people/{id}/devices': list,
  'DELETE /people/{id}/devices': unregister,
};

// Device push tokens (docs/channels.md; README, Request bodies and Routes), addressed by the person's
// external id. Registration creates an unknown person. What the body may hold (token length,
// platforms, refused fields, subscription objects) is the schema's: schemas/devices.ts.
import type { Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { dashboardPerson, personByUuid, personNotFound, touchedByExternalId } from './people.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { deactivateDevice, devicesOf, findPerson, registerDevice, type DeviceRow } from '../store/index.js';

const present = (d: DeviceRow) => ({
  ...d,
  last_used_at: iso(d.last_used_at),
  created_at: iso(d.created_at),
  updated_at: iso(d.updated_at),
});

const register: Handler<'POST /people/{id}/devices'> = async (ctx) => {
  // Group-committed with the other registrations of the tick (store/device-registrar.ts).
  const { device, personId, personCreated } = await registerDevice(ctx.db, ctx.workspaceId, ctx.params.id, ctx.body);
  // A device makes the person reachable by push (a segment's has_channel); a token moved from
  // another person may leave them with none.
  await ctx.segments.touched(ctx.workspaceId, device.moved_from ? [personId, device.moved_from] : [personId]);
  return json(device.created ? 201 : 200, {
    success: true,
    device_id: device.id,
    message: device.created ? 'Device registered' : 'Device updated',
    ...(personCreated ? { person_created: true } : {}),
  });
};

const list: Handler<'GET /people/{id}/devices'> = async (ctx) => {
  const person = await findPerson(ctx.db, ctx.workspaceId, ctx.params.id);
  if (!person) throw personNotFound(ctx.params.id);
  const devices = (await devicesOf(ctx.db, person.id)).map(present);
  return json(200, { success: true, devices, count: devices.length });
};

/** The dashboard's person page: the person (by UUID) and their devices. */
const dashboardGet: Handler<'GET /workspaces/{workspaceId}/people/{personId}'> = async (ctx) => {
  const person = await personByUuid(ctx, ctx.params.personId);
  const devices = (await devicesOf(ctx.db, person.id)).map(present);
  return json(200, { success: true, data: { person: dashboardPerson(person), devices } });
};

const unregister: Handler<'DELETE /people/{id}/devices'> = async (ctx) => {
  const token = ctx.body.token ?? ctx.query.token;
  if (!token) throw new InvalidInput('token is required, in the body or as ?token=', [{ field: 'token', message: 'is required' }]);
  if (!(await deactivateDevice(ctx.db, ctx.workspaceId, ctx.params.id, token))) throw new DomainError('NOT_FOUND', 'This person has no such device token');
  await touchedByExternalId(ctx, ctx.params.id);
  return json(200, { success: true, message: 'Device unregistered' });
};

export const deviceHandlers = {
  'POST /people/{id}/devices': register,
  'GET /people/{id}/devices': list,
  'GET /workspaces/{workspaceId}/people/{personId}': dashboardGet,
  'DELETE /people/{id}/devices': unregister,
} satisfies Handlers;

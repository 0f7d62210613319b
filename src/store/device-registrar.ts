// Device registration with group commit: the registrations of one tick (and those arriving
// while a write is in flight), from every request and workspace of the actor, are written by
// one multi-row upsert, once their people are resolved through the person resolver (the
// actor's cache, or one statement for the tick's unknown people). A request-per-transaction
// registration cost four round trips and a commit; under load a whole tick now costs one of
// each.
//
// A token registered twice in one group goes in a later round (util/grouped-writer.ts), so the
// later registration wins, as one by one. When a round fails (a person deleted since it was
// resolved, a value refused), each registration of it is done alone in its own transaction
// with the person locked, as before, so one cannot fail another.
import { prepared, type Db } from './db.js';
import { ensurePerson } from './people.js';
import { resolvePerson } from './person-resolver.js';
import { personIds } from './person-cache.js';
import { DEVICE_UPSERT, upsertDevice, type DeviceInput, type UpsertedDevice } from './devices.js';
import { newId } from '../ids.js';
import { groupedWriter, type Waiting } from '../util/grouped-writer.js';

export interface Registered {
  /** `moved_from`: the person the token was registered to before, when another (they lose a device). */
  device: UpsertedDevice;
  personId: string;
  personCreated: boolean;
}

interface Registration extends Waiting<Registered> {
  db: Db;
  workspaceId: string;
  externalId: string;
  personId: string;
  personCreated: boolean;
  input: DeviceInput;
}

const tokenKey = (r: Registration) => r.workspaceId + '\0' + r.input.token;

const GROUP_UPSERT = prepared('device-group-upsert', DEVICE_UPSERT(`SELECT id, workspace_id, person_id, device_token, platform, device_name, device_model, os_version, app_version
  FROM jsonb_to_recordset($1::text::jsonb) AS x(id uuid, workspace_id uuid, person_id uuid, device_token text, platform text,
    device_name text, device_model text, os_version text, app_version text)`, 'd.workspace_id, d.device_token'));

/** One multi-row upsert for the round (all of one actor, so of one `db`). */
async function writeRound(round: Registration[]): Promise<(Registered | undefined)[]> {
  const rows = round.map((r) => ({
    id: newId(), workspace_id: r.workspaceId, person_id: r.personId, device_token: r.input.token, platform: r.input.platform,
    device_name: r.input.device_name ?? null, device_model: r.input.device_model ?? null, os_version: r.input.os_version ?? null, app_version: r.input.app_version ?? null,
  }));
  const r = await round[0]!.db.query<UpsertedDevice & { workspace_id: string; device_token: string }>(GROUP_UPSERT, [JSON.stringify(rows)]);
  const written = new Map(r.rows.map((x) => [x.workspace_id + '\0' + x.device_token, { id: x.id, created: x.created, moved_from: x.moved_from }]));
  return round.map((reg) => {
    const device = written.get(tokenKey(reg));
    return device && { device, personId: reg.personId, personCreated: reg.personCreated };
  });
}

/** One registration in its own transaction, the person found or created and locked until commit. */
function alone(r: Registration): Promise<Registered> {
  return r.db.tx(async (q) => {
    const { person, created } = await ensurePerson(q, r.workspaceId, r.externalId);
    // The id resolved before may be of a person deleted since: the cache must not keep it.
    if (person.id !== r.personId) personIds.forget(r.workspaceId, r.externalId);
    return { device: await upsertDevice(q, r.workspaceId, person.id, r.input), personId: person.id, personCreated: created || r.personCreated };
  });
}

const register = groupedWriter<Registration, Registered>({ key: tokenKey, writeRound, alone });

/** Registers the token for the person (created bare when unknown); a known token is updated, re-activated and moved to this person. */
export async function registerDevice(db: Db, workspaceId: string, externalId: string, input: DeviceInput): Promise<Registered> {
  const person = await resolvePerson(db, workspaceId, externalId);
  return new Promise((resolve, reject) =>
    register({ db, workspaceId, externalId, personId: person.id, personCreated: person.created, input, resolve, reject }),
  );
}

// Identifier → person id, creating bare people for unknown ids: for device registration, and
// for tracks on the JetStream Log (whose records carry their person; the store's Log finds or
// creates people in its own statement). The actor's cache answers known people; the misses
// of one tick, from every request and workspace, are found or created by one statement (one
// store round trip instead of two per person).
import { prepared, type Db } from './db.js';
import { newId } from '../ids.js';
import { ensurePerson } from './people.js';
import { personIds } from './person-cache.js';
import { Batcher } from '../util/batcher.js';

export interface ResolvedPerson {
  id: string;
  created: boolean;
}

interface Lookup {
  db: Db;
  workspaceId: string;
  externalId: string;
  begun: number;
  resolve: (p: ResolvedPerson) => void;
  reject: (err: unknown) => void;
}

/** The lookups of one identifier; the first caller is the one told `created`. */
interface Wanted {
  workspaceId: string;
  externalId: string;
  begun: number;
  waiters: Lookup[];
}

// Rows another transaction inserted after this statement's snapshot are neither found nor
// created here; the caller looks those up again.
const RESOLVE = prepared('resolve-people', `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS t(workspace_id uuid, external_id text, new_id uuid)
), looked AS (
  -- A scalar subquery, so each lookup is an index probe: as a join, the planner (expecting 100
  -- inputs) hashed the whole people table for every statement.
  SELECT i.workspace_id, i.external_id, i.new_id,
    (SELECT p.id FROM people p WHERE p.workspace_id = i.workspace_id AND p.external_id = i.external_id) AS id
  FROM input i
), created AS (
  INSERT INTO people (id, workspace_id, external_id)
  SELECT new_id, workspace_id, external_id FROM looked WHERE id IS NULL
  ON CONFLICT (workspace_id, external_id) DO NOTHING
  RETURNING workspace_id, external_id, id
)
SELECT workspace_id::text AS workspace_id, external_id, id::text AS id, false AS created FROM looked WHERE id IS NOT NULL
UNION ALL
SELECT workspace_id::text, external_id, id::text, true FROM created`);

const key = (workspaceId: string, externalId: string) => workspaceId + '\0' + externalId;

// One actor has one store, so every lookup of a batch carries the same `db`.
const lookups = new Batcher<Lookup>((batch) => resolveAll(batch[0]!.db, batch));

/** The person's id (created bare when unknown); `created` is true for exactly one caller. */
export function resolvePerson(db: Db, workspaceId: string, externalId: string): Promise<ResolvedPerson> {
  const cached = personIds.get(workspaceId, externalId);
  if (cached) return Promise.resolve({ id: cached, created: false });
  return new Promise((resolve, reject) => lookups.add({ db, workspaceId, externalId, begun: personIds.begin(), resolve, reject }));
}

function settle(w: Wanted, p: ResolvedPerson): void {
  personIds.fill(w.workspaceId, w.externalId, p.id, w.begun);
  w.waiters.forEach((x, i) => x.resolve({ id: p.id, created: p.created && i === 0 }));
}

/** One at a time, for the ids the statement did not answer (or all, if it failed). */
async function oneByOne(db: Db, wanted: Wanted[]): Promise<void> {
  for (const w of wanted) {
    try {
      const { person, created } = await ensurePerson(db, w.workspaceId, w.externalId);
      settle(w, { id: person.id, created });
    } catch (err) {
      for (const x of w.waiters) x.reject(err);
    }
  }
}

async function resolveAll(db: Db, lookups: Lookup[]): Promise<void> {
  const batch = new Map<string, Wanted>();
  for (const l of lookups) {
    const k = key(l.workspaceId, l.externalId);
    const w = batch.get(k);
    if (w) w.waiters.push(l);
    else batch.set(k, { workspaceId: l.workspaceId, externalId: l.externalId, begun: l.begun, waiters: [l] });
  }
  const wanted = [...batch.values()];
  let rows: { workspace_id: string; external_id: string; id: string; created: boolean }[];
  try {
    const input = wanted.map((w) => ({ workspace_id: w.workspaceId, external_id: w.externalId, new_id: newId() }));
    rows = (await db.query<(typeof rows)[number]>(RESOLVE, [JSON.stringify(input)])).rows;
  } catch {
    // e.g. a workspace deleted meanwhile: one bad id must not fail the others' requests.
    return oneByOne(db, wanted);
  }
  for (const r of rows) {
    const w = batch.get(key(r.workspace_id, r.external_id));
    if (!w) continue;
    batch.delete(key(r.workspace_id, r.external_id));
    settle(w, { id: r.id, created: r.created });
  }
  await oneByOne(db, [...batch.values()]);
}

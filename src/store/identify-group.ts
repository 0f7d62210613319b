// Identify with group commit: the identifies of one tick (and those arriving while a write is
// in flight), from every request and workspace of the actor, are written by one statement per
// round, then answered together. One by one, each cost a statement and a commit.
//
// The statement updates the people it finds and inserts the others. (One INSERT … ON CONFLICT
// DO UPDATE cannot do it: which dedicated fields an identify sets depends on the keys it sent,
// and the conflicting row offers only column values.) A person identified twice in one group
// goes in a later round, so the later identify wins, as one by one. An identify the statement
// wrote nothing for (a person created or deleted by another transaction meanwhile), or every
// identify of a round that failed, is then written alone with the single-row upsert, so one
// cannot fail another.
import { prepared, type Db } from './db.js';
import { RETURNING, newFields, setFields, upsertPerson, type PersonRow } from './people.js';
import { DEDICATED_FIELDS } from '../domain/traits.js';
import type { IdentifyInput } from '../domain/identify.js';
import { newId } from '../ids.js';
import { Batcher } from '../util/batcher.js';
import { rounds } from '../util/rounds.js';

interface Identify {
  db: Db;
  workspaceId: string;
  input: IdentifyInput;
  resolve: (r: { person: PersonRow; created: boolean }) => void;
  reject: (err: unknown) => void;
}

const personKey = (workspaceId: string, externalId: string) => workspaceId + '\0' + externalId;
const keyOf = (i: Identify) => personKey(i.workspaceId, i.input.userId);

const IDENTIFY = prepared(
  'identify-people',
  `WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::text::jsonb) AS x(id uuid, workspace_id uuid, external_id text, f jsonb, traits jsonb, seen_at timestamptz)
), looked AS (
  -- Index probes (a scalar subquery per identify), never a hash of the whole people table.
  SELECT i.*, (SELECT p.id FROM people p WHERE p.workspace_id = i.workspace_id AND p.external_id = i.external_id) AS found FROM input i
), updated AS (
  UPDATE people AS p SET ${setFields('l.f')}, traits = p.traits || l.traits, updated_at = now(), last_seen_at = GREATEST(p.last_seen_at, l.seen_at)
  FROM looked l WHERE p.id = l.found AND p.id = ANY (ARRAY(SELECT found FROM looked WHERE found IS NOT NULL))
  ${RETURNING}, false AS created
), inserted AS (
  INSERT INTO people AS p (id, workspace_id, external_id, ${DEDICATED_FIELDS.join(', ')}, traits, first_seen_at, last_seen_at)
  SELECT id, workspace_id, external_id, ${newFields('f')}, traits, seen_at, seen_at FROM looked WHERE found IS NULL
  ON CONFLICT (workspace_id, external_id) DO NOTHING
  ${RETURNING}, true AS created
)
SELECT * FROM updated UNION ALL SELECT * FROM inserted`,
);

async function writeRound(db: Db, round: Identify[]): Promise<void> {
  const rows = round.map((i) => ({
    id: newId(), workspace_id: i.workspaceId, external_id: i.input.userId, f: i.input.fields, traits: i.input.traits, seen_at: i.input.seenAt,
  }));
  let written: Map<string, PersonRow & { created: boolean }>;
  try {
    const r = await db.query<PersonRow & { created: boolean }>(IDENTIFY, [JSON.stringify(rows)]);
    written = new Map(r.rows.map((p) => [personKey(p.workspace_id, p.external_id), p]));
  } catch {
    return alone(round);
  }
  const missed: Identify[] = [];
  for (const i of round) {
    const row = written.get(keyOf(i));
    if (!row) {
      missed.push(i);
      continue;
    }
    const { created, ...person } = row;
    i.resolve({ person, created });
  }
  await alone(missed);
}

/** Each identify on its own, with the single-row upsert. */
async function alone(identifies: Identify[]): Promise<void> {
  for (const i of identifies) {
    try {
      i.resolve(await upsertPerson(i.db, i.workspaceId, i.input));
    } catch (err) {
      i.reject(err);
    }
  }
}

// One actor has one store, so every identify of a group carries the same `db`.
const identifies = new Batcher<Identify>(async (group) => {
  for (const round of rounds(group, keyOf)) await writeRound(group[0]!.db, round);
});

/** Creates the person or merges into them (traits: new values win), group-committed with the tick's other identifies. */
export function identifyPerson(db: Db, workspaceId: string, input: IdentifyInput): Promise<{ person: PersonRow; created: boolean }> {
  return new Promise((resolve, reject) => identifies.add({ db, workspaceId, input, resolve, reject }));
}

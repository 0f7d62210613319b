// Identify with group commit: the identifies of one tick (and those arriving while a write is
// in flight), from every request and workspace of the actor, are written by one statement per
// round, then answered together. One by one, each cost a statement and a commit.
//
// The statement updates the people it finds and inserts the others. (One INSERT … ON CONFLICT
// DO UPDATE cannot do it: which dedicated fields an identify sets depends on the keys it sent,
// and the conflicting row offers only column values.) A person identified twice in one group
// goes in a later round (util/grouped-writer.ts), so the later identify wins, as one by one. An
// identify the statement wrote nothing for (a person created or deleted by another transaction
// meanwhile), or every identify of a round that failed, is then written alone with the
// single-row upsert, so one cannot fail another.
import { prepared, type Db } from './db.js';
import { RETURNING, newFields, setFields, upsertPerson, type PersonRow } from './people.js';
import { DEDICATED_FIELDS } from '../domain/traits.js';
import type { IdentifyInput } from '../domain/identify.js';
import { newId } from '../ids.js';
import { groupedWriter, type Waiting } from '../util/grouped-writer.js';

interface Identify extends Waiting<Identified> {
  db: Db;
  workspaceId: string;
  input: IdentifyInput;
}

type Identified = { person: PersonRow; created: boolean };

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

/** One statement for the round (all of one actor, so of one `db`). */
async function writeRound(round: Identify[]): Promise<(Identified | undefined)[]> {
  const rows = round.map((i) => ({
    id: newId(), workspace_id: i.workspaceId, external_id: i.input.userId, f: i.input.fields, traits: i.input.traits, seen_at: i.input.seenAt,
  }));
  const r = await round[0]!.db.query<PersonRow & { created: boolean }>(IDENTIFY, [JSON.stringify(rows)]);
  const written = new Map(r.rows.map((p) => [personKey(p.workspace_id, p.external_id), p]));
  return round.map((i) => {
    const row = written.get(keyOf(i));
    if (!row) return undefined;
    const { created, ...person } = row;
    return { person, created };
  });
}

const identify = groupedWriter<Identify, Identified>({ key: keyOf, writeRound, alone: (i) => upsertPerson(i.db, i.workspaceId, i.input) });

/** Creates the person or merges into them (traits: new values win), group-committed with the tick's other identifies. */
export function identifyPerson(db: Db, workspaceId: string, input: IdentifyInput): Promise<Identified> {
  return new Promise((resolve, reject) => identify({ db, workspaceId, input, resolve, reject }));
}

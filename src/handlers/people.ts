// People on the key surface (identify and the people routes) and on the dashboard (with
// consent; README, Routes). Person writes commit in the store before the response.
import type { Ctx, Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { check, compileBody } from './validation.js';
import { DomainError } from '../domain/errors.js';
import { checkTraits, identifyInput, type IdentifyBody, type IdentifyInput } from '../domain/identify.js';
import { iso } from '../domain/time.js';
import { grants } from '../auth/permissions.js';
import { isUuid } from '../ids.js';
import { answerIdentify, claimIdentify, deletePerson, findPerson, findPersonById, identifyPerson, listPeople, peopleStats, personIds, runMerge, scheduleMerge, setConsent, updateTraits, upsertPerson, type PersonRow } from '../store/index.js';
import * as schemas from '../../schemas/people.js';

/** `limit` above these is silently reduced (README, Request bodies). */
const KEY_PAGE_MAX = 500;
const DASHBOARD_PAGE_MAX = 100;

/** The person on the key surface (README, Request bodies). */
function keyPerson(p: PersonRow) {
  return {
    id: p.id,
    workspace_id: p.workspace_id,
    userId: p.external_id,
    email: p.email,
    phone: p.phone,
    traits: p.traits,
    status: p.status,
    ...(p.unsubscribed_at ? { unsubscribed_at: iso(p.unsubscribed_at) } : {}),
    ...(p.unsubscribe_reason ? { unsubscribe_reason: p.unsubscribe_reason } : {}),
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
  };
}

/** The person on the dashboard surface (README, Request bodies). */
export function dashboardPerson(p: PersonRow) {
  return {
    id: p.id,
    workspace_id: p.workspace_id,
    external_id: p.external_id,
    email: p.email,
    phone: p.phone,
    first_name: p.first_name,
    last_name: p.last_name,
    avatar_url: p.avatar_url,
    timezone: p.timezone,
    locale: p.locale,
    status: p.status,
    unsubscribed_at: iso(p.unsubscribed_at),
    unsubscribe_reason: p.unsubscribe_reason,
    attributes: p.traits,
    created_at: iso(p.created_at),
    updated_at: iso(p.updated_at),
    first_seen_at: iso(p.first_seen_at),
    last_seen_at: iso(p.last_seen_at),
  };
}

/** The person echo a key is entitled to: full with people:read, else the trimmed three fields. */
function echo(ctx: Ctx, p: PersonRow) {
  return grants(ctx.key!.permissions, ['people:read']) ? keyPerson(p) : { id: p.id, workspace_id: p.workspace_id, userId: p.external_id };
}

/** A person changed by their external id: evaluated for the workspace's segments (audiences/segments.ts). */
export async function touchedByExternalId(ctx: Ctx, externalId: string): Promise<void> {
  const p = await findPerson(ctx.db, ctx.workspaceId, externalId);
  if (p) await ctx.segments.touched(ctx.workspaceId, [p.id]);
}

export const personNotFound = (id: string) => new DomainError('PERSON_NOT_FOUND', `No person with userId '${id}' in this workspace`);

/** The person an identify answers with; `duplicate`: its messageId was accepted before, and nothing was written now. */
export interface Identified {
  person: PersonRow;
  duplicate?: true;
}

/**
 * Writes a checked identify (identifyInput has applied every rule); the person is then evaluated
 * for the workspace's segments, unless `evaluate` is false (a batch evaluates its people at once).
 */
async function identifyOne(ctx: Ctx, input: IdentifyInput, evaluate = true): Promise<Identified> {
  const ws = ctx.workspaceId;
  const { messageId, anonymousId } = input;
  if (!anonymousId && messageId === undefined) {
    const { person } = await identifyPerson(ctx.db, ws, input);
    if (evaluate) await ctx.segments.touched(ws, [person.id]);
    return { person };
  }
  // The merge is recorded with the person in one transaction and runs after the response; a
  // messageId is claimed in that transaction, so a repeat finds it even if the answer was lost.
  const r = await ctx.db.tx(async (q) => {
    const first = messageId === undefined ? null : await claimIdentify(q, ws, messageId);
    if (first) return { repeatOf: first.personId };
    const { person } = await upsertPerson(q, ws, input);
    if (messageId !== undefined) await answerIdentify(q, ws, messageId, person.id);
    return { person, mergeId: anonymousId ? await scheduleMerge(q, ws, person.id, anonymousId) : undefined };
  });
  if (r.repeatOf !== undefined) {
    // Null only when deleted since the claim was read (a race with the delete).
    const person = await findPersonById(ctx.db, ws, r.repeatOf);
    if (!person) throw personNotFound(input.userId);
    return { person, duplicate: true };
  }
  const { person, mergeId } = r;
  // The merge moves the anonymous person's events, lists and traits over: evaluated again after it.
  if (mergeId) ctx.defer(() => runMerge(ctx.db, mergeId).then(() => ctx.segments.touched(ws, [person.id])));
  if (evaluate) await ctx.segments.touched(ws, [person.id]);
  return { person };
}

const identified = (ctx: Ctx, { person, duplicate }: Identified) => ({ success: true, person: echo(ctx, person), ...(duplicate ? { duplicate } : {}) });

const identify: Handler<'POST /identify'> = async (ctx) => json(200, identified(ctx, await identifyOne(ctx, identifyInput(ctx.body))));

const upsert: Handler<'POST /people' | 'POST /people/upsert'> = async (ctx) => json(201, identified(ctx, await identifyOne(ctx, identifyInput(ctx.body))));

const checkIdentifyEntry = compileBody(schemas.identify);

type BatchResult = { type: 'identify'; index: number; success: true; data: ReturnType<typeof keyPerson>; duplicate?: true } | { type: 'identify'; index: number; success: false; error: string };

const batch: Handler<'POST /people/batch'> = async (ctx) => {
  const entries = ctx.body.identify;
  const results: BatchResult[] = [];
  // Every entry is checked (schema, identifier and trait rules, timestamp) before any is
  // written: a refused entry fails alone, and only the store failing can fail the request.
  const inputs = entries.map((entry, index) => {
    try {
      check(checkIdentifyEntry, entry, 'entry', schemas.identifyRefusals);
      return identifyInput(entry as IdentifyBody);
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      results[index] = { type: 'identify', index, success: false, error: err.message };
      return null;
    }
  });
  const valid = [...inputs.entries()].filter((e): e is [number, IdentifyInput] => e[1] !== null);
  const written = await identifyAll(ctx, valid.map(([, input]) => input));
  for (const [i, { person, duplicate }] of written.entries()) {
    const index = valid[i]![0];
    // Batch entries always carry the full person, whatever the key holds (README, Routes).
    results[index] = { type: 'identify', index, success: true, data: keyPerson(person), ...(duplicate ? { duplicate } : {}) };
  }
  return json(200, { success: true, results, total: entries.length });
};

/**
 * Writes several checked identifies, answered in their order: /people/batch and the
 * Segment-compatible source's batches. One repeating an earlier one's messageId is answered as
 * that one, once written.
 */
export async function identifyAll(ctx: Ctx, inputs: readonly IdentifyInput[]): Promise<Identified[]> {
  const firsts = new Map<string, Promise<Identified>>();
  const write = (input: IdentifyInput): Promise<Identified> => {
    const earlier = input.messageId === undefined ? undefined : firsts.get(input.messageId);
    if (earlier) return earlier.then((r): Identified => ({ person: r.person, duplicate: true }));
    const done = identifyOne(ctx, input, false);
    if (input.messageId !== undefined) firsts.set(input.messageId, done);
    return done;
  };
  // Without merges the identifies go in one group commit (a repeated userId in order, by
  // rounds); a merge (anonymousId) is its own transaction, so such a group goes one by one.
  let out: Identified[] = [];
  if (!inputs.some((input) => input.anonymousId)) out = await Promise.all(inputs.map(write));
  else for (const input of inputs) out.push(await write(input));
  // The group's people evaluated for the segments in one statement, not one per identify.
  await ctx.segments.touched(ctx.workspaceId, out.flatMap((r) => (r.duplicate ? [] : [r.person.id])));
  return out;
}

const get: Handler<'GET /people/{id}'> = async (ctx) => {
  const p = await findPerson(ctx.db, ctx.workspaceId, ctx.params.id);
  if (!p) throw personNotFound(ctx.params.id);
  return json(200, { success: true, person: keyPerson(p) });
};

const update: Handler<'PUT /people/{id}'> = async (ctx) => {
  const traits = ctx.body.traits;
  const fields = checkTraits(traits);
  if (!(await updateTraits(ctx.db, ctx.workspaceId, ctx.params.id, traits, fields))) throw personNotFound(ctx.params.id);
  await touchedByExternalId(ctx, ctx.params.id);
  return json(200, { success: true, message: 'Person updated' });
};

const remove: Handler<'DELETE /people/{id}'> = async (ctx) => {
  // Forgotten before the delete (no track resolves to the person meanwhile from the cache)
  // and again once it committed: a lookup that began in between read the row before the
  // commit, and its fill must not bring the deleted id back.
  personIds.forget(ctx.workspaceId, ctx.params.id);
  const deleted = await ctx.db.tx((q) => deletePerson(q, ctx.workspaceId, ctx.params.id, ctx.analyticsInStore));
  personIds.forget(ctx.workspaceId, ctx.params.id);
  if (!deleted) throw personNotFound(ctx.params.id);
  return json(200, { success: true, message: 'Person deleted with their events and devices' });
};

const page = (q: { limit: number; offset: number }, max: number) => ({ limit: Math.min(q.limit, max), offset: q.offset });

const list: Handler<'GET /people'> = async (ctx) => {
  const { limit, offset } = page(ctx.query, KEY_PAGE_MAX);
  const r = await listPeople(ctx.db, ctx.workspaceId, { limit, offset, searchColumns: [] });
  return json(200, { success: true, people: r.people.map(keyPerson), total: r.total, limit, offset });
};

const search: Handler<'GET /people/search'> = async (ctx) => {
  const { limit, offset } = page(ctx.query, KEY_PAGE_MAX);
  const text = ctx.query.q ?? ctx.query.search;
  const r = await listPeople(ctx.db, ctx.workspaceId, {
    limit, offset, status: ctx.query.status, search: text || undefined,
    searchColumns: ['external_id', 'email', 'phone', 'first_name', 'last_name'],
  });
  return json(200, { success: true, people: r.people.map(keyPerson), total: r.total, limit, offset });
};

// Dashboard (session) routes; people are addressed by UUID there.

const dashboardList: Handler<'GET /workspaces/{workspaceId}/people'> = async (ctx) => {
  const { limit, offset } = page(ctx.query, DASHBOARD_PAGE_MAX);
  const r = await listPeople(ctx.db, ctx.workspaceId, {
    limit, offset, status: ctx.query.status, search: ctx.query.search || undefined,
    searchColumns: ['email', 'first_name', 'last_name', "coalesce(first_name, '') || ' ' || coalesce(last_name, '')"],
  });
  return json(200, { success: true, people: r.people.map(dashboardPerson), total: r.total, limit, offset });
};

const stats: Handler = async (ctx) => json(200, { success: true, ...(await peopleStats(ctx.db, ctx.workspaceId)) });

const dashboardPersonNotFound = (id: string) => new DomainError('PERSON_NOT_FOUND', `No person with id '${id}' in this workspace`);

/** The dashboard's person, by UUID. */
export async function personByUuid(ctx: Ctx, id: string): Promise<PersonRow> {
  const p = isUuid(id) ? await findPersonById(ctx.db, ctx.workspaceId, id) : null;
  if (!p) throw dashboardPersonNotFound(id);
  return p;
}

const consent: Handler<'PATCH /workspaces/{workspaceId}/people/{personId}'> = async (ctx) => {
  const p = await personByUuid(ctx, ctx.params.personId);
  const { status, unsubscribe_reason } = ctx.body;
  // The person may have been deleted since: then they are not found.
  const updated = await setConsent(ctx.db, p.id, status, unsubscribe_reason);
  if (!updated) throw dashboardPersonNotFound(ctx.params.personId);
  await ctx.segments.touched(ctx.workspaceId, [updated.id]);
  return json(200, { success: true, data: { person: dashboardPerson(updated) } });
};

export const peopleHandlers = {
  'POST /identify': identify,
  'POST /people': upsert,
  'POST /people/upsert': upsert,
  'POST /people/batch': batch,
  'GET /people': list,
  'GET /people/search': search,
  'GET /people/{id}': get,
  'PUT /people/{id}': update,
  'DELETE /people/{id}': remove,
  'GET /workspaces/{workspaceId}/people': dashboardList,
  'GET /workspaces/{workspaceId}/people/stats': stats,
  'PATCH /workspaces/{workspaceId}/people/{personId}': consent,
} satisfies Handlers;

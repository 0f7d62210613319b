// People on the key surface (INTERFACE 4.1 identify, 4.2) and on the dashboard (4.7,
// DECISIONS §3 consent). Person writes commit in the store before the response.
import type { Ctx, Handler } from '../actors/context.js';
import { HttpError, InvalidRequest, json } from '../http/reply.js';
import { grants } from '../auth/permissions.js';
import { isUuid } from '../ids.js';
import { checkTraits, identifyInput, type IdentifyBody } from './identify-input.js';
import { dashboardPerson, keyPerson, trimmedPerson, type PersonRow } from './person.js';
import { deletePerson, findPerson, findPersonById, listPeople, updateTraits, upsertPerson } from './people-store.js';
import { runMerge, scheduleMerge } from './merges.js';
import { personIds } from './person-cache.js';
import { compileBody, fieldErrors } from '../actors/validation.js';
import * as schemas from '../../schemas/people.js';

export const KEY_PAGE_MAX = 500;
export const DASHBOARD_PAGE_MAX = 100;
export const BATCH_MAX = 1000;

/** The person echo a key is entitled to: full with people:read, else the trimmed three fields. */
function echo(ctx: Ctx, p: PersonRow) {
  return grants(ctx.key!.permissions, ['people:read']) ? keyPerson(p) : trimmedPerson(p);
}

async function identifyOne(ctx: Ctx, body: IdentifyBody): Promise<PersonRow> {
  const input = identifyInput(body);
  const ws = ctx.workspaceId!;
  if (!input.anonymousId) return (await upsertPerson(ctx.db, ws, input)).person;
  // The merge is recorded with the person in one transaction and runs after the response.
  const { person, mergeId } = await ctx.db.tx(async (q) => {
    const { person } = await upsertPerson(q, ws, input);
    return { person, mergeId: await scheduleMerge(q, ws, person.id, input.anonymousId!) };
  });
  ctx.defer(() => runMerge(ctx.db, mergeId));
  return person;
}

const checkEntry = compileBody(schemas.identify);

/** A batch entry is checked against the identify schema on its own, failing only itself. */
function validateIdentifyEntry(entry: unknown): IdentifyBody {
  if (!checkEntry(entry)) throw new InvalidRequest(fieldErrors(checkEntry.errors, 'entry').map((e) => `${e.field} ${e.message}`).join('; '), []);
  return entry as IdentifyBody;
}

const identify: Handler = async (ctx) => json(200, { success: true, person: echo(ctx, await identifyOne(ctx, ctx.body)) });

const upsert: Handler = async (ctx) => json(201, { success: true, person: echo(ctx, await identifyOne(ctx, ctx.body)) });

function notFound(id: string): HttpError {
  return new HttpError(404, 'PERSON_NOT_FOUND', `No person with userId '${id}' in this workspace`);
}

const get: Handler = async (ctx) => {
  const p = await findPerson(ctx.db, ctx.workspaceId!, ctx.params.id!);
  if (!p) throw notFound(ctx.params.id!);
  return json(200, { success: true, person: keyPerson(p) });
};

const update: Handler = async (ctx) => {
  const traits = ctx.body.traits as Record<string, unknown>;
  const fields = checkTraits(traits);
  if (!(await updateTraits(ctx.db, ctx.workspaceId!, ctx.params.id!, traits, fields))) throw notFound(ctx.params.id!);
  return json(200, { success: true, message: 'Person updated' });
};

const remove: Handler = async (ctx) => {
  personIds.forget(ctx.workspaceId!, ctx.params.id!);
  if (!(await deletePerson(ctx.db, ctx.workspaceId!, ctx.params.id!))) throw notFound(ctx.params.id!);
  return json(200, { success: true, message: 'Person deleted with their events and devices' });
};

const page = (q: Record<string, unknown>, max: number) => ({ limit: Math.min(q.limit as number, max), offset: q.offset as number });

const list: Handler = async (ctx) => {
  const { limit, offset } = page(ctx.query, KEY_PAGE_MAX);
  const r = await listPeople(ctx.db, ctx.workspaceId!, { limit, offset, searchColumns: [] });
  return json(200, { success: true, people: r.people.map(keyPerson), total: r.total, limit, offset });
};

const search: Handler = async (ctx) => {
  const { limit, offset } = page(ctx.query, KEY_PAGE_MAX);
  const text = (ctx.query.q ?? ctx.query.search) as string | undefined;
  const r = await listPeople(ctx.db, ctx.workspaceId!, {
    limit, offset, status: ctx.query.status as string | undefined, search: text || undefined,
    searchColumns: ['external_id', 'email', 'phone', 'first_name', 'last_name'],
  });
  return json(200, { success: true, people: r.people.map(keyPerson), total: r.total, limit, offset });
};

const batch: Handler = async (ctx) => {
  if ('track' in ctx.body) throw new HttpError(400, 'VALIDATION_ERROR', 'People batch takes only `identify` operations; send events to POST /track/batch');
  const entries = ctx.body.identify as unknown[];
  if (entries.length > BATCH_MAX) throw new HttpError(400, 'BATCH_TOO_LARGE', `At most ${BATCH_MAX} operations per batch; got ${entries.length}`);
  const results = [];
  for (const [index, entry] of entries.entries()) {
    try {
      const person = await identifyOne(ctx, validateIdentifyEntry(entry));
      // Batch entries always carry the full person, whatever the key holds (INTERFACE 4.2.4).
      results.push({ type: 'identify', index, success: true, data: keyPerson(person) });
    } catch (err) {
      if (!(err instanceof HttpError || err instanceof InvalidRequest)) throw err;
      results.push({ type: 'identify', index, success: false, error: err.message });
    }
  }
  return json(200, { success: true, results, total: entries.length });
};

// Dashboard (session) routes; people are addressed by UUID there.

const dashboardList: Handler = async (ctx) => {
  const { limit, offset } = page(ctx.query, DASHBOARD_PAGE_MAX);
  const r = await listPeople(ctx.db, ctx.workspaceId!, {
    limit, offset, status: ctx.query.status as string | undefined, search: (ctx.query.search as string) || undefined,
    searchColumns: ['email', 'first_name', 'last_name', "coalesce(first_name, '') || ' ' || coalesce(last_name, '')"],
  });
  return json(200, { success: true, people: r.people.map(dashboardPerson), total: r.total, limit, offset });
};

const stats: Handler = async (ctx) => {
  const r = await ctx.db.query<Record<string, number>>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'active')::int AS active,
            count(*) FILTER (WHERE status = 'unsubscribed')::int AS unsubscribed,
            count(*) FILTER (WHERE status = 'bounced')::int AS bounced,
            count(*) FILTER (WHERE status = 'suppressed')::int AS suppressed,
            count(*) FILTER (WHERE created_at > now() - interval '7 days')::int AS recent
     FROM people WHERE workspace_id = $1`,
    [ctx.workspaceId],
  );
  return json(200, { success: true, ...r.rows[0] });
};

export async function personByUuid(ctx: Ctx): Promise<PersonRow> {
  const id = ctx.params.personId!;
  const p = isUuid(id) ? await findPersonById(ctx.db, ctx.workspaceId!, id) : null;
  if (!p) throw new HttpError(404, 'PERSON_NOT_FOUND', `No person with id '${id}' in this workspace`);
  return p;
}

const setConsent: Handler = async (ctx) => {
  const p = await personByUuid(ctx);
  const { status, unsubscribe_reason } = ctx.body as { status: PersonRow['status']; unsubscribe_reason?: string };
  // unsubscribed stamps the time; back to active clears both consent fields.
  const r = await ctx.db.query<PersonRow>(
    `UPDATE people SET status = $2,
       unsubscribed_at = CASE WHEN $2 = 'active' THEN NULL WHEN $2 = 'unsubscribed' AND status <> 'unsubscribed' THEN now() ELSE unsubscribed_at END,
       unsubscribe_reason = CASE WHEN $2 = 'active' THEN NULL ELSE COALESCE($3, unsubscribe_reason) END,
       updated_at = now()
     WHERE id = $1 RETURNING *`,
    [p.id, status, unsubscribe_reason ?? null],
  );
  return json(200, { success: true, data: { person: dashboardPerson(r.rows[0]!) } });
};

export const peopleHandlers: Record<string, Handler> = {
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
  'PATCH /workspaces/{workspaceId}/people/{personId}': setConsent,
};

// Events (INTERFACE 4.1 track, 4.3 reads, 4.7 dashboard events; DECISIONS §3, §10). A track
// is acknowledged once its events are durable on the Log; the sink makes them readable
// shortly after (log/event-sink.ts).
import type { Ctx, Handler } from '../actors/context.js';
import { HttpError, InvalidRequest, json } from '../http/reply.js';
import { newId } from '../ids.js';
import { iso } from './time.js';
import type { EventRecord } from '../eventlog/event-log.js';
import { resolveUserId } from './identify-input.js';
import { findPerson } from './people-store.js';
import { resolvePerson } from './person-resolver.js';
import { personByUuid } from './people.js';
import { compileBody, fieldErrors } from '../actors/validation.js';
import * as schemas from '../../schemas/events.js';

export const TRACK_BATCH_MAX = 100;
const READ_MAX = 500;

interface TrackBody {
  event: string;
  external_id?: string;
  userId?: string;
  user_id?: string;
  parameters?: Record<string, unknown>;
  properties?: Record<string, unknown>;
  timestamp?: string;
}

/** The event's instant: `timestamp`, else now. RFC 3339 allows a leap second (:60), an instant no Date holds. */
function eventTime(timestamp: string | undefined): string {
  if (timestamp === undefined) return new Date().toISOString();
  const ms = Date.parse(timestamp);
  if (Number.isNaN(ms)) throw new InvalidRequest('timestamp is not a representable instant', [{ field: 'timestamp', message: 'is not a representable instant (e.g. a leap second)' }]);
  return new Date(ms).toISOString();
}

/** The entry's event, for its person (from the actor's cache, or found or created in the store). */
async function recordFor(ctx: Ctx, body: TrackBody): Promise<{ record: EventRecord; personCreated: boolean }> {
  const externalId = resolveUserId({ userId: body.userId, user_id: body.user_id, external_id: body.external_id });
  const createdAt = eventTime(body.timestamp); // before the person: a refused event creates no one
  const person = await resolvePerson(ctx.db, ctx.workspaceId!, externalId);
  return {
    personCreated: person.created,
    record: {
      id: newId(),
      workspace_id: ctx.workspaceId!,
      person_id: person.id,
      external_id: externalId,
      type: body.event,
      parameters: body.parameters ?? body.properties ?? {},
      created_at: createdAt,
    },
  };
}

const track: Handler = async (ctx) => {
  const { record, personCreated } = await recordFor(ctx, ctx.body);
  await ctx.log.appendEvents([record]);
  return json(201, {
    success: true,
    data: {
      event_id: record.id,
      person_id: record.person_id,
      event: record.type,
      parameters: record.parameters,
      timestamp: record.created_at,
      processed_at: new Date().toISOString(),
      status: 'processed',
      ...(personCreated ? { person_created: true } : {}),
    },
  });
};

const checkEntry = compileBody(schemas.track);

const trackBatch: Handler = async (ctx) => {
  const entries = ctx.body.events as unknown[];
  if (entries.length > TRACK_BATCH_MAX) throw new HttpError(400, 'BATCH_TOO_LARGE', `At most ${TRACK_BATCH_MAX} events per batch; got ${entries.length}`);
  // Every entry's person is resolved at once, so the batch's unknown people cost one statement.
  const outcomes = await Promise.allSettled(
    entries.map(async (entry) => {
      if (!checkEntry(entry)) throw new InvalidRequest(fieldErrors(checkEntry.errors, 'entry').map((e) => `${e.field} ${e.message}`).join('; '), []);
      return recordFor(ctx, entry as TrackBody);
    }),
  );
  const records: EventRecord[] = [];
  const results = [];
  const errors = [];
  for (const [index, outcome] of outcomes.entries()) {
    if (outcome.status === 'fulfilled') {
      const { record, personCreated } = outcome.value;
      records.push(record);
      results.push({ index, event_id: record.id, person_id: record.person_id, event: record.type, status: 'processed', ...(personCreated ? { person_created: true } : {}) });
    } else {
      const err = outcome.reason;
      if (!(err instanceof HttpError || err instanceof InvalidRequest)) throw err;
      errors.push({ index, error: err.message });
    }
  }
  // One append for the whole batch: all of it is durable, or the request fails.
  if (records.length > 0) await ctx.log.appendEvents(records);
  const body = { success: errors.length === 0, processed: records.length, total: entries.length, results };
  return errors.length === 0 ? json(201, body) : json(207, { ...body, errors });
};

interface EventRow {
  id: string;
  type: string;
  parameters: Record<string, unknown>;
  created_at: Date;
  person_id?: string;
  external_id?: string;
}

const presentEvent = (e: EventRow) => ({ ...e, created_at: iso(e.created_at) });
const readLimit = (ctx: Ctx) => Math.min(ctx.query.limit as number, READ_MAX);

async function eventsOf(ctx: Ctx, personId: string, limit: number, withPersonId: boolean): Promise<EventRow[]> {
  const r = await ctx.db.query<EventRow>(
    `SELECT id, type, parameters, created_at${withPersonId ? ', person_id' : ''} FROM events
     WHERE person_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
    [personId, limit],
  );
  return r.rows;
}

const personEvents: Handler = async (ctx) => {
  const person = await findPerson(ctx.db, ctx.workspaceId!, ctx.params.id!);
  if (!person) throw new HttpError(404, 'PERSON_NOT_FOUND', `No person with userId '${ctx.params.id}' in this workspace`);
  const events = (await eventsOf(ctx, person.id, readLimit(ctx), false)).map(presentEvent);
  return json(200, { success: true, person_id: person.external_id, events, total: events.length });
};

const search: Handler = async (ctx) => {
  const limit = readLimit(ctx);
  const r = await ctx.db.query<EventRow>(
    `SELECT e.id, e.type, e.parameters, e.created_at, p.external_id FROM events e JOIN people p ON p.id = e.person_id
     WHERE e.workspace_id = $1 AND e.type = $2 AND ($3::timestamptz IS NULL OR e.created_at >= $3::timestamptz)
     ORDER BY e.created_at DESC, e.id DESC LIMIT $4`,
    [ctx.workspaceId, ctx.query.event, ctx.query.since ?? null, limit],
  );
  const events = r.rows.map(presentEvent);
  return json(200, { success: true, events, total: events.length, limit });
};

const dashboardEvents: Handler = async (ctx) => {
  const person = await personByUuid(ctx);
  const events = (await eventsOf(ctx, person.id, readLimit(ctx), true)).map(presentEvent);
  return json(200, { success: true, person_id: person.id, events, total: events.length });
};

export const eventHandlers: Record<string, Handler> = {
  'POST /track': track,
  'POST /track/batch': trackBatch,
  'GET /people/{id}/events': personEvents,
  'GET /events/search': search,
  'GET /workspaces/{workspaceId}/people/{personId}/events': dashboardEvents,
};

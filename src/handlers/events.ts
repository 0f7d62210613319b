// Events: track, reads and the dashboard's events (docs/ingest.md; README, Routes). A track
// is acknowledged once its events are durable on the Log, which also finds their people or
// creates them bare; with JetStream the sink makes them readable shortly after
// (eventlog/event-sink.ts). Durable events then fire the event-triggered campaigns they match
// (campaigns/event-triggers.ts), convert for the campaign goals they reach (campaigns/goals.ts)
// and are evaluated for the workspace's segments (audiences/segments.ts) before the answer.
import type { Ctx, Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { check, compileBody } from './validation.js';
import { pageBack } from './page-back.js';
import { personByUuid, personNotFound } from './people.js';
import { DomainError } from '../domain/errors.js';
import { checkParameters, eventTime } from '../domain/events.js';
import { resolveMessageId, resolveUserId } from '../domain/identify.js';
import { iso, normalizeTimestamp } from '../domain/time.js';
import { newId } from '../ids.js';
import { eventNames, eventsOf, findPerson, latestEvents, searchEvents, type EventFilter, type EventRow } from '../store/index.js';
import type { Appended, NewEvent } from '../eventlog/index.js';
import type { EventRecord } from '../domain/events.js';
import * as schemas from '../../schemas/events.js';
import type { FromSchema } from '../../schemas/common.js';

/** `limit` above this is silently reduced (README, Request bodies). */
const READ_MAX = 500;

type TrackBody = FromSchema<typeof schemas.track>;

/** A track body checked by every rule but the person's: what is left to do touches no store. */
export interface Checked {
  externalId: string;
  type: string;
  parameters: Record<string, unknown>;
  createdAt: string;
  messageId?: string;
}

/** The rules a schema cannot say (identifier aliases, the timestamp's instant, parameter depth); throws DomainError. */
export function checkTrack(body: TrackBody): Checked {
  const externalId = resolveUserId({ userId: body.userId, user_id: body.user_id, external_id: body.external_id });
  const parameters = body.parameters ?? body.properties ?? {};
  checkParameters(parameters, body.parameters ? 'parameters' : 'properties');
  return { externalId, type: body.event, parameters, createdAt: eventTime(body.timestamp), messageId: resolveMessageId(body) };
}

/** The checked event, to append (with a message_id only when one was sent: the Log's plain path otherwise). */
function newEvent(ctx: Ctx, c: Checked): NewEvent {
  const e: NewEvent = { id: newId(), workspace_id: ctx.workspaceId, external_id: c.externalId, type: c.type, parameters: c.parameters, created_at: c.createdAt };
  if (c.messageId !== undefined) e.message_id = c.messageId;
  return e;
}

/** Appended events to fire triggers on: a repeat of a messageId fired its campaigns the first time. */
const fresh = (appended: readonly Appended[]): EventRecord[] => appended.filter((a) => !a.duplicate).map((a) => a.record);

/**
 * Appends checked events as one group (all durable, or the request fails), then fires the
 * campaigns of those not already accepted under their messageId: every track of the API and
 * of the Segment-compatible source goes through here.
 */
export async function appendTracks(ctx: Ctx, checked: readonly Checked[]): Promise<{ appended: Appended[]; warnings: ReadonlyMap<string, string[]> }> {
  const appended = checked.length > 0 ? await ctx.events.appendEvents(checked.map((c) => newEvent(ctx, c))) : [];
  // Durable: what the triggers do cannot fail the request any more.
  const warnings = await ctx.eventTriggers.fire(ctx.workspaceId, fresh(appended));
  const stored = fresh(appended);
  await ctx.goals.reached(ctx.workspaceId, stored);
  await ctx.segments.performed(ctx.workspaceId, stored, appended.filter((a) => a.personCreated && !a.duplicate).map((a) => a.record.person_id));
  return { appended, warnings };
}

/** `status` of a durable event, with the warnings of the campaign triggers that failed on it (README, Routes). */
function outcome(warnings: ReadonlyMap<string, string[]>, eventId: string) {
  const w = warnings.get(eventId);
  return w ? { status: 'accepted_with_warnings', warnings: w } : { status: 'processed' };
}

const track: Handler<'POST /track'> = async (ctx) => {
  // Checked before the append: a refused event creates no one.
  const { appended, warnings } = await appendTracks(ctx, [checkTrack(ctx.body)]);
  const { record, personCreated, duplicate } = appended[0]!;
  return json(201, {
    success: true,
    data: {
      event_id: record.id,
      person_id: record.person_id,
      event: record.type,
      parameters: record.parameters,
      timestamp: record.created_at,
      processed_at: new Date().toISOString(),
      ...outcome(warnings, record.id),
      ...(personCreated ? { person_created: true } : {}),
      ...(duplicate ? { duplicate } : {}),
    },
  });
};

const checkTrackEntry = compileBody(schemas.track);

const trackBatch: Handler<'POST /track/batch'> = async (ctx) => {
  const entries = ctx.body.events;
  // Every entry is checked before any person is resolved: a refused entry fails alone and
  // creates no one, and only the store failing can fail the request.
  const errors: { index: number; error: string }[] = [];
  const valid: { index: number; checked: Checked }[] = [];
  for (const [index, entry] of entries.entries()) {
    try {
      check(checkTrackEntry, entry, 'entry');
      valid.push({ index, checked: checkTrack(entry as TrackBody) });
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      errors.push({ index, error: err.message });
    }
  }
  // One append for the whole batch: all of it is durable, or the request fails.
  const { appended: resolved, warnings } = await appendTracks(ctx, valid.map((v) => v.checked));
  const results = resolved.map(({ record, personCreated, duplicate }, i) => ({
    index: valid[i]!.index, event_id: record.id, person_id: record.person_id, event: record.type, ...outcome(warnings, record.id), ...(personCreated ? { person_created: true } : {}), ...(duplicate ? { duplicate } : {}),
  }));
  const body = { success: errors.length === 0, processed: resolved.length, total: entries.length, results };
  return errors.length === 0 ? json(201, body) : json(207, { ...body, errors });
};

const presentEvent = (e: EventRow) => ({ ...e, created_at: iso(e.created_at) });
const readLimit = (ctx: { query: { limit: number } }) => Math.min(ctx.query.limit, READ_MAX);

const personEvents: Handler<'GET /people/{id}/events'> = async (ctx) => {
  const person = await findPerson(ctx.db, ctx.workspaceId, ctx.params.id);
  if (!person) throw personNotFound(ctx.params.id);
  const events = (await eventsOf(ctx.db, person.id, readLimit(ctx), false)).map(presentEvent);
  return json(200, { success: true, person_id: person.external_id, events, total: events.length });
};

const search: Handler<'GET /events/search'> = async (ctx) => {
  const limit = readLimit(ctx);
  const since = ctx.query.since;
  const events = (await searchEvents(ctx.db, ctx.workspaceId, ctx.query.event, since === undefined ? null : normalizeTimestamp(since, 'since'), limit)).map(presentEvent);
  return json(200, { success: true, events, total: events.length, limit });
};

/** The dashboard's lists of events: a name to search by, and a page back. */
const eventFilter = (query: { name?: string; before?: string; before_id?: string }): EventFilter => ({ name: query.name, before: pageBack(query) });

const dashboardEvents: Handler<'GET /workspaces/{workspaceId}/people/{personId}/events'> = async (ctx) => {
  const person = await personByUuid(ctx, ctx.params.personId);
  const events = (await eventsOf(ctx.db, person.id, readLimit(ctx), true, eventFilter(ctx.query))).map(presentEvent);
  return json(200, { success: true, person_id: person.id, events, total: events.length });
};

/** The event debugger (README, Dashboard): the workspace's latest events; `before` pages back. */
const workspaceEvents: Handler<'GET /workspaces/{workspaceId}/events'> = async (ctx) => {
  const limit = readLimit(ctx);
  const events = (await latestEvents(ctx.db, ctx.workspaceId, limit, eventFilter(ctx.query))).map(presentEvent);
  return json(200, { success: true, events, total: events.length, limit });
};

/** `limit` of the event names above this is silently reduced. */
const NAMES_MAX = 1000;

/** The campaign builder's event picker (README, Dashboard): the names the workspace has seen. */
const names: Handler<'GET /workspaces/{workspaceId}/event-names'> = async (ctx) => {
  const limit = Math.min(ctx.query.limit, NAMES_MAX);
  const rows = await eventNames(ctx.db, ctx.workspaceId, limit);
  return json(200, { success: true, names: rows.map((r) => ({ name: r.name, last_seen_at: iso(r.last_seen_at) })), total: rows.length, limit });
};

export const eventHandlers = {
  'POST /track': track,
  'POST /track/batch': trackBatch,
  'GET /people/{id}/events': personEvents,
  'GET /events/search': search,
  'GET /workspaces/{workspaceId}/people/{personId}/events': dashboardEvents,
  'GET /workspaces/{workspaceId}/events': workspaceEvents,
  'GET /workspaces/{workspaceId}/event-names': names,
} satisfies Handlers;

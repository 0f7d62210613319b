// The Log: where facts (events now; push records, enrolments later) are appended, and
// acknowledged only once durable. A 2xx that depends on an append is sent after it resolves.
// Two implementations: the store itself (embedded default and DATABASE_URL without NATS: the
// append writes the events where they are read) and JetStream (eventlog/jetstream.ts, with
// NATS_URL; its sinks then write the store). Events name their person by external id: the
// Log finds the person, or creates them bare (the actor's cache answers known people).
import { isDataError, type Db } from '../store/db.js';
import { personIds } from '../store/person-cache.js';
import { applyEvents, type PersonOfRecord, type RecordOutcome } from './apply-events.js';
import { purgeMessageIds, type FirstEvent } from '../store/ingest-messages.js';
import type { EventRecord } from '../domain/events.js';
import { newId } from '../ids.js';
import { InvalidInput, Unavailable, type DomainError } from '../domain/errors.js';
import { logger } from '../logger.js';
import { Batcher } from '../util/batcher.js';
import { isolatePoison } from './poison.js';
import { countLogFailures, countLogWrite } from '../metrics/index.js';


/**
 * An event to append, for the person its `external_id` names (person_id is the Log's to find);
 * `message_id`: the client's messageId, appended once per workspace in 7 days.
 */
export type NewEvent = Omit<EventRecord, 'person_id'> & { message_id?: string };

/**
 * An appended event with its person; `personCreated`: this append created them (true for
 * exactly one append). `duplicate`: its message_id was appended before, and `record` is that
 * first event; nothing was appended now.
 */
export interface Appended {
  record: EventRecord;
  personCreated: boolean;
  duplicate?: true;
}

export interface Log {
  /**
   * Resolves once `events` are durable, each with its person (created bare when unknown), in
   * order. Rejects with LogUnavailable when they are not (an outage: retry later), or with a
   * DomainError when the Log refuses these events themselves (e.g. a value the store cannot
   * hold): nothing of them was appended, no one was created for them, and the other appends
   * committed with them are not affected. An event whose message_id the workspace appended in
   * the last 7 days is not appended: it resolves as that first event, `duplicate`.
   */
  appendEvents(events: NewEvent[]): Promise<Appended[]>;
  close(): Promise<void>;
}

/** The Log could not make an append durable (an outage): 503, nothing recorded. `cause`: what it failed with. */
export class LogUnavailable extends Unavailable {
  constructor(cause: unknown) {
    super('The event log is unavailable; nothing was recorded. Retry shortly.', cause);
  }
}

/**
 * A record as appended: person_id null when the person is not known yet (the store's Log
 * finds or creates them with the records, trying `new_person_id` for them).
 */
export type LogRecord = NewEvent & { person_id: string | null; new_person_id?: string };

/** One append, serialized once: `json` is the JSON array text of `records`; `dedup`: some carry a message_id. */
export interface Group {
  records: LogRecord[];
  json: string;
  dedup: boolean;
}

/**
 * A record's person; `created`: by this append. `repeatOf`: the record's message_id was
 * appended before, as this event (nothing appended now); `raced`: another write claimed it
 * meanwhile (nothing appended; a retry is a repeat).
 */
export interface PersonOf {
  id: string;
  created: boolean;
  repeatOf?: EventRecord;
  raced?: boolean;
}

/**
 * What a write found for the records appended without a person: by group, each such record's
 * person at its index. A write whose records all carry their person returns nothing.
 */
export type Persons = (PersonOf | undefined)[][];

/** Says whether a failed write was refused for what it carries (the answer to give), or null for an outage. */
export type Refusal = (err: unknown) => DomainError | null;

const unserializable = (err: unknown) =>
  new InvalidInput(`The events cannot be written to the Log: ${(err as Error).message}`, [{ field: 'body', message: 'cannot be serialized (nested too deeply?)' }]);

interface Pending {
  group: Group;
  done: (err: Error | null, persons?: Persons[number]) => void;
}

/** An append's records are one request's: of one workspace. */
const workspaceOf = (p: Pending): string => p.group.records[0]?.workspace_id ?? '';

export interface GroupCommitOptions {
  /** Writes that may overlap (JetStream pipelines its publishes); 1 by default. */
  maxInFlight?: number;
  /**
   * Overlapping writes hold disjoint workspaces, and a write starts beside another only for a
   * group of `splitAt` records or more, split over the writes free (util/batcher.ts Lanes):
   * for the store, whose overlapping statements would otherwise wait on each other's row locks
   * (the same people's counts), and whose small groups are cheapest as one commit.
   */
  lanes?: { splitAt: number };
  /** Says whether a failed write was refused for what it carries; by default every failure is an outage. */
  refusal?: Refusal;
  /** Finds a person not in the actor's cache before the append (a Log whose records must carry their person). */
  personFirst?: (e: NewEvent) => Promise<PersonOf>;
}

/**
 * Group commit: appends arriving in the same tick, or while the previous write is in flight,
 * are written by one `write` call (one transaction or publish), then acknowledged together.
 * Writes may overlap as {@link GroupCommitOptions} says.
 *
 * Isolation: a write that fails for an outage fails every append in it (LogUnavailable, 503).
 * One `refusal` recognizes as caused by what it carries is written again in halves until each
 * refused append is alone: that append alone is rejected (with the DomainError `refusal`
 * returns), the others are acknowledged. An append that cannot even be serialized is
 * rejected before it joins a group.
 *
 * People: those in the actor's cache are filled in before the append; `personFirst` finds the
 * others before it (the JetStream Log, whose records must carry their person), else the write
 * finds or creates them with the events (the store's Log) and says whom.
 */
export class GroupCommitLog implements Log {
  private readonly batcher: Batcher<Pending>;
  private readonly refusal: Refusal;
  private readonly personFirst?: (e: NewEvent) => Promise<PersonOf>;

  constructor(
    private readonly write: (groups: Group[]) => Promise<Persons | void>,
    opts: GroupCommitOptions = {},
  ) {
    this.refusal = opts.refusal ?? (() => null);
    this.personFirst = opts.personFirst;
    const lanes = opts.lanes ? { keyOf: workspaceOf, weightOf: (p: Pending) => p.group.records.length, splitAt: opts.lanes.splitAt } : undefined;
    this.batcher = new Batcher(async (batch) => {
      try {
        await this.writeAll(batch);
      } catch (err) {
        if (this.refusal(err)) await this.isolate(batch, err);
        else {
          logger.warn('log append failed', { err });
          countLogFailures('unavailable', batch.length);
          for (const p of batch) p.done(new LogUnavailable(err));
        }
      }
    }, opts.maxInFlight ?? 1, lanes);
  }

  /** Writes `batch` and acknowledges each of its appends. */
  private async writeAll(batch: Pending[]): Promise<void> {
    const persons = await this.write(batch.map((p) => p.group));
    countLogWrite(batch);
    batch.forEach((p, i) => p.done(null, persons?.[i]));
  }

  /** `batch` failed with `first`, a refusal: write it again in halves until each refused append is alone. */
  private async isolate(batch: Pending[], first: unknown): Promise<void> {
    const settled = new Set<Pending>();
    try {
      const refused = await isolatePoison(
        batch,
        async (part) => {
          await this.writeAll(part);
          for (const p of part) settled.add(p);
        },
        (err) => this.refusal(err) !== null,
        { err: first },
      );
      for (const { item, err } of refused) {
        settled.add(item);
        item.done(this.refusal(err));
      }
      countLogFailures('refused', refused.length);
      logger.warn('log append refused; the other appends of its group were written', { refused: refused.length, group: batch.length, err: refused[0]?.err });
    } catch (err) {
      // An outage while writing the halves: what was written is acknowledged, the rest is not.
      logger.warn('log append failed', { err });
      for (const p of batch) if (!settled.has(p)) p.done(new LogUnavailable(err));
    }
  }

  async appendEvents(events: NewEvent[]): Promise<Appended[]> {
    const begun = personIds.begin();
    const known = await this.knownPersons(events);
    const records = events.map((e, i): LogRecord => (known[i] ? { ...e, person_id: known[i].id } : { ...e, person_id: null, new_person_id: newId() }));
    const found = await this.append(records);
    if (found?.some((f) => f?.raced)) throw new LogUnavailable(new Error('a messageId of these events was claimed by a concurrent append'));
    return records.map((r, i) => {
      const repeatOf = found?.[i]?.repeatOf;
      if (repeatOf) return { record: repeatOf, personCreated: false, duplicate: true };
      const person = known[i];
      // A record with its person is the event as appended; one without gets its person now.
      if (person) return { record: r as EventRecord, personCreated: person.created };
      const e = events[i]!;
      const { id, created } = found![i]!;
      personIds.fill(e.workspace_id, e.external_id, id, begun);
      return { record: { ...e, person_id: id }, personCreated: created };
    });
  }

  /** Each event's person as known before the append (the cache, then `personFirst`), else null. */
  private knownPersons(events: NewEvent[]): (PersonOf | null)[] | Promise<(PersonOf | null)[]> {
    const cached = (e: NewEvent) => {
      const id = personIds.get(e.workspace_id, e.external_id);
      return id ? { id, created: false } : null;
    };
    const first = this.personFirst;
    return first ? Promise.all(events.map(async (e) => cached(e) ?? first(e))) : events.map(cached);
  }

  /** Appends `records` as one group; resolves with the persons found for those without one. */
  private append(records: LogRecord[]): Promise<Persons[number] | undefined> {
    let json: string;
    try {
      json = JSON.stringify(records);
    } catch (err) {
      // A RangeError (a value nested deeper than the serializer's stack): this append only.
      return Promise.reject(unserializable(err));
    }
    const dedup = records.some((r) => r.message_id !== undefined);
    return new Promise((resolve, reject) => this.batcher.add({ group: { records, json, dedup }, done: (err, persons) => (err ? reject(err) : resolve(persons)) }));
  }

  async close(): Promise<void> {
    while (!this.batcher.idle) await new Promise((r) => setTimeout(r, 5));
  }
}

/** A statement PostgreSQL refused for the values it carries (store/db.ts `isDataError`): 400, for that append only. */
const storeRefusal: Refusal = (err) => {
  if (!isDataError(err)) return null;
  const why = (err as Error).message;
  return new InvalidInput(`The store cannot hold these events: ${why}`, [{ field: 'body', message: `holds a value the store refuses (${why})` }]);
};

/**
 * A group of this many records or more is written as two statements at once, on disjoint
 * workspaces, when the store has no other write of this Log in flight: a `track-batch` load
 * keeps two of PostgreSQL's cores busy from one actor, while `track`'s groups (tens of records)
 * stay one commit.
 */
const STORE_SPLIT_AT = 500;

/** Without ClickHouse (which needs NATS), analytics copies live in the store too. */
const APPLY = applyEvents(true);
const APPLY_DEDUP = applyEvents(true, true);

/** Message ids past their window count as absent; deleting them is housekeeping, at most hourly. */
const PURGE_EVERY_MS = 60 * 60_000;

/**
 * The store's Log: the appends of a tick are applied to `events` and the counts in one
 * statement (group commit), so an event is readable when acknowledged
 * and is written once. It used to go to a `log_entries` queue first, which a sink then
 * applied: every event was written, read back and deleted once more (migration 12 applied
 * what such a queue still held). People not in the actor's cache are found or created by the
 * same statement, in the same commit (they took a statement and a commit of their own).
 */
export function storeLog(db: Db): Log {
  let purgedAt = 0;
  return new GroupCommitLog(
    async (groups) => {
      // Each group's json is an array: their elements, joined, are the one array applied.
      const all = `[${groups.map((g) => g.json.slice(1, -1)).filter((inner) => inner !== '').join(',')}]`;
      if (groups.some((g) => g.dedup)) {
        if (Date.now() - purgedAt > PURGE_EVERY_MS) {
          purgedAt = Date.now();
          purgeMessageIds(db);
        }
        return outcomes(groups, (await db.query<RecordOutcome>(APPLY_DEDUP, [all])).rows);
      }
      const { rows } = await db.query<PersonOfRecord>(APPLY, [all]);
      const found = new Map(rows.map((r) => [Number(r.ord), { id: r.person_id, created: r.created }]));
      let ord = 0;
      return groups.map((g) => g.records.map((r) => {
        ord++;
        return r.person_id === null ? (found.get(ord) ?? missing(r)) : undefined;
      }));
    },
    { maxInFlight: 2, lanes: { splitAt: STORE_SPLIT_AT }, refusal: storeRefusal },
  );
}

/** The answer to `r`, a repeat of the message whose first event `first` is. */
export function repeated(r: LogRecord, first: Omit<FirstEvent, 'workspace_id' | 'message_id'>): PersonOf {
  // The first event's stored fields; its person deleted since, what this repeat sent.
  const repeatOf = {
    id: first.event_id, workspace_id: r.workspace_id, person_id: first.person_id, external_id: r.external_id,
    type: first.type ?? r.type, parameters: first.parameters ?? r.parameters, created_at: first.created_at?.toISOString() ?? r.created_at,
  };
  return { id: first.person_id, created: false, repeatOf };
}

/** What the statement with message ids says of each record of `groups`, as {@link Persons}. */
function outcomes(groups: Group[], rows: RecordOutcome[]): Persons {
  const byOrd = new Map(rows.map((r) => [Number(r.ord), r]));
  let ord = 0;
  return groups.map((g) => g.records.map((r) => {
    const row = byOrd.get(++ord);
    if (row?.raced) return { id: '', created: false, raced: true };
    if (row?.event_id) return repeated(r, { ...row, event_id: row.event_id });
    if (r.person_id !== null) return undefined;
    return row?.person_id ? { id: row.person_id, created: row.created } : missing(r);
  }));
}

/** The statement answers every record without a person; not doing so is a defect, not an outage to retry. */
function missing(r: LogRecord): never {
  throw new Error(`the apply statement found no person for event ${r.id} (${r.external_id})`);
}

// The send counters of the send policy's caps (docs/channels.md), per person, kept by the actor that decides the person's
// capped sends: the workspace's owner, the only actor that sends for a workspace whose policy
// sets a cap (campaigns/executor.ts: other actors share a fan-out only while no cap is set).
// An entry holds the times of the person's `sent` pushes within COUNTER_HORIZON_MS. It is loaded
// from the stored push records the first time a capped send needs it (so a restart loses
// nothing), and again when the workspace's settings changed since (a cap set anew: meanwhile
// other actors may have sent to the person, uncounted here); from then on every send this actor
// makes keeps it up to date, including sends while no cap is set. Reading and reserving happen
// with no await between them, so two sends to one person in one actor cannot both take the last slot.
import { LRUCache } from 'lru-cache';
import { COUNTER_HORIZON_MS } from '../domain/send-policy.js';
import type { Db } from '../store/db.js';
import { sentTimes } from '../store/messages.js';

interface Entry {
  times: number[];
  /** When it was read from the records (epoch ms). */
  loadedAt: number;
}

export class SendCounters {
  private readonly people: LRUCache<string, Entry>;

  constructor(
    private readonly db: Db,
    maxPeople: number,
  ) {
    this.people = new LRUCache({ max: maxPeople });
  }

  /** Loads from the stored records the people not held, or held from before `sinceMs` (their workspace's settings changed). */
  async load(personIds: readonly string[], sinceMs: number): Promise<void> {
    const missing = [...new Set(personIds)].filter((id) => (this.people.get(id)?.loadedAt ?? -Infinity) < sinceMs);
    if (missing.length === 0) return;
    const loadedAt = Date.now();
    const stored = await sentTimes(this.db, missing, loadedAt - COUNTER_HORIZON_MS);
    // Another load ended while this read was in flight: its entry has the reservations made since; it stays.
    for (const id of missing) if ((this.people.get(id)?.loadedAt ?? -Infinity) < sinceMs) this.people.set(id, { times: stored.get(id) ?? [], loadedAt });
  }

  /** The person's sent times within the horizon; [] for a person not loaded. */
  times(personId: string, nowMs: number): number[] {
    const entry = this.people.get(personId);
    if (!entry) return [];
    const from = nowMs - COUNTER_HORIZON_MS;
    if (entry.times.length > 0 && entry.times[0]! <= from) entry.times = entry.times.filter((t) => t > from);
    return entry.times;
  }

  /** Counts a send at `atMs` for a person held (one not held is read from the records when needed). */
  reserve(personId: string, atMs: number): void {
    this.people.get(personId)?.times.push(atMs);
  }

  /** Takes back a reservation whose send did not end `sent`. */
  release(personId: string, atMs: number): void {
    const times = this.people.get(personId)?.times;
    const i = times?.lastIndexOf(atMs) ?? -1;
    if (i >= 0) times!.splice(i, 1);
  }
}

// The send counters of DECISIONS §5, per person, owned by the actor of the person's workspace:
// the times of the person's `sent` pushes within COUNTER_HORIZON_MS. A person's entry is
// loaded from the stored push records the first time a capped send needs it (so a restart
// loses nothing) and from then on kept up to date by every send this actor makes, including
// sends while no cap is set. Reading and reserving happen with no await between them, so two
// sends to one person in one actor cannot both take the last slot.
import { LRUCache } from 'lru-cache';
import { COUNTER_HORIZON_MS } from '../domain/send-policy.js';
import type { Db } from '../store/db.js';
import { sentTimes } from '../store/push-messages.js';

export class SendCounters {
  private readonly people: LRUCache<string, number[]>;

  constructor(
    private readonly db: Db,
    maxPeople: number,
  ) {
    this.people = new LRUCache({ max: maxPeople });
  }

  /** Loads the people not held yet from the stored records. */
  async load(personIds: readonly string[]): Promise<void> {
    const missing = [...new Set(personIds)].filter((id) => !this.people.has(id));
    if (missing.length === 0) return;
    const stored = await sentTimes(this.db, missing, Date.now() - COUNTER_HORIZON_MS);
    // A send reserved while the read was in flight has an entry by now: that one is newer.
    for (const id of missing) if (!this.people.has(id)) this.people.set(id, stored.get(id) ?? []);
  }

  /** The person's sent times within the horizon; [] for a person not loaded. */
  times(personId: string, nowMs: number): number[] {
    const times = this.people.get(personId);
    if (!times) return [];
    const from = nowMs - COUNTER_HORIZON_MS;
    if (times.length > 0 && times[0]! <= from) {
      const kept = times.filter((t) => t > from);
      this.people.set(personId, kept);
      return kept;
    }
    return times;
  }

  /** Counts a send at `atMs` for a person held (one not held is read from the records when needed). */
  reserve(personId: string, atMs: number): void {
    this.people.get(personId)?.push(atMs);
  }

  /** Takes back a reservation whose send did not end `sent`. */
  release(personId: string, atMs: number): void {
    const times = this.people.get(personId);
    const i = times?.lastIndexOf(atMs) ?? -1;
    if (i >= 0) times!.splice(i, 1);
  }
}

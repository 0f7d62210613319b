// Group commit for anything: items added in the same tick, and all items added while a run is
// in flight, go to the next run together. Under load this turns many small store statements
// (or publishes) into few large ones; when quiet, a lone item still runs on the next tick.
import { shardOf } from './shard.js';

/**
 * Runs that must not touch the same rows at once: items of one key (a workspace) are never in
 * two runs at the same time, and run in the order added. A run starts beside another only
 * with a batch worth a statement of its own: a batch of `splitAt` weight or more is split by
 * key over the runs free. So small batches keep the fewest commits, and large ones use several
 * of the store's cores without waiting on each other's row locks.
 */
export interface Lanes<T> {
  keyOf: (item: T) => string;
  weightOf: (item: T) => number;
  splitAt: number;
}

export class Batcher<T> {
  private items: T[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** With lanes: the keys of the runs in flight. */
  private readonly busyKeys = new Set<string>();

  /** `run` settles its items itself (it must not reject); `maxInFlight` runs may overlap. */
  constructor(
    private readonly run: (items: T[]) => Promise<void>,
    private readonly maxInFlight = 1,
    private readonly lanes?: Lanes<T>,
  ) {}

  add(item: T): void {
    this.items.push(item);
    // An item whose key is in flight waits for that run's end, which kicks again.
    if (this.lanes && this.busyKeys.has(this.lanes.keyOf(item))) return;
    this.kick();
  }

  /** True when nothing is waiting or running. */
  get idle(): boolean {
    return this.items.length === 0 && !this.scheduled && this.inFlight === 0;
  }

  private kick(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.items.length === 0) return;
    this.scheduled = true;
    setImmediate(() => this.next());
  }

  private next(): void {
    this.scheduled = false;
    const lanes = this.lanes;
    if (!lanes) {
      const items = this.items;
      this.items = [];
      void this.start(items, []);
      return;
    }
    // The waiting items whose keys are free, in order; the others wait for their run's end.
    const ready: T[] = [];
    const waiting: T[] = [];
    for (const item of this.items) (this.busyKeys.has(lanes.keyOf(item)) ? waiting : ready).push(item);
    const weight = ready.reduce((w, item) => w + lanes.weightOf(item), 0);
    // Beside a run in flight, only a batch worth a statement of its own; else it joins the next.
    if (ready.length === 0 || (this.inFlight > 0 && weight < lanes.splitAt)) return;
    this.items = waiting;
    const parts = weight >= lanes.splitAt ? splitByKey(ready, lanes.keyOf, this.maxInFlight - this.inFlight) : [ready];
    for (const part of parts) void this.start(part, [...new Set(part.map(lanes.keyOf))]);
  }

  private async start(items: T[], keys: string[]): Promise<void> {
    for (const k of keys) this.busyKeys.add(k);
    this.inFlight++;
    try {
      await this.run(items);
    } finally {
      for (const k of keys) this.busyKeys.delete(k);
      this.inFlight--;
      this.kick();
    }
  }
}

/** `items` in up to `n` parts by a hash of their keys (fewer, when no key falls on a part). */
function splitByKey<T>(items: T[], keyOf: (item: T) => string, n: number): T[][] {
  const parts: T[][] = Array.from({ length: n }, () => []);
  for (const item of items) parts[shardOf(keyOf(item), n)]!.push(item);
  return parts.filter((p) => p.length > 0);
}

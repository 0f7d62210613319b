// Group commit for anything: items added in the same tick, and all items added while a run is
// in flight, go to the next run together. Under load this turns many small store statements
// (or publishes) into few large ones; when quiet, a lone item still runs on the next tick.

export class Batcher<T> {
  private items: T[] = [];
  private scheduled = false;
  private inFlight = 0;

  /** `run` settles its items itself (it must not reject); `maxInFlight` runs may overlap. */
  constructor(private readonly run: (items: T[]) => Promise<void>, private readonly maxInFlight = 1) {}

  add(item: T): void {
    this.items.push(item);
    this.kick();
  }

  /** True when nothing is waiting or running. */
  get idle(): boolean {
    return this.items.length === 0 && !this.scheduled && this.inFlight === 0;
  }

  private kick(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.items.length === 0) return;
    this.scheduled = true;
    setImmediate(() => void this.next());
  }

  private async next(): Promise<void> {
    this.scheduled = false;
    const items = this.items;
    this.items = [];
    this.inFlight++;
    try {
      await this.run(items);
    } finally {
      this.inFlight--;
      this.kick();
    }
  }
}

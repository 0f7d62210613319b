// Workspaces taking turns at a shared resource (the campaign executor's pages, the engine's
// provider sends): round-robin with a cap per key. The first key in line that has room is
// served and goes to the back of the line, so a key with much waiting work gets one turn per
// round like any other, and a key whose turns are stuck (a slow provider) holds at most
// `perKey` of them while the others are served.

export class Turns<K> {
  /** Keys waiting for a turn, in line order (a Set keeps insertion order: served ones move to the back). */
  private readonly line = new Set<K>();
  /** Turns under way, per key. */
  private readonly busy = new Map<K, number>();

  constructor(private readonly perKey: number) {}

  /** The key joins the back of the line; one already in line keeps its place. */
  join(key: K): void {
    this.line.add(key);
  }

  /** The key leaves the line (it has nothing waiting); its turns under way go on. */
  leave(key: K): void {
    this.line.delete(key);
  }

  /** The keys in line, in line order. */
  inLine(): IterableIterator<K> {
    return this.line.values();
  }

  /** Whether the key could start another turn now. */
  hasRoom(key: K): boolean {
    return (this.busy.get(key) ?? 0) < this.perKey;
  }

  /** The first key in line with room: its turn starts, and it goes to the back of the line. Undefined when none has room. */
  next(): K | undefined {
    for (const key of this.line) {
      if (!this.hasRoom(key)) continue;
      this.line.delete(key);
      this.line.add(key);
      this.start(key);
      return key;
    }
    return undefined;
  }

  /** A turn starts for the key outside the line (it had room and nobody was waiting). */
  start(key: K): void {
    this.busy.set(key, (this.busy.get(key) ?? 0) + 1);
  }

  /** A turn of the key ended. */
  done(key: K): void {
    const n = (this.busy.get(key) ?? 0) - 1;
    if (n > 0) this.busy.set(key, n);
    else this.busy.delete(key);
  }
}

// Group commit in rounds, for multi-row upserts: the items added in one tick (and while a write
// is in flight, util/batcher.ts) are split into rounds in which no key repeats, keeping arrival
// order (the n-th item of a key goes to round n: a statement may touch a row once, and a later
// write of the same row must win, as one by one). Each round is one write; an item it wrote
// nothing for, and every item of a round that failed, is then written alone, so one cannot
// fail another.
import { Batcher } from './batcher.js';

export interface Waiting<R> {
  resolve: (r: R) => void;
  reject: (err: unknown) => void;
}

export interface GroupedWrites<T, R> {
  key: (item: T) => string;
  /** Writes a round; answers each item's result in the round's order (undefined: not written). */
  writeRound: (round: T[]) => Promise<(R | undefined)[]>;
  /** Writes one item on its own. */
  alone: (item: T) => Promise<R>;
}

function rounds<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const out: T[][] = [];
  const seen = new Map<string, number>();
  for (const item of items) {
    const k = key(item);
    const i = (seen.get(k) ?? -1) + 1;
    seen.set(k, i);
    (out[i] ??= []).push(item);
  }
  return out;
}

/** Returns `add`: the item joins the next group and is settled once it is written. */
export function groupedWriter<T extends Waiting<R>, R>(w: GroupedWrites<T, R>): (item: T) => void {
  const batcher = new Batcher<T>(async (group) => {
    for (const round of rounds(group, w.key)) {
      const written = await w.writeRound(round).catch(() => round.map(() => undefined));
      for (const [i, item] of round.entries()) {
        const r = written[i];
        if (r !== undefined) {
          item.resolve(r);
          continue;
        }
        try {
          item.resolve(await w.alone(item));
        } catch (err) {
          item.reject(err);
        }
      }
    }
  });
  return (item) => batcher.add(item);
}

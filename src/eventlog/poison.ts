// Poison isolation, shared by the sinks and the group commit: when a batch fails for a reason
// that lies in what it carries (a value the store refuses), halve it until each bad item is
// alone, so that one item never holds back the others. Any other failure (an outage) stops
// the search at once and is thrown: the caller retries later, setting nothing aside.

export interface Poisoned<T> {
  item: T;
  err: unknown;
}

/**
 * Applies `items` with `apply`, in halves when a part fails with an error `isPoison` accepts;
 * returns the items that failed alone, with their errors. Parts that succeeded stay applied.
 * `failed`: how the whole batch already failed, when it did (it is then not tried whole again).
 * Throws the first error `isPoison` does not accept. With one bad item among n, this costs
 * about 2·log2(n) calls of `apply`.
 */
export async function isolatePoison<T>(items: T[], apply: (part: T[]) => Promise<void>, isPoison: (err: unknown) => boolean, failed?: { err: unknown }): Promise<Poisoned<T>[]> {
  const poisoned: Poisoned<T>[] = [];
  const split = async (part: T[], err: unknown): Promise<void> => {
    if (part.length === 1) {
      poisoned.push({ item: part[0]!, err });
      return;
    }
    const mid = Math.ceil(part.length / 2);
    await attempt(part.slice(0, mid));
    await attempt(part.slice(mid));
  };
  const attempt = async (part: T[]): Promise<void> => {
    if (part.length === 0) return;
    try {
      await apply(part);
    } catch (err) {
      if (!isPoison(err)) throw err;
      await split(part, err);
    }
  };
  if (!failed) await attempt(items);
  else if (items.length > 0) await split(items, failed.err);
  return poisoned;
}

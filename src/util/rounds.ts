/**
 * Splits `items` into rounds in which no key repeats, keeping arrival order: the n-th item of
 * a key goes to round n. For multi-row upserts, which may touch a row once per statement: a
 * later write of the same row goes in a later statement, so it wins as it would one by one.
 */
export function rounds<T>(items: readonly T[], key: (item: T) => string): T[][] {
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

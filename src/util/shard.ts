/** FNV-1a: a cheap, stable spread of keys (workspace ids over actors, people over sink statements) into `n` shards. */
export function shardOf(key: string, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % n;
}

// The group commit's batching (src/util/batcher.ts): items of a tick run together; with lanes,
// runs hold disjoint keys, a second run starts only for a large batch, split in two by key.
import t from 'tap';
import { Batcher, type Lanes } from '../../src/util/batcher.js';
import { shardOf } from '../../src/util/shard.js';

interface Item {
  key: string;
  n: number;
  weight: number;
}

/** A batcher whose runs are held open until `release()`; `runs` records each run's items. */
function held(maxInFlight: number, lanes?: Lanes<Item>) {
  const runs: Item[][] = [];
  const open: (() => void)[] = [];
  const b = new Batcher<Item>((items) => {
    runs.push(items);
    return new Promise<void>((r) => open.push(r));
  }, maxInFlight, lanes);
  const release = async () => {
    for (const r of open.splice(0)) r();
    // A run's end schedules the next on the tick after it.
    await tick();
    await tick();
  };
  return { b, runs, release, open };
}

const tick = () => new Promise((r) => setImmediate(r));
const item = (key: string, n: number, weight = 1): Item => ({ key, n, weight });
const LANES: Lanes<Item> = { keyOf: (i) => i.key, weightOf: (i) => i.weight, splitAt: 100 };
// Two keys that fall on different sides of the split.
const [A, B] = (() => {
  const keys = Array.from({ length: 16 }, (_, i) => `ws-${i}`);
  return [keys.find((k) => shardOf(k, 2) === 0)!, keys.find((k) => shardOf(k, 2) === 1)!];
})();

t.test('items of one tick are one run; those added while it runs are the next', async (t) => {
  const { b, runs, release } = held(1);
  b.add(item(A, 1));
  b.add(item(B, 2));
  await tick();
  b.add(item(A, 3));
  await tick();
  t.same(runs.map((r) => r.map((i) => i.n)), [[1, 2]], 'one run in flight');
  await release();
  t.same(runs.map((r) => r.map((i) => i.n)), [[1, 2], [3]]);
  await release();
  t.ok(b.idle);
});

t.test('lanes: a small batch waits for the run in flight, even on other keys (one commit for it all)', async (t) => {
  const { b, runs, release } = held(2, LANES);
  b.add(item(A, 1));
  await tick();
  b.add(item(B, 2));
  b.add(item(A, 3));
  await tick();
  t.same(runs.length, 1, 'no second run beside the first for two items');
  await release();
  t.same(runs[1]!.map((i) => i.n), [2, 3], 'the next run takes both, in order');
  await release();
  t.ok(b.idle);
});

t.test('lanes: a large batch is split in two runs by key; a key in flight waits, in order', async (t) => {
  const { b, runs, release, open } = held(2, LANES);
  for (let n = 0; n < 4; n++) b.add(item(n % 2 ? B : A, n, 50));
  await tick();
  t.equal(runs.length, 2, 'two runs at once');
  t.same(runs.map((r) => [...new Set(r.map((i) => i.key))]).sort(), [[A], [B]].sort(), 'on disjoint keys');
  t.same(runs.flat().map((i) => i.n).sort(), [0, 1, 2, 3], 'every item once');
  // Two runs in flight: nothing more starts, however large.
  b.add(item(A, 4, 500));
  await tick();
  t.equal(runs.length, 2, 'at most two runs');
  // A's run ends: the waiting A goes (B is still in flight), as a batch of its own.
  const aRun = runs.findIndex((r) => r[0]!.key === A);
  open.splice(aRun, 1)[0]!();
  await tick();
  await tick();
  t.same(runs[2]!.map((i) => i.n), [4], 'A, once its run ended');
  await release();
  await release();
  t.ok(b.idle);
});

t.test('lanes: beside a run, a large batch starts with the keys not in flight; a key in flight waits', async (t) => {
  const { b, runs, release, open } = held(2, LANES);
  b.add(item(A, 1));
  await tick();
  t.equal(runs.length, 1, 'A in flight');
  b.add(item(A, 2, 500));
  b.add(item(B, 3, 500));
  await tick();
  t.same(runs.map((r) => r.map((i) => i.n)), [[1], [3]], 'B runs beside A; A\'s next waits for its run');
  open.shift()!();
  await tick();
  await tick();
  t.same(runs[2]!.map((i) => i.n), [2], 'then A, in order');
  await release();
  await release();
  t.ok(b.idle);
});

// Work of many keys sharing a few slots (src/util/turn-queue.ts): one of a key's at a time, the
// slots shared in turn, a bounded line per key, and a deadline for the wait.
import t from 'tap';
import { TurnQueue, TurnRefused } from '../../src/util/turn-queue.js';

/** Work that runs until `finish` is called; `order` records when each piece started. */
function pieces(queue: TurnQueue<string>, order: string[]) {
  const finish = new Map<string, () => void>();
  const submit = (key: string, name: string, deadline = Date.now() + 60_000) =>
    queue.run(key, deadline, () => {
      order.push(name);
      return new Promise<string>((resolve) => finish.set(name, () => resolve(name)));
    });
  const done = async (name: string) => {
    finish.get(name)!();
    // The next piece starts once the finished one's promise has settled.
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { submit, done };
}

t.test("one of a key's pieces at a time; the slots go to the keys in turn", async (t) => {
  const order: string[] = [];
  const { submit, done } = pieces(new TurnQueue<string>({ slots: 2, linePerKey: 10 }), order);
  const all = [submit('a', 'a1'), submit('a', 'a2'), submit('a', 'a3'), submit('b', 'b1'), submit('b', 'b2'), submit('c', 'c1')];
  await new Promise((resolve) => setImmediate(resolve));
  t.same(order, ['a1', 'b1'], "a's second waits for its first; b takes the other slot");
  await done('a1');
  t.same(order, ['a1', 'b1', 'a2'], 'a was in line first');
  await done('b1');
  t.same(order, ['a1', 'b1', 'a2', 'b2'], 'b, in line before c');
  await done('a2');
  t.same(order, ['a1', 'b1', 'a2', 'b2', 'c1'], 'c, before a again: a was served last');
  await done('c1');
  t.same(order, ['a1', 'b1', 'a2', 'b2', 'c1', 'a3']);
  await done('b2');
  await done('a3');
  t.same(await Promise.all(all), ['a1', 'a2', 'a3', 'b1', 'b2', 'c1'], 'each answers its own work');
});

t.test("a key's line is bounded; a wait past the deadline gives up, and neither runs", async (t) => {
  const order: string[] = [];
  const { submit, done } = pieces(new TurnQueue<string>({ slots: 1, linePerKey: 2 }), order);
  const first = submit('a', 'a1');
  const waiting = [submit('a', 'a2'), submit('a', 'a3')];
  await t.rejects(submit('a', 'a4'), new TurnRefused('line_full'), 'a third waiting is refused at once');
  const other = submit('b', 'b1', Date.now() + 50);
  await t.rejects(other, new TurnRefused('deadline'), 'b waited past its deadline (the slot was a\'s)');
  await done('a1');
  await done('a2');
  await done('a3');
  t.same(await Promise.all([first, ...waiting]), ['a1', 'a2', 'a3']);
  t.same(order, ['a1', 'a2', 'a3'], 'the refused pieces never ran');
  const after = submit('b', 'b2');
  await new Promise((resolve) => setImmediate(resolve));
  await done('b2');
  t.equal(await after, 'b2', 'b is served after its refused wait left the line');
});

t.test('work that fails frees its turn', async (t) => {
  const queue = new TurnQueue<string>({ slots: 1, linePerKey: 1 });
  await t.rejects(queue.run('a', Date.now() + 1000, () => Promise.reject(new Error('boom'))), { message: 'boom' });
  t.equal(await queue.run('a', Date.now() + 1000, async () => 'next'), 'next');
});

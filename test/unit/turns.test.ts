// Workspaces taking turns (src/util/turns.ts) and the engine's per-workspace share of provider
// sends built on them (src/channels/send-shares.ts).
import t from 'tap';
import { Turns } from '../../src/util/turns.js';
import { SendShares } from '../../src/channels/send-shares.js';

t.test('turns go round the line, a served key to the back', async (t) => {
  const turns = new Turns<string>(10);
  for (const k of ['a', 'b', 'c']) turns.join(k);
  t.same(Array.from({ length: 7 }, () => turns.next()), ['a', 'b', 'c', 'a', 'b', 'c', 'a']);
  turns.join('a');
  t.equal(turns.next(), 'b', 'joining again keeps the place in line');
});

t.test('a key at its cap is passed over until one of its turns ends', async (t) => {
  const turns = new Turns<string>(2);
  turns.join('slow');
  turns.join('fast');
  t.same([turns.next(), turns.next(), turns.next(), turns.next(), turns.next()], ['slow', 'fast', 'slow', 'fast', undefined], 'both at their cap');
  t.notOk(turns.hasRoom('slow'));
  turns.done('fast');
  turns.done('fast');
  t.equal(turns.next(), 'fast', 'slow is still at its cap');
  turns.done('slow');
  t.equal(turns.next(), 'slow', 'a turn of slow ended: slow is next (it was first in line)');
  t.equal(turns.next(), 'fast');
});

t.test('a key that left is not served; its turns under way still count', async (t) => {
  const turns = new Turns<string>(1);
  turns.join('a');
  turns.join('b');
  t.equal(turns.next(), 'a');
  turns.leave('a');
  t.equal(turns.next(), 'b');
  t.equal(turns.next(), undefined, 'b at its cap, a gone');
  turns.join('a');
  t.equal(turns.next(), undefined, 'a back in line but its turn is still under way');
  turns.done('a');
  t.equal(turns.next(), 'a');
  t.notOk(turns.hasRoom('a'));
  turns.start('c');
  t.notOk(turns.hasRoom('c'), 'a turn started outside the line counts');
});

/** A send held until released; `started` lists the workspaces in the order their sends began. */
function held(shares: SendShares) {
  const started: string[] = [];
  const open: (() => void)[] = [];
  const send = (ws: string) =>
    shares.run(ws, () => {
      started.push(ws);
      return new Promise<void>((r) => open.push(r));
    });
  return { started, open, send };
}

const settle = () => new Promise((r) => setImmediate(r));

/** Ends every held send, and those that start meanwhile, until all have run. */
async function drain(h: ReturnType<typeof held>, sends: Promise<void>[]): Promise<void> {
  let all = false;
  void Promise.all(sends).then(() => (all = true));
  while (!all) {
    for (const r of h.open.splice(0)) r();
    await settle();
  }
}

t.test('a workspace holds at most its share; the others get the rest', async (t) => {
  const shares = new SendShares(4, 2);
  const h = held(shares);
  const sends = Array.from({ length: 5 }, () => h.send('slow'));
  await settle();
  t.same(h.started, ['slow', 'slow'], 'the slow workspace is at its share');
  sends.push(h.send('a'), h.send('b'));
  await settle();
  t.same(h.started, ['slow', 'slow', 'a', 'b'], 'the others are served while its sends are held');
  sends.push(h.send('a'));
  await settle();
  t.equal(h.started.length, 4, 'all four slots taken');
  h.open[2]!(); // a's first send ends
  await settle();
  t.same(h.started.slice(4), ['a'], 'the freed slot goes to a waiting workspace with room (slow has none)');
  h.open[0]!(); // one of slow's ends
  await settle();
  t.same(h.started.slice(5), ['slow']);
  await drain(h, sends);
  t.equal(h.started.filter((w) => w === 'slow').length, 5, 'every send ran');
});

t.test('when the total is the limit, freed slots go to the waiting workspaces in turn', async (t) => {
  const shares = new SendShares(2, 2);
  const h = held(shares);
  const sends = [h.send('a'), h.send('a'), h.send('a'), h.send('a'), h.send('b'), h.send('b'), h.send('c')];
  await settle();
  t.same(h.started, ['a', 'a']);
  for (let i = 0; i < 5; i++) {
    h.open[i]!();
    await settle();
  }
  // a was first in line, then b, c, and each one served goes to the back.
  t.same(h.started, ['a', 'a', 'a', 'b', 'c', 'a', 'b'], 'a, b and c take turns');
  await drain(h, sends);
});

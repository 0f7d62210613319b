// The send counters (src/channels/counters.ts): an entry is read from the records once, kept
// up to date by this actor's sends, and read again once its workspace's settings changed (a
// cap set anew: other actors may have sent meanwhile, while no cap was set). The records are a
// stand-in for the store's answer to sentTimes.
import t from 'tap';
import { SendCounters } from '../../src/channels/counters.js';
import type { Db } from '../../src/store/db.js';

function recordsOf(times: () => number[]) {
  const reads: string[][] = [];
  const db = {
    async query(_sql: unknown, params: unknown[]) {
      const ids = params[0] as string[];
      reads.push(ids);
      return { rows: ids.map((person_id) => ({ person_id, times: times().map(String) })), rowCount: ids.length };
    },
  } as unknown as Db;
  return { db, reads };
}

t.test('an entry is read once, then kept by this actor’s sends', async (t) => {
  const now = Date.now();
  const { db, reads } = recordsOf(() => [now - 1000]);
  const c = new SendCounters(db, 10);
  await c.load(['p'], 0);
  await c.load(['p'], 0);
  t.equal(reads.length, 1, 'read from the records once');
  c.reserve('p', now);
  t.same(c.times('p', now), [now - 1000, now], "this actor's send counted");
});

t.test("an entry is read again when the workspace's settings changed since it was read", async (t) => {
  const now = Date.now();
  let stored = [now - 1000];
  const { db, reads } = recordsOf(() => stored);
  const c = new SendCounters(db, 10);
  await c.load(['p'], now - 60_000);
  // Meanwhile another actor sent to p (no cap was set), then a cap was set: the settings changed.
  stored = [now - 1000, now - 500];
  const changed = Date.now() + 1;
  await new Promise((r) => setTimeout(r, 5));
  await c.load(['p'], changed);
  t.equal(reads.length, 2, 'read again');
  t.same(c.times('p', Date.now()), stored, "the other actor's send is counted");
  await c.load(['p'], changed);
  t.equal(reads.length, 2, 'and not again for the same change');
});

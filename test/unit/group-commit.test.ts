// Poison isolation (src/eventlog/poison.ts) and the group commit's use of it
// (src/eventlog/event-log.ts GroupCommitLog), with a stand-in write: a group holding a refused
// append is written again in halves, so only that append fails; an outage fails them all.
import t from 'tap';
import { isolatePoison } from '../../src/eventlog/poison.js';
import { GroupCommitLog, LogUnavailable, type Group } from '../../src/eventlog/event-log.js';
import { DomainError, InvalidInput } from '../../src/domain/errors.js';
import type { EventRecord } from '../../src/domain/events.js';
import { setLogLevel } from '../../src/logger.js';

setLogLevel('error'); // the refusals and outages below are logged as warnings

class Refused extends Error {}
class Outage extends Error {}
const isRefused = (err: unknown) => err instanceof Refused;

t.test('isolatePoison: each bad item ends alone, the good ones are applied, in about 2·log2(n) calls', async (t) => {
  const items = Array.from({ length: 64 }, (_, i) => i);
  const bad = new Set([5, 40]);
  const applied: number[] = [];
  let calls = 0;
  const poisoned = await isolatePoison(
    items,
    async (part) => {
      calls++;
      if (part.some((i) => bad.has(i))) throw new Refused(`bad in ${part[0]}..${part.at(-1)}`);
      applied.push(...part);
    },
    isRefused,
  );
  t.same(poisoned.map((p) => p.item), [5, 40], 'the two bad items, alone');
  t.ok(poisoned.every((p) => p.err instanceof Refused), 'each with its error');
  t.same([...applied].sort((a, b) => a - b), items.filter((i) => !bad.has(i)), 'every other item applied once');
  t.ok(calls <= 4 * Math.log2(items.length) + 1, `${calls} calls for 2 bad items among 64`);
});

t.test('isolatePoison: an outage stops the search and is thrown; what was applied stays applied', async (t) => {
  const applied: number[] = [];
  let n = 0;
  const err = await isolatePoison(
    [1, 2, 3, 4],
    async (part) => {
      n++;
      if (n === 1) throw new Refused('whole');
      if (n === 3) throw new Outage('store down');
      applied.push(...part);
    },
    isRefused,
  ).catch((e: unknown) => e);
  t.ok(err instanceof Outage, 'the outage is thrown');
  t.same(applied, [1, 2], 'the first half was applied before it');
});

t.test('isolatePoison: with `failed`, the whole batch is not tried again; nothing to do for none', async (t) => {
  const parts: number[][] = [];
  const poisoned = await isolatePoison([1], async (p) => void parts.push(p), isRefused, { err: new Refused('x') });
  t.same(parts, [], 'a lone item that already failed is not tried again');
  t.equal(poisoned.length, 1);
  t.same(await isolatePoison([], async () => void t.fail('no call'), isRefused), []);
});

const PERSON = '00000000-0000-4000-8000-000000000002';
const rec = (id: string, extra: Partial<EventRecord> = {}): EventRecord => ({
  id,
  workspace_id: '00000000-0000-4000-8000-000000000001',
  person_id: PERSON,
  external_id: 'u',
  type: 'e',
  parameters: {},
  created_at: new Date().toISOString(),
  ...extra,
});

/** A log whose write refuses any group holding an event of type `bad`, and fails for all while `down`. */
function fakeLog() {
  const written: string[] = [];
  const state = { down: false, writes: 0 };
  const log = new GroupCommitLog(
    async (groups: Group[]) => {
      state.writes++;
      if (state.down) throw new Outage('connection refused');
      if (groups.some((g) => g.records.some((r) => r.type === 'bad'))) throw new Refused('value out of range');
      for (const g of groups) written.push(...g.records.map((r) => r.id));
      return groups.map((g) => g.records.map(() => ({ id: PERSON, created: false })));
    },
    { refusal: (err) => (err instanceof Refused ? new InvalidInput(`refused: ${err.message}`, [{ field: 'body', message: err.message }]) : null) },
  );
  return { log, written, state };
}

t.test('GroupCommitLog: a refused append fails alone (its DomainError); the others of its group are acknowledged', async (t) => {
  const { log, written, state } = fakeLog();
  // Appended in one tick: one group.
  const outcomes = await Promise.allSettled([
    ...Array.from({ length: 20 }, (_, i) => log.appendEvents([rec(`good-${i}`)])),
    log.appendEvents([rec('bad-1', { type: 'bad' }), rec('bad-1b')]),
    ...Array.from({ length: 20 }, (_, i) => log.appendEvents([rec(`good-${20 + i}`)])),
  ]);
  const rejected = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [[i, o.reason as unknown] as const] : []));
  t.equal(rejected.length, 1, 'one append rejected');
  t.equal(rejected[0]![0], 20, 'the refused one');
  t.ok(rejected[0]![1] instanceof DomainError && (rejected[0]![1]).code === 'VALIDATION_ERROR', 'with the DomainError the refusal gave (400)');
  t.same([...written].sort(), Array.from({ length: 40 }, (_, i) => `good-${i}`).sort(), 'the 40 others written, once each; nothing of the refused append');
  t.ok(state.writes <= 1 + 2 * Math.ceil(Math.log2(41)) + 2, `${state.writes} writes`);
  await log.close();
});

t.test('GroupCommitLog: an outage fails every append of the group with LogUnavailable (503), none refused', async (t) => {
  const { log, written, state } = fakeLog();
  state.down = true;
  const outcomes = await Promise.allSettled([log.appendEvents([rec('a')]), log.appendEvents([rec('b', { type: 'bad' })]), log.appendEvents([rec('c')])]);
  t.same(outcomes.map((o) => o.status === 'rejected' && o.reason instanceof LogUnavailable), [true, true, true]);
  t.same(written, []);
  t.equal(state.writes, 1, 'not retried in halves');
  state.down = false;
  await log.appendEvents([rec('d')]);
  t.same(written, ['d'], 'appends again once it is back');
  await log.close();
});

t.test('GroupCommitLog: an append that cannot be serialized is refused before it joins a group', async (t) => {
  const { log, written } = fakeLog();
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = { a: deep };
  const outcomes = await Promise.allSettled([log.appendEvents([rec('x')]), log.appendEvents([rec('deep', { parameters: deep as Record<string, unknown> })]), log.appendEvents([rec('y')])]);
  t.same(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
  const reason = (outcomes[1] as PromiseRejectedResult).reason as DomainError;
  t.equal(reason.code, 'VALIDATION_ERROR', reason.message);
  t.same(written.sort(), ['x', 'y']);
  await log.close();
});

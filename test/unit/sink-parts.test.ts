import t from 'tap';
import { partsByPerson } from '../../src/eventlog/event-sink.js';

const rec = (person: string, n: number) => ({ id: `${person}-${n}`, person_id: person });

t.test('partsByPerson: one statement takes the batch as it is', async (t) => {
  const records = [rec('a', 1), rec('b', 1)];
  t.same(partsByPerson(records, 1), [records]);
});

t.test('partsByPerson: each person in one part, in the order of the batch, nothing lost or repeated', async (t) => {
  const people = Array.from({ length: 40 }, (_, i) => `p${i}`);
  const records = Array.from({ length: 400 }, (_, i) => rec(people[(i * 7) % people.length]!, i));
  const parts = partsByPerson(records, 3) as ReturnType<typeof rec>[][];
  t.ok(parts.length > 1 && parts.length <= 3, `split into ${parts.length} parts`);
  t.ok(parts.every((p) => p.length > 0), 'no empty part');
  t.same(parts.flat().map((r) => r.id).sort(), records.map((r) => r.id).sort(), 'every record once');
  const partOf = new Map<string, number>();
  parts.forEach((part, i) => {
    for (const r of part) {
      t.equal(partOf.get(r.person_id) ?? i, i, `${r.person_id} in one part`);
      partOf.set(r.person_id, i);
    }
    const order = part.map((r) => records.indexOf(r));
    t.same(order, [...order].sort((x, y) => x - y), `part ${i} keeps the batch order`);
  });
});

t.test('partsByPerson: records without a readable person (poison) still go to a part', async (t) => {
  const records: unknown[] = [null, 42, { person_id: 7 }, rec('a', 1)];
  t.same(partsByPerson(records, 2).flat().length, 4);
});

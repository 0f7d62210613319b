import t from 'tap';
import { validate, version } from 'uuid';
import { newId } from '../../src/ids.js';

t.test('newId: valid v7 UUIDs carrying the time, all distinct across pool refills', async (t) => {
  const before = Date.now();
  const ids = Array.from({ length: 1000 }, () => newId());
  const after = Date.now();
  t.ok(ids.every((id) => validate(id) && version(id) === 7), 'every id is a valid version-7 UUID');
  t.ok(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)), 'version and RFC 9562 variant bits set');
  t.equal(new Set(ids).size, ids.length, 'no repeats (the pool of random bytes is refilled, not reused)');
  const ms = ids.map((id) => parseInt(id.replace(/-/g, '').slice(0, 12), 16));
  t.ok(ms.every((m) => m >= before && m <= after), 'the first 48 bits are the creation time in ms');
  t.ok(ms.every((m, i) => i === 0 || m >= ms[i - 1]!), 'ids sort by creation time (to the millisecond)');
});

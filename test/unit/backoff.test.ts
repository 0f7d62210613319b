// The one retry rule (src/util/backoff.ts): doubling waits up to a cap, bounded tries, which
// failures are worth another try, and a stop that ends a wait at once.
import t from 'tap';
import { backoffDelays, retry } from '../../src/util/backoff.js';

t.test('the waits double from firstMs and stay at maxMs', async (t) => {
  const d = backoffDelays({ firstMs: 50, maxMs: 300 });
  t.same(Array.from({ length: 6 }, () => d.next().value), [50, 100, 200, 300, 300, 300]);
});

t.test('tried until it succeeds, each failure told with its wait', async (t) => {
  const told: [string, number][] = [];
  const r = await retry(
    async (attempt) => {
      if (attempt < 4) throw new Error(`try ${attempt}`);
      return attempt;
    },
    { backoff: { firstMs: 1, maxMs: 2 }, onRetry: (err, waitMs) => told.push([(err as Error).message, waitMs]) },
  );
  t.equal(r, 4);
  t.same(told, [['try 1', 1], ['try 2', 2], ['try 3', 2]]);
});

t.test('at most `attempts` tries, then the last failure; without a backoff, at once', async (t) => {
  let tries = 0;
  await t.rejects(
    retry(async (attempt) => {
      tries++;
      throw new Error(`try ${attempt}`);
    }, { attempts: 3 }),
    { message: 'try 3' },
  );
  t.equal(tries, 3);
});

t.test('a failure not retryable is thrown at once', async (t) => {
  let tries = 0;
  const fatal = new Error('fatal');
  await t.rejects(
    retry(async () => {
      tries++;
      throw tries === 1 ? new Error('lost a race') : fatal;
    }, { attempts: 5, retryable: (err) => (err as Error).message === 'lost a race' }),
    fatal,
  );
  t.equal(tries, 2);
});

t.test('aborting ends the wait at once and starts no further try', async (t) => {
  const stop = new AbortController();
  let tries = 0;
  const running = retry(async () => {
    tries++;
    throw new Error('down');
  }, { backoff: { firstMs: 60_000, maxMs: 60_000 }, signal: stop.signal });
  // Whatever the order, the call settles long before the minute's wait.
  setImmediate(() => stop.abort());
  await t.rejects(running, { name: 'AbortError' });
  t.equal(tries, 1);
  await t.rejects(retry(async () => 1, { signal: stop.signal }), { name: 'AbortError' }, 'an aborted signal starts no try');
});

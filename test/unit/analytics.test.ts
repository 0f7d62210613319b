// The analytics questions' rules (docs/analytics.md): UTC day ranges (both days included, at
// most 366, dates that name a day a timestamp may fall on), funnel windows, and the dense days.
import t from 'tap';
import { dayRange, denseDays, windowMs } from '../../src/domain/analytics.js';
import { InvalidInput } from '../../src/domain/errors.js';

const refusal = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    if (err instanceof InvalidInput) return err.fields[0]?.field;
    throw err;
  }
  return undefined;
};

t.test('a range is [from 00:00Z, the day after to 00:00Z)', async (t) => {
  t.same(dayRange('2024-02-28', '2024-03-01'), { from: '2024-02-28', to: '2024-03-01', fromMs: Date.UTC(2024, 1, 28), toMs: Date.UTC(2024, 2, 2) });
  t.equal(dayRange('2024-01-01', '2024-12-31').toMs - Date.UTC(2024, 0, 1), 366 * 86_400_000, '366 days, a leap year, is the most');
  t.equal(dayRange('1970-01-01', '1970-01-01').fromMs, 0);
  t.equal(dayRange('2106-02-07', '2106-02-07').fromMs, Date.UTC(2106, 1, 7), 'the last day a timestamp may name');
});

t.test('a bad range names its field', async (t) => {
  t.equal(refusal(() => dayRange('2024-01-01', '2025-01-01')), 'to', '367 days');
  t.equal(refusal(() => dayRange('2024-03-02', '2024-03-01')), 'to', 'to before from');
  t.equal(refusal(() => dayRange('2023-02-29', '2023-03-01')), 'from', 'no 29 February in 2023');
  t.equal(refusal(() => dayRange('2024-04-31', '2024-05-01')), 'from');
  t.equal(refusal(() => dayRange('1969-12-31', '1970-01-01')), 'from', 'before 1970');
  t.equal(refusal(() => dayRange('2106-02-08', '2106-02-08')), 'from', 'past 2106-02-07');
  t.equal(refusal(() => dayRange('2024-1-01', '2024-01-02')), 'from', 'not YYYY-MM-DD');
  t.equal(refusal(() => dayRange('2024-01-01', '2024-13-01')), 'to');
});

t.test('windows: minutes, hours, days, up to 90 days', async (t) => {
  t.equal(windowMs('30m'), 30 * 60_000);
  t.equal(windowMs('12h'), 12 * 3_600_000);
  t.equal(windowMs('90d'), 90 * 86_400_000);
  t.equal(windowMs('2160h'), 90 * 86_400_000, 'the same 90 days in hours');
  for (const bad of ['91d', '2161h', '0d', '07d', '1w', '1.5h', 'd', '', '1 d', '9999999m']) t.equal(refusal(() => windowMs(bad)), 'window', `'${bad}' refused`);
});

t.test('every day of the range, zeros where nothing happened', async (t) => {
  const range = dayRange('2024-02-28', '2024-03-01');
  const day = Date.UTC(2024, 1, 29) / 86_400_000;
  t.same(denseDays(range, new Map([[day, { count: 4, people: 2 }]])), [
    { date: '2024-02-28', count: 0, people: 0 },
    { date: '2024-02-29', count: 4, people: 2 },
    { date: '2024-03-01', count: 0, people: 0 },
  ]);
});

// The pure rules of a campaign's analytics (docs/campaign-analytics.md): the timeseries range
// and its bounds, and the CSV fields the export writes.
import t from 'tap';
import { analyticsRange } from '../../src/domain/analytics-range.js';
import { csvRow } from '../../src/domain/csv-export.js';
import { InvalidInput } from '../../src/domain/errors.js';

const NOW = Date.parse('2030-01-15T12:34:56.789Z');

t.test('the range: defaults before now, bounds per bucket, to after from', async (t) => {
  t.same(analyticsRange('hour', undefined, undefined, NOW), { from: '2030-01-08T12:34:56.789Z', to: '2030-01-15T12:34:56.789Z' }, '7 days of hours');
  t.same(analyticsRange('day', undefined, '2030-02-01T00:00:00+01:00', NOW), { from: '2030-01-01T23:00:00.000Z', to: '2030-01-31T23:00:00.000Z' }, '30 days before to, offsets applied');
  t.same(analyticsRange('hour', '2030-01-01T00:00:00Z', '2030-02-01T00:00:00Z', NOW).to, '2030-02-01T00:00:00.000Z', '744 hours: the most');
  const refused = (f: () => unknown, field: string) => {
    const e = (() => { try { f(); } catch (err) { return err; } })();
    t.ok(e instanceof InvalidInput && e.fields[0]!.field === field, `refused, naming ${field}`);
  };
  refused(() => analyticsRange('hour', '2030-01-01T00:00:00Z', '2030-02-01T00:00:00.001Z', NOW), 'from');
  refused(() => analyticsRange('day', '2029-01-01T00:00:00Z', '2030-01-02T00:00:00.001Z', NOW), 'from');
  refused(() => analyticsRange('day', '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z', NOW), 'to');
  refused(() => analyticsRange('day', undefined, '2030-01-01T00:00:60Z', NOW), 'to');
});

t.test('a CSV row: RFC 4180 quoting, formula cells defused, CRLF', async (t) => {
  t.equal(csvRow(['a', 1, true, null, '']), 'a,1,true,,\r\n');
  t.equal(csvRow(['x,y', 'say "hi"', 'two\nlines']), '"x,y","say ""hi""","two\nlines"\r\n');
  for (const start of ['=', '+', '-', '@', '\t', '\r']) t.equal(csvRow([`${start}SUM(A1)`]).startsWith(start === '\r' ? `"'\r` : `'${start}`), true, JSON.stringify(start));
  t.equal(csvRow(['=1,2']), `"'=1,2"\r\n`, 'defused, then quoted');
});

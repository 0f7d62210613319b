// The one definition of the timestamps Herald accepts (domain/time.ts): RFC 3339 date-times
// naming an instant, offset applied, from 1970-01-01T00:00:00Z to 2106-02-07T06:28:15.999Z
// (what PostgreSQL timestamptz and ClickHouse DateTime both hold), no leap second.
import t from 'tap';
import { normalizeTimestamp, parseTimestamp } from '../../src/domain/time.js';
import { InvalidInput } from '../../src/domain/errors.js';

t.test('the range, with the offset applied', async (t) => {
  t.equal(parseTimestamp('1970-01-01T00:00:00Z'), 0, 'first instant');
  t.equal(parseTimestamp('1970-01-01T00:00:00.000Z'), 0);
  t.equal(parseTimestamp('1969-12-31T23:00:00-01:00'), 0, 'the first instant written in 1969');
  t.equal(parseTimestamp('1969-12-31T23:59:59.999Z'), null, 'a millisecond before');
  t.equal(parseTimestamp('1970-01-01T00:59:59+01:00'), null, 'a second before, with an offset');
  t.equal(parseTimestamp('2106-02-07T06:28:15Z'), 4_294_967_295_000, "DateTime's last second");
  t.equal(parseTimestamp('2106-02-07T06:28:15.999Z'), 4_294_967_295_999, 'any fraction of it');
  t.equal(parseTimestamp('2106-02-07T07:28:15.999+01:00'), 4_294_967_295_999);
  t.equal(parseTimestamp('2106-02-07T06:28:16Z'), null, 'the next second');
  t.equal(parseTimestamp('2106-02-07T05:28:16-01:00'), null, 'the next second, with an offset');
  for (const s of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '0099-06-01T12:00:00.500Z', '9999-12-31T23:59:59-01:00', '9999-12-31T23:59:59-23:59', '2107-01-01T00:00:00Z', '1968-12-31T23:59:59-23:59']) {
    t.equal(parseTimestamp(s), null, s);
  }
});

t.test('what names an instant and what does not', async (t) => {
  t.equal(parseTimestamp('2021-03-04T05:06:07.123Z'), Date.UTC(2021, 2, 4, 5, 6, 7, 123));
  t.equal(parseTimestamp('2021-03-04T07:06:07+02:00'), Date.UTC(2021, 2, 4, 5, 6, 7));
  t.equal(parseTimestamp('2021-03-04t05:06:07z'), Date.UTC(2021, 2, 4, 5, 6, 7), 'lower-case t and z (RFC 3339 allows them)');
  t.equal(parseTimestamp('2021-03-04 05:06:07Z'), Date.UTC(2021, 2, 4, 5, 6, 7), 'a space as separator (RFC 3339 §5.6 note)');
  t.equal(parseTimestamp('2021-03-04T05:06:07.123456789Z'), Date.UTC(2021, 2, 4, 5, 6, 7, 123), 'fractions kept to the millisecond');
  t.equal(parseTimestamp('2021-03-04T05:06:07.5Z'), Date.UTC(2021, 2, 4, 5, 6, 7, 500));
  t.equal(parseTimestamp('2020-02-29T00:00:00Z'), Date.UTC(2020, 1, 29), 'a leap day');
  t.equal(parseTimestamp('2000-02-29T00:00:00Z'), Date.UTC(2000, 1, 29), '2000 is a leap year');
  const refused = [
    '2016-12-31T23:59:60Z', // leap second
    '2021-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '2020-04-31T00:00:00Z', '2020-13-01T00:00:00Z', '2020-00-01T00:00:00Z', '2020-01-00T00:00:00Z',
    '2020-01-01T24:00:00Z', '2020-01-01T00:60:00Z', '2020-01-01T00:00:00+24:00', '2020-01-01T00:00:00+01:60',
    '2020-01-01T00:00:00', '2020-01-01', '2020-01-01T00:00Z', '2020-01-01T00:00:00+0100', '2020-01-01T00:00:00.Z', '2020-01-01T00:00:00.1234567890Z',
    '+002020-01-01T00:00:00Z', ' 2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z ', '2020-01-01T00:00:00Z\n', '２０２０-01-01T00:00:00Z',
    '', 'yesterday', '1e12', 'Wed, 01 Jan 2020 00:00:00 GMT',
  ];
  for (const s of refused) t.equal(parseTimestamp(s), null, JSON.stringify(s));
});

t.test('normalizeTimestamp: ISO UTC with milliseconds, or the field refused', async (t) => {
  t.equal(normalizeTimestamp('2021-03-04T07:06:07+02:00', 'timestamp'), '2021-03-04T05:06:07.000Z');
  t.equal(normalizeTimestamp('1970-01-01t00:00:00z', 'since'), '1970-01-01T00:00:00.000Z');
  for (const [s, field] of [['0000-01-01T00:00:00Z', 'since'], ['2016-12-31T23:59:60Z', 'expires_at']] as const) {
    let err: unknown;
    try {
      normalizeTimestamp(s, field);
    } catch (e) {
      err = e;
    }
    t.ok(err instanceof InvalidInput, `${s}: InvalidInput`);
    t.same((err as InvalidInput).fields.map((f) => f.field), [field]);
  }
});

// The send policy (docs/channels.md). Validation: the policy's shape is the JSON
// Schema `sendPolicy` (checked with the server's own ajv setup), what relates two fields is
// sendPolicyConflicts(); together they are every rule a PUT /workspaces/{id} applies. At send
// time: recipientZone() and policyBlock(), with instants written in UTC and the local time
// they are in the zone under test beside them.
import t from 'tap';
import { COUNTER_HORIZON_MS, isTimeZone, policyBlock, recipientZone, sendPolicyConflicts, type PolicySkip, type SendPolicy } from '../../src/domain/send-policy.js';
import { compileBody, fieldError } from '../../src/handlers/validation.js';
import { sendPolicy } from '../../schemas/workspaces.js';

const validate = compileBody(sendPolicy);

function sendPolicyProblems(policy: unknown): { field: string; message: string }[] {
  if (validate(policy)) return sendPolicyConflicts(policy as SendPolicy | null);
  return validate.errors!.map((e) => fieldError(e, '')).map((p) => ({ ...p, field: ['send_policy', p.field].filter(Boolean).join('.') }));
}

const fields = (policy: unknown) => [...new Set(sendPolicyProblems(policy).map((p) => p.field))].sort();

const EXAMPLE = {
  timezone: 'Europe/Paris',
  quiet_hours: { start: '22:00', end: '08:00' },
  max_pushes_per_day: 5,
  max_pushes_per_window: 3,
  window_hours: 6,
};

t.test('the documented example is valid', async (t) => {
  t.same(sendPolicyProblems(EXAMPLE), []);
});

t.test('null (no policy) and an empty object are valid', async (t) => {
  t.same(sendPolicyProblems(null), []);
  t.same(sendPolicyProblems({}), []);
});

t.test('non-objects are rejected', async (t) => {
  for (const v of ['policy', 5, true, [], [EXAMPLE]]) t.same(fields(v), ['send_policy'], JSON.stringify(v));
});

t.test('rolling cap: both zero disables, both > 0 enables', async (t) => {
  t.same(sendPolicyProblems({ max_pushes_per_window: 0, window_hours: 0 }), []);
  t.same(sendPolicyProblems({ max_pushes_per_window: 1, window_hours: 1 }), []);
  t.same(sendPolicyProblems({ max_pushes_per_window: 100, window_hours: 168 }), []);
});

t.test('rolling cap: exactly one set is invalid', async (t) => {
  const cases: Record<string, unknown>[] = [
    { max_pushes_per_window: 3 },
    { window_hours: 6 },
    { max_pushes_per_window: 3, window_hours: 0 },
    { max_pushes_per_window: 0, window_hours: 6 },
    { max_pushes_per_window: 0 },
    { window_hours: 0 },
  ];
  for (const c of cases) {
    t.same(fields(c), ['send_policy.max_pushes_per_window'], JSON.stringify(c));
  }
});

t.test('window_hours must be an integer 0..168', async (t) => {
  t.same(sendPolicyProblems({ max_pushes_per_window: 1, window_hours: 168 }), []);
  t.ok(fields({ max_pushes_per_window: 1, window_hours: 169 }).includes('send_policy.window_hours'), '169');
  t.ok(fields({ max_pushes_per_window: 1, window_hours: -1 }).includes('send_policy.window_hours'), '-1');
  t.ok(fields({ max_pushes_per_window: 1, window_hours: 1.5 }).includes('send_policy.window_hours'), '1.5');
  t.ok(fields({ max_pushes_per_window: 1, window_hours: '6' }).includes('send_policy.window_hours'), "'6'");
  t.ok(fields({ max_pushes_per_window: 1, window_hours: null }).includes('send_policy.window_hours'), 'null');
});

t.test('max_pushes_per_window must be an integer >= 0', async (t) => {
  for (const v of [-1, 2.5, '3', null, true]) {
    t.ok(fields({ max_pushes_per_window: v, window_hours: 6 }).includes('send_policy.max_pushes_per_window'), JSON.stringify(v));
  }
});

t.test('max_pushes_per_day must be an integer >= 0', async (t) => {
  t.same(sendPolicyProblems({ max_pushes_per_day: 0 }), []);
  t.same(sendPolicyProblems({ max_pushes_per_day: 1000 }), []);
  for (const v of [-1, 1.5, '5', null, false]) {
    t.same(fields({ max_pushes_per_day: v }), ['send_policy.max_pushes_per_day'], JSON.stringify(v));
  }
});

t.test('quiet hours: HH:MM bounds', async (t) => {
  for (const [start, end] of [['00:00', '23:59'], ['23:59', '00:00'], ['09:30', '17:45'], ['22:00', '08:00']]) {
    t.same(sendPolicyProblems({ quiet_hours: { start, end } }), [], `${start}-${end}`);
  }
  for (const bad of ['24:00', '23:60', '9:00', '09:0', '0900', '09:00:00', ' 09:00', '-1:00', '', 'ab:cd']) {
    t.same(fields({ quiet_hours: { start: bad, end: '08:00' } }), ['send_policy.quiet_hours.start'], `start ${JSON.stringify(bad)}`);
    t.same(fields({ quiet_hours: { start: '08:00', end: bad } }), ['send_policy.quiet_hours.end'], `end ${JSON.stringify(bad)}`);
  }
  t.same(fields({ quiet_hours: { start: 2200, end: '08:00' } }), ['send_policy.quiet_hours.start'], 'number');
});

t.test('quiet hours: start and end both required', async (t) => {
  t.same(fields({ quiet_hours: { start: '22:00' } }), ['send_policy.quiet_hours.end']);
  t.same(fields({ quiet_hours: { end: '08:00' } }), ['send_policy.quiet_hours.start']);
  t.same(fields({ quiet_hours: {} }), ['send_policy.quiet_hours.end', 'send_policy.quiet_hours.start']);
});

t.test('quiet hours: start == end is invalid', async (t) => {
  t.same(fields({ quiet_hours: { start: '08:00', end: '08:00' } }), ['send_policy.quiet_hours']);
  t.same(fields({ quiet_hours: { start: '00:00', end: '00:00' } }), ['send_policy.quiet_hours']);
});

t.test('quiet hours: null turns them off; other shapes are invalid', async (t) => {
  t.same(sendPolicyProblems({ quiet_hours: null }), []);
  for (const v of ['22:00-08:00', 5, true, [], ['22:00', '08:00']]) {
    const f = fields({ quiet_hours: v });
    t.ok(f.length > 0 && f.every((x) => x.startsWith('send_policy.quiet_hours')), `${JSON.stringify(v)} → ${JSON.stringify(f)}`);
  }
});

t.test('quiet hours: unknown keys are rejected', async (t) => {
  t.same(fields({ quiet_hours: { start: '22:00', end: '08:00', days: ['mon'] } }), ['send_policy.quiet_hours.days']);
});

t.test('unknown policy keys are rejected', async (t) => {
  t.same(fields({ ...EXAMPLE, max_emails_per_day: 3 }), ['send_policy.max_emails_per_day']);
  t.same(fields({ quietHours: { start: '22:00', end: '08:00' } }), ['send_policy.quietHours']);
});

t.test('timezone: IANA name, empty or absent = UTC', async (t) => {
  t.same(sendPolicyProblems({ timezone: '' }), [], 'empty string means UTC');
  t.same(sendPolicyProblems({ timezone: 'UTC' }), []);
  t.same(sendPolicyProblems({ timezone: 'America/New_York' }), []);
  t.same(sendPolicyProblems({ timezone: 'Asia/Kolkata' }), []);
  for (const bad of ['Mars/Olympus', 'Europe/Pariss', 'not a zone', 5, null, {}]) {
    t.same(fields({ timezone: bad }), ['send_policy.timezone'], JSON.stringify(bad));
  }
});

t.test('every problem is reported at once', async (t) => {
  const f = fields({
    timezone: 'Nowhere/City',
    quiet_hours: { start: '25:00', end: '25:00' },
    max_pushes_per_day: -1,
    window_hours: 200,
    extra: 1,
  });
  for (const want of ['send_policy.timezone', 'send_policy.quiet_hours.start', 'send_policy.quiet_hours.end', 'send_policy.max_pushes_per_day', 'send_policy.window_hours', 'send_policy.extra']) {
    t.ok(f.includes(want), want);
  }
  for (const p of sendPolicyProblems({ extra: 1 })) t.type(p.message, 'string');
});

t.test('isTimeZone()', async (t) => {
  for (const tz of ['UTC', 'Europe/Paris', 'America/Los_Angeles', 'Australia/Sydney', 'Etc/GMT+5']) t.equal(isTimeZone(tz), true, tz);
  for (const tz of ['Mars/Olympus', 'Europe/Nowhere', 'GMT+99', 'not a zone']) t.equal(isTimeZone(tz), false, tz);
});

// ---- At send time ----

const at = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;
const reason = (...args: Parameters<typeof policyBlock>): PolicySkip | null => policyBlock(...args)?.skip_reason ?? null;

t.test('recipientZone(): the person zone when valid, else the policy zone, else UTC', async (t) => {
  const policy: SendPolicy = { timezone: 'Europe/Paris' };
  t.equal(recipientZone('Asia/Kolkata', policy), 'Asia/Kolkata');
  t.equal(recipientZone('Asia/Kolkata', null), 'Asia/Kolkata');
  for (const bad of ['Mars/Olympus', 'not a zone', '', null, undefined]) {
    t.equal(recipientZone(bad, policy), 'Europe/Paris', `person ${JSON.stringify(bad)}`);
    t.equal(recipientZone(bad, null), 'UTC', `person ${JSON.stringify(bad)}, no policy`);
    t.equal(recipientZone(bad, {}), 'UTC', `person ${JSON.stringify(bad)}, no policy timezone`);
    t.equal(recipientZone(bad, { timezone: '' }), 'UTC', `person ${JSON.stringify(bad)}, empty policy timezone`);
  }
});

t.test('no policy, or an empty one, blocks nothing', async (t) => {
  const sent = Array.from({ length: 50 }, (_, i) => at('2025-01-15T12:00:00Z') - i * 60_000);
  t.equal(policyBlock(null, 'UTC', at('2025-01-15T12:00:00Z'), sent), null);
  t.equal(policyBlock({}, 'UTC', at('2025-01-15T12:00:00Z'), sent), null);
  t.equal(policyBlock({ quiet_hours: null, max_pushes_per_day: 0, max_pushes_per_window: 0, window_hours: 0 }, 'UTC', at('2025-01-15T12:00:00Z'), sent), null);
});

t.test('quiet hours across midnight in America/New_York (UTC-5 in January)', async (t) => {
  const policy: SendPolicy = { quiet_hours: { start: '22:00', end: '08:00' } };
  const cases: [string, string, boolean][] = [
    ['2025-01-16T02:59:59.999Z', '21:59:59.999', false],
    ['2025-01-16T03:00:00.000Z', '22:00 (start inclusive)', true],
    ['2025-01-16T04:59:00.000Z', '23:59', true],
    ['2025-01-16T05:00:00.000Z', '00:00', true],
    ['2025-01-16T12:59:59.999Z', '07:59:59.999', true],
    ['2025-01-16T13:00:00.000Z', '08:00 (end exclusive)', false],
    ['2025-01-16T17:00:00.000Z', '12:00', false],
    ['2025-01-16T23:00:00.000Z', '18:00 (22:00 in UTC is not what counts)', false],
  ];
  for (const [when, local, blocked] of cases) t.equal(reason(policy, 'America/New_York', at(when), []), blocked ? 'quiet_hours' : null, `${when} = ${local}`);
  t.same(policyBlock(policy, 'America/New_York', at('2025-01-16T03:00:00Z'), []), { skip_reason: 'quiet_hours', error: 'Quiet hours 22:00-08:00 (America/New_York)' });
});

t.test('quiet hours follow DST: America/New_York in July is UTC-4', async (t) => {
  const policy: SendPolicy = { quiet_hours: { start: '22:00', end: '08:00' } };
  t.equal(reason(policy, 'America/New_York', at('2025-07-16T01:59:00Z'), []), null, '21:59 EDT');
  t.equal(reason(policy, 'America/New_York', at('2025-07-16T02:00:00Z'), []), 'quiet_hours', '22:00 EDT');
  t.equal(reason(policy, 'America/New_York', at('2025-07-16T12:00:00Z'), []), null, '08:00 EDT');
});

t.test('quiet hours on the DST days of Europe/Paris: the wall clock after the change', async (t) => {
  const policy: SendPolicy = { quiet_hours: { start: '03:00', end: '08:00' } };
  // 2025-03-30: 02:00 CET becomes 03:00 CEST at 01:00Z.
  t.equal(reason(policy, 'Europe/Paris', at('2025-03-30T00:59:59.999Z'), []), null, '01:59:59.999 CET');
  t.equal(reason(policy, 'Europe/Paris', at('2025-03-30T01:00:00Z'), []), 'quiet_hours', '03:00 CEST');
  t.equal(reason(policy, 'Europe/Paris', at('2025-03-30T05:59:59.999Z'), []), 'quiet_hours', '07:59:59.999 CEST');
  t.equal(reason(policy, 'Europe/Paris', at('2025-03-30T06:00:00Z'), []), null, '08:00 CEST');
  // 2025-10-26: 03:00 CEST becomes 02:00 CET at 01:00Z, so 02:00-03:00 happens twice.
  const night: SendPolicy = { quiet_hours: { start: '02:30', end: '03:00' } };
  t.equal(reason(night, 'Europe/Paris', at('2025-10-26T00:30:00Z'), []), 'quiet_hours', '02:30 CEST');
  t.equal(reason(night, 'Europe/Paris', at('2025-10-26T01:00:00Z'), []), null, '02:00 CET');
  t.equal(reason(night, 'Europe/Paris', at('2025-10-26T01:30:00Z'), []), 'quiet_hours', '02:30 CET, again');
  t.equal(reason(night, 'Europe/Paris', at('2025-10-26T02:00:00Z'), []), null, '03:00 CET');
});

t.test('quiet hours in Asia/Kolkata (UTC+5:30), across midnight and within a day', async (t) => {
  const wrapping: SendPolicy = { quiet_hours: { start: '23:30', end: '06:15' } };
  const cases: [string, string, boolean][] = [
    ['2025-03-10T17:59:59.999Z', '23:29:59.999', false],
    ['2025-03-10T18:00:00.000Z', '23:30', true],
    ['2025-03-10T20:00:00.000Z', '01:30', true],
    ['2025-03-11T00:44:59.999Z', '06:14:59.999', true],
    ['2025-03-11T00:45:00.000Z', '06:15', false],
  ];
  for (const [when, local, blocked] of cases) t.equal(reason(wrapping, 'Asia/Kolkata', at(when), []), blocked ? 'quiet_hours' : null, `${when} = ${local}`);

  const daytime: SendPolicy = { quiet_hours: { start: '09:00', end: '17:00' } };
  const within: [string, string, boolean][] = [
    ['2025-03-10T03:29:59.999Z', '08:59:59.999', false],
    ['2025-03-10T03:30:00.000Z', '09:00 (start inclusive)', true],
    ['2025-03-10T11:29:59.999Z', '16:59:59.999', true],
    ['2025-03-10T11:30:00.000Z', '17:00 (end exclusive)', false],
    ['2025-03-10T20:00:00.000Z', '01:30 (a start < end window does not wrap)', false],
  ];
  for (const [when, local, blocked] of within) t.equal(reason(daytime, 'Asia/Kolkata', at(when), []), blocked ? 'quiet_hours' : null, `${when} = ${local}`);
});

t.test('quiet hours 23:59-00:00 and 00:00-23:59', async (t) => {
  t.equal(reason({ quiet_hours: { start: '23:59', end: '00:00' } }, 'UTC', at('2025-01-01T23:59:30Z'), []), 'quiet_hours');
  t.equal(reason({ quiet_hours: { start: '23:59', end: '00:00' } }, 'UTC', at('2025-01-01T00:00:00Z'), []), null);
  t.equal(reason({ quiet_hours: { start: '00:00', end: '23:59' } }, 'UTC', at('2025-01-01T00:00:00Z'), []), 'quiet_hours');
  t.equal(reason({ quiet_hours: { start: '00:00', end: '23:59' } }, 'UTC', at('2025-01-01T23:59:00Z'), []), null);
});

t.test('daily cap: resets at local midnight, not UTC midnight (America/New_York)', async (t) => {
  const policy: SendPolicy = { max_pushes_per_day: 2 };
  // Local midnight of 2025-01-16 in New York is 05:00Z.
  const yesterday = [at('2025-01-16T04:59:59.999Z'), at('2025-01-16T01:00:00Z')];
  t.equal(reason(policy, 'America/New_York', at('2025-01-16T04:59:59.999Z'), yesterday), 'frequency_cap', '23:59:59.999 local: both count');
  t.equal(reason(policy, 'America/New_York', at('2025-01-16T05:00:00Z'), yesterday), null, '00:00 local: a new day');
  t.equal(reason(policy, 'America/New_York', at('2025-01-16T20:00:00Z'), [...yesterday, at('2025-01-16T05:00:00Z')]), null, 'one send today');
  t.same(
    policyBlock(policy, 'America/New_York', at('2025-01-16T20:00:00Z'), [...yesterday, at('2025-01-16T05:00:00Z'), at('2025-01-16T19:00:00Z')]),
    { skip_reason: 'frequency_cap', error: 'Daily cap reached: 2 pushes since local midnight (America/New_York)' },
  );
  // UTC midnight is no reset: sends at 23:00 and 23:30 UTC the day before are the same local day (18:00, 18:30).
  const sameLocalDay = [at('2025-01-15T23:00:00Z'), at('2025-01-15T23:30:00Z')];
  t.equal(reason(policy, 'America/New_York', at('2025-01-16T01:00:00Z'), sameLocalDay), 'frequency_cap', '20:00 local, after UTC midnight');
  t.equal(reason(policy, 'UTC', at('2025-01-16T01:00:00Z'), sameLocalDay), null, 'in UTC they were yesterday');
});

t.test('daily cap in Asia/Kolkata: local midnight is 18:30Z', async (t) => {
  const policy: SendPolicy = { max_pushes_per_day: 1 };
  t.equal(reason(policy, 'Asia/Kolkata', at('2025-03-10T19:00:00Z'), [at('2025-03-10T18:29:59.999Z')]), null);
  t.equal(reason(policy, 'Asia/Kolkata', at('2025-03-10T19:00:00Z'), [at('2025-03-10T18:30:00Z')]), 'frequency_cap');
});

t.test('daily cap on the DST days of Europe/Paris', async (t) => {
  const policy: SendPolicy = { max_pushes_per_day: 1 };
  // 2025-03-30: 02:00 CET becomes 03:00 CEST; the day starts at 23:00Z (CET) and lasts 23 hours.
  const spring = at('2025-03-30T21:59:00Z'); // 23:59 CEST
  t.equal(reason(policy, 'Europe/Paris', spring, [at('2025-03-29T22:59:59.999Z')]), null, 'spring: 23:59:59.999 on the 29th is yesterday');
  t.equal(reason(policy, 'Europe/Paris', spring, [at('2025-03-29T23:00:00Z')]), 'frequency_cap', 'spring: 00:00 on the 30th counts');
  t.equal(reason(policy, 'Europe/Paris', at('2025-03-30T22:00:00Z'), [at('2025-03-30T21:59:00Z')]), null, 'spring: the 31st starts at 22:00Z (CEST)');
  // 2025-10-26: 03:00 CEST becomes 02:00 CET; the day starts at 22:00Z the day before (CEST) and lasts 25 hours.
  const autumn = at('2025-10-26T22:59:59.999Z'); // 23:59:59.999 CET
  t.equal(reason(policy, 'Europe/Paris', autumn, [at('2025-10-25T21:59:59.999Z')]), null, 'autumn: 23:59:59.999 on the 25th is yesterday');
  t.equal(reason(policy, 'Europe/Paris', autumn, [at('2025-10-25T22:00:00Z')]), 'frequency_cap', 'autumn: a send 25 hours earlier is still today');
  t.equal(reason(policy, 'Europe/Paris', at('2025-10-26T23:00:00Z'), [at('2025-10-26T22:59:59.999Z')]), null, 'autumn: the 27th starts at 23:00Z (CET)');
});

t.test('daily cap where midnight is skipped or repeated (America/Havana, America/Santiago)', async (t) => {
  const policy: SendPolicy = { max_pushes_per_day: 1 };
  // Havana 2025-03-09: 00:00 CST becomes 01:00 CDT, so the day starts at 01:00 local = 05:00Z.
  t.equal(reason(policy, 'America/Havana', at('2025-03-09T15:00:00Z'), [at('2025-03-09T04:59:59.999Z')]), null, 'skipped midnight: 23:59:59.999 on the 8th');
  t.equal(reason(policy, 'America/Havana', at('2025-03-09T15:00:00Z'), [at('2025-03-09T05:00:00Z')]), 'frequency_cap', 'skipped midnight: 01:00 on the 9th');
  // Havana 2025-11-02: 01:00 CDT becomes 00:00 CST, so 00:00 happens at 04:00Z and again at 05:00Z; the day starts at the first.
  t.equal(reason(policy, 'America/Havana', at('2025-11-02T15:00:00Z'), [at('2025-11-02T03:59:59.999Z')]), null, 'repeated midnight: 23:59:59.999 on the 1st');
  t.equal(reason(policy, 'America/Havana', at('2025-11-02T15:00:00Z'), [at('2025-11-02T04:00:00Z')]), 'frequency_cap', 'repeated midnight: the first 00:00');
  // Santiago 2025-04-06: 00:00 -03 becomes 23:00 -04 on the 5th, so the 6th starts at 04:00Z.
  t.equal(reason(policy, 'America/Santiago', at('2025-04-06T15:00:00Z'), [at('2025-04-06T03:30:00Z')]), null, '23:30 on the 5th (after the fall back)');
  t.equal(reason(policy, 'America/Santiago', at('2025-04-06T15:00:00Z'), [at('2025-04-06T04:00:00Z')]), 'frequency_cap', '00:00 on the 6th');
});

t.test('daily cap: the zone remembers its day, but asking about another day answers for that day', async (t) => {
  const policy: SendPolicy = { max_pushes_per_day: 1 };
  const sent = [at('2025-05-01T10:00:00Z')];
  t.equal(reason(policy, 'Australia/Sydney', at('2025-05-01T12:00:00Z'), sent), 'frequency_cap');
  t.equal(reason(policy, 'Australia/Sydney', at('2025-05-01T14:00:00Z'), sent), null, 'midnight in Sydney (UTC+10) is 14:00Z');
  t.equal(reason(policy, 'Australia/Sydney', at('2025-05-01T13:59:59.999Z'), sent), 'frequency_cap', 'back to the day before');
});

t.test('rolling cap: a sliding window in absolute time', async (t) => {
  const policy: SendPolicy = { max_pushes_per_window: 2, window_hours: 6 };
  const now = at('2025-06-01T12:00:00Z');
  t.equal(reason(policy, 'UTC', now, [now - 1 * HOUR]), null, 'one in the window');
  t.equal(reason(policy, 'UTC', now, [now - 1 * HOUR, now - 6 * HOUR + 1]), 'rolling_cap', 'the older one 1 ms inside the window');
  t.equal(reason(policy, 'UTC', now, [now - 1 * HOUR, now - 6 * HOUR]), null, 'a send exactly 6 hours ago has left it');
  t.equal(reason(policy, 'UTC', now, [now - 1 * HOUR, now - 30 * HOUR, now - 100 * HOUR]), null, 'older sends do not count');
  t.same(policyBlock(policy, 'UTC', now, [now, now - HOUR]), { skip_reason: 'rolling_cap', error: 'Rolling cap reached: 2 pushes in the last 6 hours' });
  t.same(policyBlock({ max_pushes_per_window: 1, window_hours: 1 }, 'UTC', now, [now]), { skip_reason: 'rolling_cap', error: 'Rolling cap reached: 1 push in the last 1 hour' });
});

t.test('rolling cap: absolute hours, whatever the zone and its DST change', async (t) => {
  const policy: SendPolicy = { max_pushes_per_window: 1, window_hours: 2 };
  // 2025-03-30 in Paris: 01:59 CET to 03:30 CEST is 31 minutes of absolute time.
  const now = at('2025-03-30T01:30:00Z');
  t.equal(reason(policy, 'Europe/Paris', now, [at('2025-03-30T00:59:00Z')]), 'rolling_cap');
  t.equal(reason(policy, 'Europe/Paris', now, [at('2025-03-29T23:30:00Z')]), null);
});

t.test('rolling cap: off unless both fields > 0', async (t) => {
  const now = at('2025-06-01T12:00:00Z');
  const sent = [now - HOUR, now - 2 * HOUR, now - 3 * HOUR];
  t.equal(reason({ max_pushes_per_window: 0, window_hours: 0 }, 'UTC', now, sent), null);
  t.equal(reason({ max_pushes_per_window: 1, window_hours: 0 }, 'UTC', now, sent), null);
  t.equal(reason({ max_pushes_per_window: 0, window_hours: 6 }, 'UTC', now, sent), null);
  t.equal(reason({ max_pushes_per_window: 3, window_hours: 168 }, 'UTC', now, sent), 'rolling_cap');
});

t.test('caps count sent times in any order', async (t) => {
  const now = at('2025-06-01T12:00:00Z');
  const sent = [now - 100 * HOUR, now - HOUR, now - 50 * HOUR, now - 2 * HOUR, now - 200 * HOUR];
  t.equal(reason({ max_pushes_per_day: 2 }, 'UTC', now, sent), 'frequency_cap');
  t.equal(reason({ max_pushes_per_day: 3 }, 'UTC', now, sent), null);
});

t.test('order: quiet hours, then the daily cap, then the rolling cap', async (t) => {
  const now = at('2025-01-16T04:00:00Z'); // 23:00 in New York
  const sent = [now - HOUR, now - 2 * HOUR, now - 3 * HOUR];
  const all: SendPolicy = { quiet_hours: { start: '22:00', end: '08:00' }, max_pushes_per_day: 1, max_pushes_per_window: 1, window_hours: 6 };
  t.equal(reason(all, 'America/New_York', now, sent), 'quiet_hours');
  t.equal(reason({ ...all, quiet_hours: null }, 'America/New_York', now, sent), 'frequency_cap');
  t.equal(reason({ ...all, quiet_hours: null, max_pushes_per_day: 0 }, 'America/New_York', now, sent), 'rolling_cap');
  t.equal(reason({ ...all, quiet_hours: null, max_pushes_per_day: 5, max_pushes_per_window: 5 }, 'America/New_York', now, sent), null);
});

t.test('bypassCaps skips both caps, never quiet hours', async (t) => {
  const now = at('2025-01-16T04:00:00Z'); // 23:00 in New York
  const sent = [now - HOUR, now - 2 * HOUR];
  const caps: SendPolicy = { max_pushes_per_day: 1, max_pushes_per_window: 1, window_hours: 6 };
  t.equal(reason(caps, 'America/New_York', now, sent, { bypassCaps: true }), null);
  t.equal(reason({ max_pushes_per_window: 1, window_hours: 6 }, 'America/New_York', now, sent, { bypassCaps: true }), null);
  t.equal(reason(caps, 'America/New_York', now, sent, { bypassCaps: false }), 'frequency_cap');
  t.equal(reason({ ...caps, quiet_hours: { start: '22:00', end: '08:00' } }, 'America/New_York', now, sent, { bypassCaps: true }), 'quiet_hours');
});

t.test('an unknown zone is a programming error', async (t) => {
  t.throws(() => policyBlock({ max_pushes_per_day: 1 }, 'Mars/Olympus', Date.now(), []), RangeError);
});

t.test('COUNTER_HORIZON_MS reaches back over the longest window and the longest local day', async (t) => {
  t.ok(COUNTER_HORIZON_MS >= 168 * HOUR, 'the longest rolling window');
  // A send just inside a 168-hour window blocks; so a horizon shorter than that would lose it.
  const now = at('2025-06-01T12:00:00Z');
  const edge = now - 168 * HOUR + 1;
  t.ok(edge >= now - COUNTER_HORIZON_MS);
  t.equal(reason({ max_pushes_per_window: 1, window_hours: 168 }, 'UTC', now, [edge]), 'rolling_cap');
  t.equal(reason({ max_pushes_per_window: 1, window_hours: 168 }, 'UTC', now, [now - 168 * HOUR]), null);
  // The longest local day (25 hours, Paris in October) starts within the horizon.
  t.ok(at('2025-10-25T22:00:00Z') >= at('2025-10-26T22:59:59.999Z') - COUNTER_HORIZON_MS);
});

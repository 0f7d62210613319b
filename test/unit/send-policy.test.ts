// Send policy validation: INTERFACE 2.10, DECISIONS §5. The policy's shape is the JSON Schema
// `sendPolicy` (checked with the server's own ajv setup), what relates two fields is
// sendPolicyConflicts(); together they are every rule a PUT /workspaces/{id} applies.
import t from 'tap';
import { isTimeZone, sendPolicyConflicts, type SendPolicyFields } from '../../src/domain/send-policy.js';
import { compileBody, fieldError } from '../../src/handlers/validation.js';
import { sendPolicy } from '../../schemas/workspaces.js';

const validate = compileBody(sendPolicy);

function sendPolicyProblems(policy: unknown): { field: string; message: string }[] {
  if (validate(policy)) return sendPolicyConflicts(policy as SendPolicyFields | null);
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

t.test('the DECISIONS §5 example is valid', async (t) => {
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

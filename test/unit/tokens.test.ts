// Push tokens as the push routes show and validate them (docs/channels.md; README, Request bodies): src/domain/tokens.ts.
import t from 'tap';
import { maskToken, tokenFormatValid, tokenProblem, type KnownTokens } from '../../src/domain/tokens.js';

t.test('masking: first 4 + *** + last 4 from 12 characters, *** below', async (t) => {
  t.equal(maskToken('abcdefghijkl'), 'abcd***ijkl', '12 characters');
  t.equal(maskToken('abcdefghijk'), '***', '11 characters');
  t.equal(maskToken(''), '***');
  t.equal(maskToken('a'.repeat(4) + 'secret-middle'.repeat(300) + 'zzzz'), 'aaaa***zzzz', 'a long token shows none of its middle');
  // Code points, not UTF-16 units: a pair is never split into a lone surrogate.
  t.equal(maskToken('😀😀😀😀😀😀😀😀😀😀😀😀'), '😀😀😀😀***😀😀😀😀', '12 astral characters');
  t.equal(maskToken('😀😀😀😀😀😀'), '***', '6 astral characters (12 UTF-16 units) are short');
});

t.test('format: ios is an even number of hex characters, 64 to 200', async (t) => {
  t.ok(tokenFormatValid('a'.repeat(64), 'ios'), '64');
  t.ok(tokenFormatValid('0123456789ABCDEFabcdef'.repeat(10).slice(0, 200), 'ios'), '200, either case');
  t.ok(tokenFormatValid('ab'.repeat(33), 'ios'), '66');
  t.notOk(tokenFormatValid('a'.repeat(62), 'ios'), '62: too short');
  t.notOk(tokenFormatValid('a'.repeat(202), 'ios'), '202: too long');
  t.notOk(tokenFormatValid('a'.repeat(65), 'ios'), 'odd');
  t.notOk(tokenFormatValid('g'.repeat(64), 'ios'), 'not hex');
  t.notOk(tokenFormatValid(`${'a'.repeat(64)}\n`, 'ios'), 'a trailing newline');
});

t.test('format: android, web, huawei are 10 to 4,096 characters without whitespace', async (t) => {
  for (const p of ['android', 'web', 'huawei'] as const) {
    t.ok(tokenFormatValid('x'.repeat(10), p), `${p} 10`);
    t.ok(tokenFormatValid('x'.repeat(4096), p), `${p} 4096`);
    t.ok(tokenFormatValid('fcm:APA91b-_/.=', p), `${p} punctuation`);
    t.notOk(tokenFormatValid('x'.repeat(9), p), `${p} 9`);
    t.notOk(tokenFormatValid('x'.repeat(4097), p), `${p} 4097`);
    t.notOk(tokenFormatValid('xxxxx xxxxx', p), `${p} a space`);
    t.notOk(tokenFormatValid('xxxxx\txxxxx', p), `${p} a tab`);
  }
  t.ok(tokenFormatValid('😀'.repeat(10), 'web'), 'counted in characters: 10 astral characters');
  t.notOk(tokenFormatValid('😀'.repeat(9), 'web'), '9 astral characters (18 UTF-16 units) are too short');
});

t.test('the first problem wins: format, suppressed, not registered, inactive', async (t) => {
  const ios = 'ab'.repeat(32);
  const known = (over: Partial<KnownTokens> = {}): KnownTokens => ({ suppressed: new Set(), devices: new Map(), ...over });
  const active = { is_active: true, is_valid: true };
  t.equal(tokenProblem(ios, 'ios', known({ devices: new Map([[ios, active]]) })), undefined, 'a registered, active, unsuppressed token is valid');
  t.equal(tokenProblem('short', 'android', known({ suppressed: new Set(['short']) })), 'invalid_format', 'format before suppression');
  t.equal(tokenProblem(ios, 'android', known({ devices: new Map([[ios, active]]) })), undefined, 'an ios-shaped token is a well-formed android token');
  t.equal(tokenProblem(ios, 'ios', known({ suppressed: new Set([ios]) })), 'suppressed', 'suppression before registration');
  t.equal(tokenProblem(ios, 'ios', known({ suppressed: new Set([ios]), devices: new Map([[ios, { is_active: false, is_valid: false }]]) })), 'suppressed', 'suppression before activity');
  t.equal(tokenProblem(ios, 'ios', known()), 'not_registered');
  t.equal(tokenProblem(ios, 'ios', known({ devices: new Map([[ios, { is_active: false, is_valid: true }]]) })), 'inactive', 'is_active false');
  t.equal(tokenProblem(ios, 'ios', known({ devices: new Map([[ios, { is_active: true, is_valid: false }]]) })), 'inactive', 'is_valid false');
});

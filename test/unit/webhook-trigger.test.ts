// The webhook trigger's pure rules (docs/ingest.md; README, Errors and Request bodies): src/domain/webhook-trigger.ts.
import t from 'tap';
import { DomainError } from '../../src/domain/errors.js';
import { canonicalJson, checkTriggerable, idempotencyKeyOf, replayOf, triggerFingerprint } from '../../src/domain/webhook-trigger.js';

const refusal = (fn: () => unknown): { code: string; message: string } => {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('no refusal');
};

t.test('Idempotency-Key: 1 to 255 bytes of printable ASCII, once', async (t) => {
  t.equal(idempotencyKeyOf(undefined), null, 'no header');
  t.equal(idempotencyKeyOf([]), null);
  t.equal(idempotencyKeyOf(['abc']), 'abc');
  t.equal(idempotencyKeyOf(['x'.repeat(255)]), 'x'.repeat(255), '255 bytes');
  t.equal(idempotencyKeyOf([' ~']), ' ~', 'space and tilde are the ends of the range');
  t.match(refusal(() => idempotencyKeyOf(['x'.repeat(256)])), { code: 'VALIDATION_ERROR', message: /256 bytes; at most 255/ });
  t.match(refusal(() => idempotencyKeyOf([''])), { code: 'VALIDATION_ERROR', message: /empty/ });
  t.match(refusal(() => idempotencyKeyOf(['a', 'b'])), { code: 'VALIDATION_ERROR', message: /more than once/ });
  for (const [what, key] of [['tab', 'a\tb'], ['DEL', 'a\x7fb'], ['NUL', 'a\x00b'], ['é', 'café'], ['U+FFFD (an invalid byte as the front reads it)', 'a\ufffdb']] as const) {
    t.match(refusal(() => idempotencyKeyOf([key])), { code: 'VALIDATION_ERROR', message: /printable ASCII/ }, what);
  }
  t.match(refusal(() => idempotencyKeyOf(['ab\tc'])).message, /character 3 is not/, 'the message points at the character');
  t.match(refusal(() => idempotencyKeyOf([`${'x'.repeat(300)}\t`])).message, /printable/, 'non-printable is reported before the length');
});

t.test('the fingerprint of trigger_data ignores key order only', async (t) => {
  t.equal(canonicalJson({ b: 1, a: [{ d: null, c: 'x' }] }), '{"a":[{"c":"x","d":null}],"b":1}');
  t.equal(triggerFingerprint({ a: 1, b: { c: 2, d: 3 } }), triggerFingerprint({ b: { d: 3, c: 2 }, a: 1 }), 'key order');
  t.equal(triggerFingerprint(undefined), triggerFingerprint({}), 'absent is {}');
  t.not(triggerFingerprint({ a: [1, 2] }), triggerFingerprint({ a: [2, 1] }), 'array order counts');
  t.not(triggerFingerprint({ a: 1 }), triggerFingerprint({ a: '1' }), 'types count');
  t.not(triggerFingerprint({ a: null }), triggerFingerprint({}), 'a null field is not an absent one');
  t.not(triggerFingerprint({ 'a"b': 1 }), triggerFingerprint({ a: { b: 1 } }), 'keys are quoted');
});

t.test('a key found claimed: replay, 409 in progress, 422 other data', async (t) => {
  const outcome = { peopleQueued: 3, audienceTruncated: false };
  t.equal(replayOf({ fingerprint: 'f', outcome }, 'f'), outcome);
  t.match(refusal(() => replayOf({ fingerprint: 'f', outcome: null }, 'f')), { code: 'TRIGGER_IN_PROGRESS' });
  t.match(refusal(() => replayOf({ fingerprint: 'f', outcome }, 'g')), { code: 'IDEMPOTENCY_KEY_REUSED' });
  t.match(refusal(() => replayOf({ fingerprint: 'f', outcome: null }, 'g')), { code: 'IDEMPOTENCY_KEY_REUSED' }, 'other data is 422 even in progress');
});

t.test('only active webhook campaigns are triggered', async (t) => {
  t.doesNotThrow(() => checkTriggerable({ trigger_type: 'webhook', status: 'active' }));
  t.match(refusal(() => checkTriggerable(null)), { code: 'NOT_FOUND' });
  t.match(refusal(() => checkTriggerable({ trigger_type: 'event', status: 'active' })), { code: 'VALIDATION_ERROR', message: /event, not by webhook/ });
  t.match(refusal(() => checkTriggerable({ trigger_type: 'schedule', status: 'paused' })), { code: 'VALIDATION_ERROR', message: /schedule/ }, 'the type is reported first');
  for (const status of ['draft', 'scheduled', 'paused', 'archived', 'completed', 'failed'] as const) {
    t.match(refusal(() => checkTriggerable({ trigger_type: 'webhook', status })), { code: 'VALIDATION_ERROR', message: new RegExp(`is ${status}`) }, status);
  }
});

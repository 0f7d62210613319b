// sendWithRetries' time budget (src/channels/retry.ts): a provider whose every attempt takes its whole
// deadline (a token endpoint dripping its answer) is tried again only while the policy's
// maxElapsedMs has not passed, so a send with its retries ends inside the request timeout. The
// clock is the test's: each attempt advances it by the providers' 10 s deadline.
import t from 'tap';
import { sendWithRetries, type PushDevice, type PushMessage, type PushProvider } from '../../src/channels/push/index.js';
import type { PushOutcome } from '../../src/domain/push-outcome.js';

function slowProvider(clock: { now: number }, attemptMs: number, outcome: PushOutcome): PushProvider & { attempts: number } {
  return {
    name: 'stub',
    attempts: 0,
    async send(_m: PushMessage, devices: readonly PushDevice[]) {
      this.attempts++;
      clock.now += attemptMs;
      return devices.map(() => outcome);
    },
    async close() {},
  };
}

const device: PushDevice = { token: 'x', platform: 'android' };
const timedOut: PushOutcome = { kind: 'retryable', error: 'FCM token endpoint timed out' };

t.test('attempts that each take the whole 10 s deadline: no retry starts past 15 s, so the send ends by 25 s', async (t) => {
  const clock = { now: 1_000_000 };
  const p = slowProvider(clock, 10_000, timedOut);
  const out = await sendWithRetries(p, {}, [device], { now: () => clock.now, random: () => 0, wait: async (ms) => void (clock.now += ms) });
  t.same(out, [timedOut], 'the last outcome');
  t.equal(p.attempts, 2, 'the third attempt would have started after 20 s');
  t.ok(clock.now - 1_000_000 <= 25_000, `ended within 25 s (${clock.now - 1_000_000} ms)`);
});

t.test('quick attempts keep all three tries', async (t) => {
  const clock = { now: 0 };
  const p = slowProvider(clock, 50, timedOut);
  await sendWithRetries(p, {}, [device], { now: () => clock.now, random: () => 0, wait: async (ms) => void (clock.now += ms) });
  t.equal(p.attempts, 3);
});

t.test('a Retry-After that would end past the budget is not waited for', async (t) => {
  const clock = { now: 0 };
  const p = slowProvider(clock, 50, { kind: 'retryable', error: 'FCM 503 UNAVAILABLE', retryAfterMs: 20_000 });
  const waits: number[] = [];
  await sendWithRetries(p, {}, [device], { now: () => clock.now, wait: async (ms) => void waits.push(ms) });
  t.same([p.attempts, waits], [1, []]);
});

// Rate-limit scopes and token buckets (README, Rate limits). Time is passed
// explicitly, so nothing here waits on a clock.
import t from 'tap';
import { DEFAULT_LIMITS, parseRateLimits, type Limits } from '../../src/ratelimit/limits.js';
import { SCOPES } from '../../src/domain/rate-limit-scopes.js';
import { Buckets } from '../../src/ratelimit/buckets.js';
import { ConfigError } from '../../src/config.js';

const EXPECTED_DEFAULTS = {
  'ws-ingest': { perMinute: 12_000, burst: 2_000 },
  'ws-devices': { perMinute: 6_000, burst: 1_000 },
  'ws-reads': { perMinute: 1_200, burst: 300 },
  'user-dashboard': { perMinute: 1_200, burst: 300 },
  'ip-public': { perMinute: 120, burst: 60 },
  'ip-webhooks': { perMinute: 600, burst: 300 },
  edge: { perMinute: 6_000, burst: 600 },
};

t.test('parseRateLimits: the documented defaults', async (t) => {
  t.same([...SCOPES].sort(), Object.keys(EXPECTED_DEFAULTS).sort());
  t.same(parseRateLimits(undefined), EXPECTED_DEFAULTS);
  t.same(parseRateLimits(''), EXPECTED_DEFAULTS);
  t.same(parseRateLimits(' , '), EXPECTED_DEFAULTS);
  t.same(DEFAULT_LIMITS, EXPECTED_DEFAULTS);
});

t.test('parseRateLimits: overrides replace only the scopes named', async (t) => {
  const l = parseRateLimits('ws-ingest=60:10,edge=600:100');
  t.same(l, { ...EXPECTED_DEFAULTS, 'ws-ingest': { perMinute: 60, burst: 10 }, edge: { perMinute: 600, burst: 100 } });
  t.same(parseRateLimits(' ws-reads=5:2 '), { ...EXPECTED_DEFAULTS, 'ws-reads': { perMinute: 5, burst: 2 } }, 'spaces tolerated');
  t.same(parseRateLimits('ip-public=0:1')['ip-public'], { perMinute: 0, burst: 1 }, 'a zero refill is allowed');
  t.same(parseRateLimits('edge=1:1,edge=2:3').edge, { perMinute: 2, burst: 3 }, 'the last of a repeated scope wins');
  t.same(DEFAULT_LIMITS, EXPECTED_DEFAULTS, 'overriding does not change the defaults');
});

t.test('parseRateLimits: malformed or unknown scope throws ConfigError', async (t) => {
  for (const spec of [
    'ws-ingest',
    'ws-ingest=60',
    'ws-ingest=60:',
    'ws-ingest=:10',
    'ws-ingest=a:b',
    'ws-ingest=60:10:5',
    'ws-ingest=-1:10',
    'ws-ingest=1.5:10',
    'ws-ingest 60:10',
    'ws-ingest=60:10;edge=1:1',
    'ws-ingest=60:0',
    'nope=60:10',
    'WS-INGEST=60:10',
    'ws-ingest=60:10,bogus=1:1',
  ]) {
    let thrown: unknown;
    try {
      parseRateLimits(spec);
    } catch (err) {
      thrown = err;
    }
    t.ok(thrown instanceof ConfigError, `${JSON.stringify(spec)} throws ConfigError`);
    t.match(String((thrown as Error | undefined)?.message), /HERALD_RATE_LIMITS/, 'the message names the setting');
  }
});

const limits = (over: Partial<Limits>): Limits => ({ ...DEFAULT_LIMITS, ...over });

t.test('Buckets.take: the burst passes, the next request is refused', async (t) => {
  const b = new Buckets(limits({ 'ws-ingest': { perMinute: 60, burst: 5 } }));
  const now = 1_700_000_000_000;
  for (let i = 0; i < 5; i++) t.equal(b.take('ws-ingest', 'w1', now), null, `request ${i + 1} of the burst`);
  const r = b.take('ws-ingest', 'w1', now);
  t.same(r, { scope: 'ws-ingest', gate: 'local', limit: 60, retryAfter: 1, resetAt: 1_700_000_001 });
  t.not(b.take('ws-ingest', 'w1', now), null, 'still refused at the same instant');
});

t.test('Buckets.take: refills at perMinute/60 tokens a second', async (t) => {
  const b = new Buckets(limits({ 'ws-reads': { perMinute: 120, burst: 2 } })); // 2 tokens/s
  const t0 = 1_000_000;
  t.equal(b.take('ws-reads', 'w', t0), null);
  t.equal(b.take('ws-reads', 'w', t0), null);
  t.not(b.take('ws-reads', 'w', t0), null, 'empty');
  t.not(b.take('ws-reads', 'w', t0 + 499), null, '0.998 of a token after 499 ms');
  t.equal(b.take('ws-reads', 'w', t0 + 500), null, 'one token after 500 ms');
  t.not(b.take('ws-reads', 'w', t0 + 500), null, 'and only one');
  t.equal(b.take('ws-reads', 'w', t0 + 1500), null, 'two more after another second');
  t.equal(b.take('ws-reads', 'w', t0 + 1500), null);
  t.not(b.take('ws-reads', 'w', t0 + 1500), null);
});

t.test('Buckets.take: a refill never exceeds the burst', async (t) => {
  const b = new Buckets(limits({ edge: { perMinute: 600, burst: 3 } }));
  const t0 = 5_000_000;
  t.equal(b.take('edge', 'ip', t0), null);
  // An hour idle refills 36,000 tokens' worth, capped at 3.
  const later = t0 + 3_600_000;
  for (let i = 0; i < 3; i++) t.equal(b.take('edge', 'ip', later), null);
  t.not(b.take('edge', 'ip', later), null);
});

t.test('Buckets.take: retryAfter is whole seconds, rounded up, at least 1', async (t) => {
  const t0 = 2_000_000_000_000;
  // 6/min = one token every 10 s.
  const b = new Buckets(limits({ 'ip-public': { perMinute: 6, burst: 1 } }));
  t.equal(b.take('ip-public', 'a', t0), null);
  let r = b.take('ip-public', 'a', t0);
  t.same(r, { scope: 'ip-public', gate: 'local', limit: 6, retryAfter: 10, resetAt: t0 / 1000 + 10 });
  r = b.take('ip-public', 'a', t0 + 4_500);
  t.equal(r?.retryAfter, 6, '5.5 s left rounds up to 6');
  t.equal(r?.resetAt, Math.ceil((t0 + 4_500 + 6_000) / 1000));
  r = b.take('ip-public', 'a', t0 + 9_999);
  t.equal(r?.retryAfter, 1, '1 ms left is 1 s');

  // 7/min: a token every 8.571 s.
  const c = new Buckets(limits({ 'ip-public': { perMinute: 7, burst: 1 } }));
  c.take('ip-public', 'a', t0);
  t.equal(c.take('ip-public', 'a', t0)?.retryAfter, 9);
});

t.test('Buckets.take: retryAfter is capped at 3600 s', async (t) => {
  const t0 = 3_000_000;
  const slow = new Buckets(limits({ 'ip-webhooks': { perMinute: 1, burst: 1 } }));
  slow.take('ip-webhooks', 'x', t0);
  t.equal(slow.take('ip-webhooks', 'x', t0)?.retryAfter, 60, '1/min: 60 s');

  const never = new Buckets(limits({ 'ip-webhooks': { perMinute: 0, burst: 1 } }));
  never.take('ip-webhooks', 'x', t0);
  const r = never.take('ip-webhooks', 'x', t0);
  t.same(r, { scope: 'ip-webhooks', gate: 'local', limit: 0, retryAfter: 3600, resetAt: Math.ceil((t0 + 3_600_000) / 1000) }, 'no refill: the cap');
});

t.test('Buckets.take: resetAt is a Unix timestamp in seconds, now + retryAfter', async (t) => {
  const b = new Buckets(limits({ 'ws-devices': { perMinute: 60, burst: 1 } }));
  const now = Date.UTC(2030, 0, 1, 12, 0, 0, 250);
  b.take('ws-devices', 'w', now);
  const r = b.take('ws-devices', 'w', now);
  t.equal(r?.retryAfter, 1);
  t.equal(r?.resetAt, Math.ceil(Date.UTC(2030, 0, 1, 12, 0, 1, 250) / 1000));
  t.equal(r?.resetAt, 1_893_499_202);
});

t.test('Buckets.take: subjects and scopes are independent', async (t) => {
  const b = new Buckets(limits({ 'ws-ingest': { perMinute: 60, burst: 1 }, 'ws-reads': { perMinute: 60, burst: 1 } }));
  const now = 42_000;
  t.equal(b.take('ws-ingest', 'w1', now), null);
  t.not(b.take('ws-ingest', 'w1', now), null, 'w1 ingest empty');
  t.equal(b.take('ws-ingest', 'w2', now), null, 'w2 has its own bucket');
  t.equal(b.take('ws-reads', 'w1', now), null, 'w1 reads is a separate scope');
  t.not(b.take('ws-reads', 'w1', now), null);
  t.equal(b.take('edge', 'w1', now), null, 'edge uses its default burst');
});

t.test('Buckets.take: subjects cannot collide through the key separator', async (t) => {
  const b = new Buckets(limits({ 'ws-ingest': { perMinute: 60, burst: 1 }, 'ws-reads': { perMinute: 60, burst: 1 } }));
  t.equal(b.take('ws-ingest', 'a', 0), null);
  t.equal(b.take('ws-ingest', 'a ', 0), null);
  t.equal(b.take('ws-ingest', 'A', 0), null);
});

t.test('Buckets.take: the scope of a refusal reports the scope limit', async (t) => {
  const b = new Buckets(limits({ 'user-dashboard': { perMinute: 1200, burst: 1 } }));
  b.take('user-dashboard', 'u', 0);
  const r = b.take('user-dashboard', 'u', 0);
  t.equal(r?.scope, 'user-dashboard');
  t.equal(r?.limit, 1200);
  t.equal(r?.retryAfter, 1, '0.05 s left rounds up to 1 s');
});

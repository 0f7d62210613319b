// API key credentials (README, Permissions).
import t from 'tap';
import { createHash } from 'node:crypto';
import { hashSecret, looksLikeApiKey, newPrefix, newSecret, parseKey, secretMatches } from '../../src/auth/key-format.js';

const WS = '0192f3a4-b5c6-7d8e-9f01-23456789abcd';
const SECRET = 'a'.repeat(32) + '0123456789abcdef0123456789abcdef';
const PREFIX = 'ws_live_0192f3a4_AbCd1234';

t.test('newPrefix: ws_live_ for secret keys, pk_live_ for public keys', async (t) => {
  t.match(newPrefix(WS, 'secret'), /^ws_live_0192f3a4_[0-9A-Za-z]{8}$/);
  t.match(newPrefix(WS, 'public'), /^pk_live_0192f3a4_[0-9A-Za-z]{8}$/);
});

t.test('newPrefix: the workspace short form is the first 8 hex digits of the id', async (t) => {
  t.equal(newPrefix('deadbeef-0000-4000-8000-000000000000', 'secret').split('_')[2], 'deadbeef');
  t.equal(newPrefix('00000000-1111-4111-8111-111111111111', 'public').split('_')[2], '00000000');
  // A short first group: the hyphen does not count.
  t.equal(newPrefix('0192f3a4b5c67d8e9f0123456789abcd', 'secret').split('_')[2], '0192f3a4');
});

t.test('newPrefix: the random part varies', async (t) => {
  const seen = new Set(Array.from({ length: 200 }, () => newPrefix(WS, 'secret')));
  t.ok(seen.size >= 199, `200 prefixes, ${seen.size} distinct`);
});

t.test('newSecret: 64 lowercase hex characters, random', async (t) => {
  const a = newSecret();
  const b = newSecret();
  t.match(a, /^[0-9a-f]{64}$/);
  t.match(b, /^[0-9a-f]{64}$/);
  t.not(a, b);
});

t.test('a generated credential parses back into its parts', async (t) => {
  for (const type of ['secret', 'public'] as const) {
    const prefix = newPrefix(WS, type);
    const secret = newSecret();
    t.same(parseKey(`${prefix}.${secret}`), { prefix, secret }, type);
  }
});

t.test('parseKey accepts only well-formed credentials', async (t) => {
  t.same(parseKey(`${PREFIX}.${SECRET}`), { prefix: PREFIX, secret: SECRET });
  t.same(parseKey(`pk_live_0192f3a4_zzzzZZZZ.${SECRET}`), { prefix: 'pk_live_0192f3a4_zzzzZZZZ', secret: SECRET });
  const bad = [
    '',
    PREFIX,
    SECRET,
    `${PREFIX}.`,
    `${PREFIX}${SECRET}`,
    `${PREFIX}.${SECRET.slice(1)}`, // 63 hex
    `${PREFIX}.${SECRET}0`, // 65 hex
    `${PREFIX}.${SECRET.toUpperCase()}`, // upper-case hex
    `${PREFIX}.${'g'.repeat(64)}`,
    `ws_test_0192f3a4_AbCd1234.${SECRET}`, // no test prefix exists
    `sk_live_0192f3a4_AbCd1234.${SECRET}`,
    `WS_LIVE_0192f3a4_AbCd1234.${SECRET}`,
    `ws_live_0192f3a_AbCd1234.${SECRET}`, // 7 hex
    `ws_live_0192F3A4_AbCd1234.${SECRET}`, // upper-case workspace short
    `ws_live_0192f3ag_AbCd1234.${SECRET}`,
    `ws_live_0192f3a4_AbCd123.${SECRET}`, // 7 random
    `ws_live_0192f3a4_AbCd12345.${SECRET}`, // 9 random
    `ws_live_0192f3a4_AbCd-234.${SECRET}`,
    ` ${PREFIX}.${SECRET}`,
    `${PREFIX}.${SECRET} `,
    `${PREFIX}.${SECRET}\n`,
    `${PREFIX}..${SECRET}`,
    `${PREFIX}.${SECRET}.${SECRET}`,
    `Bearer ${PREFIX}.${SECRET}`,
  ];
  for (const c of bad) t.equal(parseKey(c), null, JSON.stringify(c));
});

t.test('hashSecret is SHA-256 hex', async (t) => {
  t.equal(hashSecret(SECRET), createHash('sha256').update(SECRET).digest('hex'));
  t.equal(hashSecret('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

t.test('secretMatches', async (t) => {
  const stored = hashSecret(SECRET);
  t.equal(secretMatches(SECRET, stored), true);
  t.equal(secretMatches(SECRET.slice(0, 63) + 'b', stored), false, 'one character off');
  t.equal(secretMatches(newSecret(), stored), false);
  t.equal(secretMatches('', stored), false);
  t.equal(secretMatches(SECRET, ''), false, 'empty stored hash');
  t.equal(secretMatches(SECRET, stored.slice(0, 62)), false, 'truncated stored hash');
  t.equal(secretMatches(SECRET, stored + '00'), false, 'longer stored hash');
  t.equal(secretMatches(SECRET, SECRET), false, 'the secret itself is not its hash');
});

t.test('looksLikeApiKey: the two prefixes, well formed or not', async (t) => {
  t.equal(looksLikeApiKey(`${PREFIX}.${SECRET}`), true);
  t.equal(looksLikeApiKey('ws_live_'), true);
  t.equal(looksLikeApiKey('pk_live_garbage'), true);
  t.equal(looksLikeApiKey('ws_live_0192f3a4_AbCd1234'), true);
  t.equal(looksLikeApiKey('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.sig'), false, 'a JWT');
  t.equal(looksLikeApiKey('ws_test_x'), false);
  t.equal(looksLikeApiKey('sk_live_x'), false);
  t.equal(looksLikeApiKey(''), false);
  t.equal(looksLikeApiKey(' ws_live_x'), false);
});

// Trait rules (README, Request bodies): traitProblems() and dedicatedFields().
import t from 'tap';
import { dedicatedFields, traitProblems } from '../../src/domain/traits.js';

const ok = (traits: Record<string, unknown>) => traitProblems(traits).length === 0;

/** `levels` nested containers under one trait key: level 1 is the value directly under the key. */
function nestedObjects(levels: number, leaf: unknown = 1): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < levels; i++) v = { n: v };
  return v;
}
function nestedArrays(levels: number, leaf: unknown = 1): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}
function objectWith(n: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, i]));
}

t.test('valid keys are accepted', async (t) => {
  t.same(traitProblems({}), [], 'no traits');
  t.same(traitProblems({ plan: 'pro', Plan2: 1, a: true, a_b_c: null, camelCase: 1.5, Z9_: 'x' }), [], 'letters, digits, underscores after a letter');
  t.same(traitProblems({ ['a'.repeat(255)]: 1 }), [], 'a 255-character key is fine');
  t.same(traitProblems({ ['k' + '_'.repeat(254)]: 1 }), [], '255 characters, mostly underscores');
});

t.test('keys outside ^[a-zA-Z][a-zA-Z0-9_]*$ are rejected', async (t) => {
  for (const key of ['a.b', 'a b', ' a', 'a-b', '1abc', '9', '_abc', '_', '', 'a$', 'ä', 'a\nb', 'a/b']) {
    const p = traitProblems({ [key]: 1 });
    t.equal(p.length, 1, `${JSON.stringify(key)} rejected`);
    t.equal(p[0]?.field, `traits.${key}`, `${JSON.stringify(key)} names the field`);
    t.type(p[0]?.message, 'string');
  }
});

t.test('a 256-character key is rejected', async (t) => {
  const key = 'a'.repeat(256);
  const p = traitProblems({ [key]: 1 });
  t.equal(p.length, 1);
  t.equal(p[0]?.field, `traits.${key}`);
});

t.test('reserved keys are rejected', async (t) => {
  for (const key of ['id', 'workspace_id', 'user_id', 'anonymous_id', 'created_at', 'updated_at']) {
    const p = traitProblems({ [key]: 'x' });
    t.equal(p.length, 1, `${key} rejected`);
    t.equal(p[0]?.field, `traits.${key}`);
  }
  // Near misses are ordinary keys.
  t.same(traitProblems({ ID: 1, userId: 'x', anonymousId: 'y', createdAt: 1, identity: 1, user_id2: 1 }), [], 'near misses are fine');
});

t.test('string values: 10,000 characters ok, 10,001 rejected, at any depth', async (t) => {
  const ok10k = 'x'.repeat(10_000);
  const bad = 'x'.repeat(10_001);
  t.same(traitProblems({ s: ok10k }), [], '10,000 at top level');
  t.same(traitProblems({ s: [ok10k, ok10k], o: { a: ok10k, b: { c: [ok10k] } } }), [], '10,000 nested');
  t.equal(traitProblems({ s: bad }).length, 1, '10,001 at top level');
  t.equal(traitProblems({ s: bad })[0]?.field, 'traits.s');
  t.equal(traitProblems({ arr: ['short', bad] }).length, 1, '10,001 inside an array');
  t.equal(traitProblems({ obj: { inner: bad } }).length, 1, '10,001 inside an object');
  t.equal(traitProblems({ deep: { a: [{ b: bad }] } }).length, 1, '10,001 inside an array inside an object');
  t.match(traitProblems({ obj: { inner: bad } })[0]?.field, /^traits\.obj/, 'field points into the trait');
});

t.test('arrays: 1,000 elements ok, 1,001 rejected', async (t) => {
  t.same(traitProblems({ a: Array.from({ length: 1000 }, (_, i) => i) }), [], '1,000');
  t.equal(traitProblems({ a: Array.from({ length: 1001 }, (_, i) => i) }).length, 1, '1,001');
  t.equal(traitProblems({ o: { a: Array.from({ length: 1001 }, () => 0) } }).length, 1, '1,001 nested in an object');
  t.same(traitProblems({ o: { a: Array.from({ length: 1000 }, () => 0) } }), [], '1,000 nested in an object');
});

t.test('objects: 100 properties ok, 101 rejected, at any depth', async (t) => {
  t.same(traitProblems({ o: objectWith(100) }), [], '100 directly under the key');
  t.equal(traitProblems({ o: objectWith(101) }).length, 1, '101 directly under the key');
  t.same(traitProblems({ o: { a: { b: objectWith(100) } } }), [], '100 at depth 3');
  t.equal(traitProblems({ o: { a: { b: objectWith(101) } } }).length, 1, '101 at depth 3');
  t.equal(traitProblems({ arr: [1, objectWith(101)] }).length, 1, '101 inside an array');
  t.equal(traitProblems({ o: nestedObjects(8, objectWith(101)) }).length, 1, '101 at depth 9');
  t.same(traitProblems({ o: nestedObjects(8, objectWith(100)) }), [], '100 at depth 9');
});

t.test('nesting: an object or array directly under a key is level 1; 10 ok, 11 rejected', async (t) => {
  t.same(traitProblems({ n: nestedObjects(1) }), [], '1 object level');
  t.same(traitProblems({ n: nestedObjects(10) }), [], '10 object levels');
  t.equal(traitProblems({ n: nestedObjects(11) }).length, 1, '11 object levels');
  t.same(traitProblems({ n: nestedArrays(10) }), [], '10 array levels');
  t.equal(traitProblems({ n: nestedArrays(11) }).length, 1, '11 array levels');
  // Mixed containers count alike.
  const mixed10 = { a: [{ b: [{ c: [{ d: [{ e: [1] }] }] }] }] }; // 10 levels
  const mixed11 = { a: [{ b: [{ c: [{ d: [{ e: [[1]] }] }] }] }] }; // 11 levels
  t.same(traitProblems({ m: mixed10 }), [], '10 mixed levels');
  t.equal(traitProblems({ m: mixed11 }).length, 1, '11 mixed levels');
  // Empty containers count as a level too.
  t.same(traitProblems({ n: nestedObjects(9, {}) }), [], 'an empty object at level 10');
  t.equal(traitProblems({ n: nestedObjects(10, []) }).length, 1, 'an empty array at level 11');
  // Scalars never nest.
  t.same(traitProblems({ a: 1, b: 'x', c: true, d: null, e: 0, f: false }), [], 'scalars and null');
});

t.test('top level: 1,000 keys ok, 1,001 rejected', async (t) => {
  const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
  t.same(traitProblems(keys(1000)), [], '1,000 keys');
  const p = traitProblems(keys(1001));
  t.equal(p.length, 1, '1,001 keys: one problem');
  t.equal(p[0]?.field, 'traits');
});

t.test('several problems are all reported', async (t) => {
  const p = traitProblems({ 'bad-key': 1, id: 2, good: 'x'.repeat(10_001) });
  t.equal(p.length, 3);
  t.same(p.map((x) => x.field).sort(), ['traits.bad-key', 'traits.good', 'traits.id']);
  t.ok(ok({ fine: 1 }));
});

t.test('dedicatedFields: strings set, empty string and null clear, other values ignored', async (t) => {
  t.same(dedicatedFields({}), { fields: {}, problems: [] }, 'nothing');
  t.same(dedicatedFields({ plan: 'pro', Email: 'x@y.z' }), { fields: {}, problems: [] }, 'other keys (case-sensitive) are ignored');
  t.same(
    dedicatedFields({ email: 'a@b.co', phone: '+15551234567', first_name: 'Ada', last_name: 'Lovelace', timezone: 'Europe/Paris', locale: 'fr-FR' }),
    { fields: { email: 'a@b.co', phone: '+15551234567', first_name: 'Ada', last_name: 'Lovelace', timezone: 'Europe/Paris', locale: 'fr-FR' }, problems: [] },
    'every dedicated field set from a string',
  );
  t.same(dedicatedFields({ email: '', phone: null, first_name: '', last_name: null, timezone: '', locale: null }), {
    fields: { email: null, phone: null, first_name: null, last_name: null, timezone: null, locale: null },
    problems: [],
  }, "'' and null clear");
  t.same(dedicatedFields({ email: 5, phone: true, first_name: { a: 1 }, last_name: ['x'], timezone: 0, locale: false }), { fields: {}, problems: [] }, 'non-string values are ignored');
});

t.test('dedicatedFields: email longer than 254 characters is a problem', async (t) => {
  const at254 = 'a'.repeat(254 - '@example.com'.length) + '@example.com';
  t.equal(at254.length, 254);
  t.same(dedicatedFields({ email: at254 }), { fields: { email: at254 }, problems: [] }, '254 ok');
  const r = dedicatedFields({ email: 'a' + at254 });
  t.same(r.fields, {}, 'the field is not set');
  t.equal(r.problems.length, 1);
  t.equal(r.problems[0]?.field, 'traits.email');
  t.type(r.problems[0]?.message, 'string');
});

t.test('dedicatedFields: phone longer than 50 characters is a problem', async (t) => {
  t.same(dedicatedFields({ phone: '1'.repeat(50) }).problems, [], '50 ok');
  const r = dedicatedFields({ phone: '1'.repeat(51) });
  t.equal(r.problems.length, 1);
  t.equal(r.problems[0]?.field, 'traits.phone');
  t.same(r.fields, {});
});

// The body depth bound, on raw JSON text before it is parsed (actors/json-depth.ts).
import t from 'tap';
import { MAX_BODY_DEPTH, nestsDeeperThan } from '../../src/actors/json-depth.js';

const objects = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
const arrays = (n: number) => '['.repeat(n) + ']'.repeat(n);

t.equal(MAX_BODY_DEPTH, 32, 'the documented bound');
t.equal(nestsDeeperThan(objects(32)), false, '32 objects: the body itself is level 1');
t.equal(nestsDeeperThan(objects(33)), true, '33 objects');
t.equal(nestsDeeperThan(arrays(32)), false, '32 arrays');
t.equal(nestsDeeperThan(arrays(33)), true, '33 arrays');
t.equal(nestsDeeperThan('{"a":[{"b":[' + '1]}]}', 4), false, 'mixed, exactly 4');
t.equal(nestsDeeperThan('{"a":[{"b":[[1]]}]}', 4), true, 'mixed, 5');
t.equal(nestsDeeperThan(JSON.stringify({ a: [1, 2], b: { c: [3] }, d: [[], {}, [[]]] }), 4), false, 'siblings do not add up');
t.equal(nestsDeeperThan(arrays(200_000)), true, '200,000 levels: refused without parsing');
t.equal(nestsDeeperThan('['.repeat(100_000)), true, 'unclosed: counted as far as it goes');

t.test('brackets inside strings do not count, escapes included', async (t) => {
  t.equal(nestsDeeperThan(JSON.stringify({ s: '{['.repeat(100) }), 2), false, 'brackets in a value');
  t.equal(nestsDeeperThan(JSON.stringify({ ['[{'.repeat(50)]: 1 }), 2), false, 'brackets in a key');
  t.equal(nestsDeeperThan(JSON.stringify({ s: 'a "quoted" {[ string' }), 1), false, 'escaped quotes keep the string open');
  t.equal(nestsDeeperThan(JSON.stringify({ s: 'ends in a backslash \\' , t: [[1]] }), 2), true, 'an escaped backslash before the closing quote ends the string');
  t.equal(nestsDeeperThan(JSON.stringify({ s: '\\"[[[' }), 1), false, 'backslash, then an escaped quote');
});

t.test('agrees with the depth of the parsed value', async (t) => {
  const depth = (v: unknown): number => (v !== null && typeof v === 'object' ? 1 + Math.max(0, ...Object.values(v).map(depth)) : 0);
  const samples = [{}, [], { a: 1 }, { a: { b: [1, { c: '}]' }] } }, [[[['x']]]], { a: [{}, [[{ b: '\\' }]]] }];
  for (const v of samples) {
    const raw = JSON.stringify(v);
    const d = depth(v);
    t.equal(nestsDeeperThan(raw, d), false, `${raw}: not deeper than ${d}`);
    if (d > 0) t.equal(nestsDeeperThan(raw, d - 1), true, `${raw}: deeper than ${d - 1}`);
  }
});

// Conditions in memory (domain/conditions.ts): the shared cases (the SQL reading is held to the
// same ones in test/integration/audience.test.ts), then what only an event has.
import t from 'tap';
import { compareCodePoints, conditionHolds, conditionsHold, type ConditionSubject } from '../../src/domain/conditions.js';
import { CASES, PEOPLE } from '../helpers/condition-cases.js';

const subjects = PEOPLE.map((p) => ({ name: p.name, subject: { traits: p.traits, person: p.person, counts: p.counts } satisfies ConditionSubject }));

for (const k of CASES) {
  const got = subjects.filter(({ subject }) => conditionsHold(k.filters, k.match, subject)).map((s) => s.name);
  t.same(got, k.expect, k.what);
}

t.test('parameters.* read the triggering event', async (t) => {
  const subject: ConditionSubject = { parameters: { amount: 120, currency: 'EUR', items: [{ sku: 'A1' }] }, traits: {}, person: {} };
  t.ok(conditionHolds({ field: 'parameters.amount', operator: 'gte', value: 100 }, subject));
  t.notOk(conditionHolds({ field: 'parameters.amount', operator: 'lt', value: 100 }, subject));
  t.ok(conditionHolds({ field: 'parameters.items.0.sku', operator: 'eq', value: 'A1' }, subject));
  t.ok(conditionHolds({ field: 'parameters.currency', operator: 'in', value: ['EUR', 'USD'] }, subject));
  t.notOk(conditionHolds({ field: 'parameters.missing', operator: 'exists' }, subject));
});

t.test('what never holds', async (t) => {
  const subject: ConditionSubject = { traits: { a: { b: 1 }, toString: 'x' }, person: { email: 'e' } };
  t.notOk(conditionHolds({ field: 'traits.a', operator: 'eq', value: 1 }, subject), 'an object equals no scalar');
  t.notOk(conditionHolds({ field: 'traits.a', operator: 'gt', value: 0 }, subject), 'an object is not ordered');
  t.notOk(conditionHolds({ field: 'traits.a', operator: 'in', value: [1] }, subject), 'an object is in no list');
  t.notOk(conditionHolds({ field: 'traits.a.b', operator: 'gt', value: true }, subject), 'a boolean bound orders nothing');
  t.notOk(conditionHolds({ field: 'person.email.x', operator: 'exists' }, subject), 'person fields have no path');
  t.notOk(conditionHolds({ field: 'person.first_name', operator: 'exists' }, { ...subject, person: { first_name: 'A' } }), 'only the five person fields');
  t.notOk(conditionHolds({ field: 'traits.constructor', operator: 'exists' }, subject), 'no prototype properties');
  t.ok(conditionHolds({ field: 'traits.toString', operator: 'eq', value: 'x' }, subject), 'own properties of any name');
  t.notOk(conditionHolds({ field: 'traits.a', operator: 'matches', value: 1 }, subject), 'an unknown operator');
});

t.test('strings compare by code point', async (t) => {
  t.ok(compareCodePoints('\u{1F600}', '\uFFFD') > 0, 'an astral character after U+FFFD (UTF-16 units say the opposite)');
  t.ok(compareCodePoints('ab', 'abc') < 0);
  t.equal(compareCodePoints('é', 'é'), 0);
});

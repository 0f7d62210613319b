// Condition cases (docs/campaigns-runtime.md) read two ways that must agree: in memory by
// domain/conditions.ts (test/unit/conditions.test.ts) and in SQL by store/audience.ts
// (test/integration/audience.test.ts). Each case names the people it matches.
import type { Condition } from '../../src/domain/conditions.js';

export interface CasePerson {
  name: string;
  traits: Record<string, unknown>;
  person: { email: string | null; phone: string | null; status: string; timezone: string | null; locale: string | null };
  counts: Record<string, number>;
}

const person = (over: Partial<CasePerson['person']> = {}): CasePerson['person'] => ({ email: null, phone: null, status: 'active', timezone: null, locale: null, ...over });

export const PEOPLE: CasePerson[] = [
  {
    name: 'a',
    traits: { plan: 'pro', age: 30, tags: ['x', 'y'], nested: { v: 5 }, signup: '2024-01-02T00:00:00Z', n: null, s: '\u{1F600}' },
    person: person({ email: 'a@x.com', locale: 'en' }),
    counts: { purchase: 3 },
  },
  { name: 'b', traits: { plan: 'free', age: '30', tags: 'xyz', nested: { v: '5' }, s: '\uFFFD' }, person: person({ email: 'b@y.org', timezone: 'Europe/Paris' }), counts: { purchase: 1 } },
  { name: 'c', traits: {}, person: person({ status: 'unsubscribed' }), counts: {} },
  { name: 'd', traits: { plan: 'Pro', age: 30.0, score: 10.5, list: [1, 2, 3], flag: true }, person: person({ phone: '+33600000000' }), counts: { signup: 1 } },
];

const c = (field: string, operator: string, value?: unknown): Condition => ({ field, operator, value });

export const CASES: { what: string; filters: Condition[]; match?: 'all' | 'any'; expect: string[] }[] = [
  { what: 'eq string', filters: [c('traits.plan', 'eq', 'pro')], expect: ['a'] },
  { what: 'neq holds for a missing value', filters: [c('traits.plan', 'neq', 'pro')], expect: ['b', 'c', 'd'] },
  { what: 'eq number is not the string', filters: [c('traits.age', 'eq', 30)], expect: ['a', 'd'] },
  { what: 'eq the string is not the number', filters: [c('traits.age', 'eq', '30')], expect: ['b'] },
  { what: 'eq null: missing or null', filters: [c('traits.n', 'eq', null)], expect: ['a', 'b', 'c', 'd'] },
  { what: 'eq boolean', filters: [c('traits.flag', 'eq', true)], expect: ['d'] },
  { what: 'exists: not for null', filters: [c('traits.n', 'exists')], expect: [] },
  { what: 'exists', filters: [c('traits.plan', 'exists')], expect: ['a', 'b', 'd'] },
  { what: 'not_exists', filters: [c('traits.plan', 'not_exists')], expect: ['c'] },
  { what: 'gt number: numbers only', filters: [c('traits.age', 'gt', 29)], expect: ['a', 'd'] },
  { what: 'gte number', filters: [c('traits.age', 'gte', 30)], expect: ['a', 'd'] },
  { what: 'lt number', filters: [c('traits.age', 'lt', 30)], expect: [] },
  { what: 'lte fraction', filters: [c('traits.score', 'lte', 10.5)], expect: ['d'] },
  { what: 'gt string: strings only', filters: [c('traits.age', 'gt', '29')], expect: ['b'] },
  { what: 'gte ISO date', filters: [c('traits.signup', 'gte', '2024-01-01')], expect: ['a'] },
  { what: 'strings by code point', filters: [c('traits.s', 'gt', '\uFFFD')], expect: ['a'] },
  { what: 'contains: string or array', filters: [c('traits.tags', 'contains', 'x')], expect: ['a', 'b'] },
  { what: 'not_contains', filters: [c('traits.tags', 'not_contains', 'x')], expect: ['c', 'd'] },
  { what: 'contains a number in an array', filters: [c('traits.list', 'contains', 2)], expect: ['d'] },
  { what: 'contains a number in a string', filters: [c('traits.age', 'contains', 3)], expect: ['b'] },
  { what: 'nested path', filters: [c('traits.nested.v', 'eq', 5)], expect: ['a'] },
  { what: 'nested path, string', filters: [c('traits.nested.v', 'eq', '5')], expect: ['b'] },
  { what: 'array index', filters: [c('traits.tags.0', 'eq', 'x')], expect: ['a'] },
  { what: 'array index from the end', filters: [c('traits.tags.-1', 'eq', 'y')], expect: ['a'] },
  { what: 'in', filters: [c('traits.plan', 'in', ['pro', 'free'])], expect: ['a', 'b'] },
  { what: 'in numbers', filters: [c('traits.age', 'in', [30, 31])], expect: ['a', 'd'] },
  { what: 'not_in', filters: [c('traits.plan', 'not_in', ['pro', 'free'])], expect: ['c', 'd'] },
  { what: 'starts_with: case matters', filters: [c('traits.plan', 'starts_with', 'pr')], expect: ['a'] },
  { what: 'ends_with', filters: [c('traits.plan', 'ends_with', 'ee')], expect: ['b'] },
  { what: 'person.email ends_with', filters: [c('person.email', 'ends_with', '@y.org')], expect: ['b'] },
  { what: 'person.timezone eq', filters: [c('person.timezone', 'eq', 'Europe/Paris')], expect: ['b'] },
  { what: 'person.status neq', filters: [c('person.status', 'neq', 'active')], expect: ['c'] },
  { what: 'person.phone exists', filters: [c('person.phone', 'exists')], expect: ['d'] },
  { what: 'person.locale in', filters: [c('person.locale', 'in', ['en', 'fr'])], expect: ['a'] },
  { what: 'performed_count_gte', filters: [c('purchase', 'performed_count_gte', { count: 2 })], expect: ['a'] },
  { what: 'performed_count_lte counts never as 0', filters: [c('purchase', 'performed_count_lte', { count: 1 })], expect: ['b', 'c', 'd'] },
  { what: 'performed_count_eq 0', filters: [c('purchase', 'performed_count_eq', { count: 0 })], expect: ['c', 'd'] },
  { what: 'performed_count_between', filters: [c('purchase', 'performed_count_between', { count: 1, count_max: 3 })], expect: ['a', 'b'] },
  { what: 'parameters.* without an event reads nothing', filters: [c('parameters.x', 'exists')], expect: [] },
  { what: 'all (the default)', filters: [c('traits.age', 'eq', 30), c('traits.plan', 'eq', 'Pro')], expect: ['d'] },
  { what: 'any', filters: [c('traits.plan', 'eq', 'free'), c('traits.age', 'eq', 30)], match: 'any', expect: ['a', 'b', 'd'] },
  { what: 'no filters: everyone', filters: [], expect: ['a', 'b', 'c', 'd'] },
];

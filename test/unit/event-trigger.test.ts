// What an event campaign's trigger_config says (domain/event-trigger.ts): properties as
// parameters equalities, first_occurrence implying one entry, what a trigger needs loaded.
import t from 'tap';
import { eventTriggerOf, triggerHolds } from '../../src/domain/event-trigger.js';

const of = (trigger_config: Record<string, unknown>) => eventTriggerOf({ id: 'c', workspace_id: 'w', trigger_config });
const subject = (parameters: Record<string, unknown>, traits: Record<string, unknown> = {}) => ({ parameters, traits, person: {}, counts: {} });

t.test('properties are parameters equalities, held with the filters', async (t) => {
  const tr = of({ event_names: ['buy'], properties: { currency: 'EUR' }, filters: [{ field: 'parameters.amount', operator: 'gt', value: 10 }] });
  t.ok(triggerHolds(tr, subject({ currency: 'EUR', amount: 11 })));
  t.notOk(triggerHolds(tr, subject({ currency: 'USD', amount: 11 })), 'a property differs');
  t.notOk(triggerHolds(tr, subject({ currency: 'EUR', amount: 10 })), 'a filter fails');
  t.ok(triggerHolds(of({ event_names: ['buy'] }), subject({})), 'no conditions: every event');
});

t.test('the rules of entry', async (t) => {
  t.equal(of({ first_occurrence: true }).maxPerUser, 1, 'first_occurrence: one entry');
  t.equal(of({ first_occurrence: true }).firstOccurrence, true);
  t.equal(of({ max_per_user: 3 }).maxPerUser, 3);
  t.equal(of({}).maxPerUser, undefined, 'unlimited by default');
  t.equal(of({ debounce: 30, delay_minutes: 0.5 }).debounceSeconds, 30);
  t.equal(of({ debounce: 30, delay_minutes: 0.5 }).delayMinutes, 0.5, 'decimal minutes');
  t.equal(of({ debounce: 0 }).debounceSeconds, undefined, 'a zero debounce is none');
});

t.test('what a trigger needs loaded', async (t) => {
  t.equal(of({ filters: [{ field: 'parameters.x', operator: 'exists' }] }).readsPerson, false, 'parameters only: no person load');
  t.equal(of({ filters: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }] }).readsPerson, true);
  t.equal(of({ filters: [{ field: 'person.email', operator: 'exists' }] }).readsPerson, true);
  const counted = of({ filters: [{ field: 'buy', operator: 'performed_count_gte', value: { count: 2 } }, { field: 'buy', operator: 'performed_count_lte', value: { count: 5 } }] });
  t.same(counted.countedEvents, ['buy'], 'each counted event once');
  t.equal(counted.readsPerson, false, 'a count is not a person field');
});

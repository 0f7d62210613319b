// Which events can change a segment's answer for a person (domain/segments.ts eventNamesRead):
// the names its event leaves and its performed_count_* conditions read, nested at any depth;
// a tree of traits, reachability or lists reads none, so a tracked event never evaluates it.
import t from 'tap';
import { countsEvents, eventNamesRead, type SegmentNode } from '../../src/domain/segments.js';

t.test('event leaves and performed_count_* conditions name the events a tree reads', async (t) => {
  const tree: SegmentNode = {
    all: [
      { event: { name: 'purchase', count: { op: 'gte', value: 2 }, within: '30d' } },
      { any: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }, { field: 'app_open', operator: 'performed_count_gte', value: 3 }, { has_channel: 'push' }] },
    ],
  };
  t.same(eventNamesRead(tree).sort(), ['app_open', 'purchase']);
  t.ok(countsEvents(tree));
});

t.test('traits, person fields, reachability and lists read no event', async (t) => {
  const tree: SegmentNode = {
    any: [{ field: 'traits.plan', operator: 'eq', value: 'pro' }, { field: 'person.status', operator: 'eq', value: 'active' }, { has_channel: 'email' }, { in_list: '0190b8a0-0000-7000-8000-000000000000' }],
  };
  t.same(eventNamesRead(tree), []);
  t.notOk(countsEvents(tree));
});

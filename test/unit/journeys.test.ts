// Journey graph rules (src/domain/journeys.ts, docs/campaigns-runtime.md "Journeys"): what follows each
// node, what activation refuses (cycles, unreachable nodes, dangling ids, branches), and the
// deterministic picks of a random split and the holdout.
import t from 'tap';
import { graphProblems, heldOut, nextNode, nodeStats, pickBranch, successors, type GraphNode } from '../../src/domain/journeys.js';
import { parseDuration } from '../../src/domain/time.js';
import { activationProblems, type CampaignSpec, type Workflow } from '../../src/domain/campaigns.js';

const push = (id: string, next?: string): GraphNode => ({ id, type: 'push', ...(next === undefined ? {} : { next }) });
const fields = (nodes: GraphNode[]) => graphProblems(nodes).map((p) => p.field).sort();
const messages = (nodes: GraphNode[]) => graphProblems(nodes).map((p) => p.message).join('\n');

t.test('a list stays a list: each node followed by the one after it', async (t) => {
  const nodes = [push('a'), { id: 'd', type: 'delay' }, push('b')];
  t.same(successors(nodes, 0), ['d']);
  t.equal(nextNode(nodes, 1), 'b');
  t.equal(nextNode(nodes, 2), null, 'the last node ends the journey');
  t.same(graphProblems(nodes), []);
});

t.test('next, split, random_split and exit name what follows', async (t) => {
  const nodes: GraphNode[] = [
    { id: 's', type: 'split', yes: 'y', no: 'n' },
    push('y', 'x'),
    push('n'),
    { id: 'x', type: 'exit' },
    { id: 'r', type: 'random_split', branches: [{ weight: 1, next: 'x' }, { weight: 3, next: 'y' }] },
  ];
  t.same(successors(nodes, 0), ['y', 'n']);
  t.equal(nextNode(nodes, 1), 'x', 'next wins over the list');
  t.equal(nextNode(nodes, 2), 'x', 'without next, the node after it');
  t.equal(nextNode(nodes, 3), null, 'an exit ends');
  t.same(successors(nodes, 3), []);
  t.same(successors(nodes, 4), ['x', 'y']);
  t.same(fields(nodes), ['workflow_definition.nodes.4'], 'only the random split is unreachable');
  t.match(messages(nodes), /node r is unreachable/);
});

t.test('dangling ids, a next to itself and missing branches are refused, naming the node', async (t) => {
  t.same(fields([push('a', 'zz'), push('b')]), ['workflow_definition.nodes.0.next', 'workflow_definition.nodes.1'], 'dangling next (and b then unreachable)');
  t.match(messages([push('a', 'zz')]), /names no node of the workflow \(zz\), on node a/);
  t.match(messages([push('a', 'a')]), /names node a itself/);
  t.same(fields([{ id: 's', type: 'split', yes: 'p' }, push('p')]), ['workflow_definition.nodes.0.no']);
  t.same(fields([{ id: 'r', type: 'random_split', branches: [{ weight: 1, next: 'p' }] }, push('p')]), ['workflow_definition.nodes.0.branches']);
  t.same(
    fields([{ id: 'r', type: 'random_split', branches: [{ weight: 0, next: 'p' }, { weight: -2, next: 'q' }] }, push('p', 'q'), push('q')]),
    ['workflow_definition.nodes.0.branches.0.weight', 'workflow_definition.nodes.0.branches.1.weight'],
    'weights must be above 0',
  );
});

t.test('cycles are refused, naming a node on them', async (t) => {
  const loop = [push('a'), push('b', 'a')];
  t.same(fields(loop), ['workflow_definition.nodes.0']);
  t.match(messages(loop), /node a is on a cycle \(a → b → a\)/);
  const viaSplit: GraphNode[] = [push('a'), { id: 's', type: 'split', yes: 'a', no: 'e' }, { id: 'e', type: 'exit' }];
  t.match(messages(viaSplit), /cycle/);
  // A long chain: no recursion limit.
  const chain = Array.from({ length: 500 }, (_, i) => push(`n${i}`));
  t.same(graphProblems(chain), []);
  chain[499] = push('n499', 'n0');
  t.match(messages(chain), /node n0 is on a cycle/);
});

t.test('random split and holdout picks are deterministic and by weight', async (t) => {
  const branches = [{ weight: 1, next: 'a' }, { weight: 3, next: 'b' }];
  const ids = Array.from({ length: 4000 }, (_, i) => `0191f3a0-0000-7000-8000-${String(i).padStart(12, '0')}`);
  const picks = ids.map((id) => pickBranch(id, 'r', branches)!.next);
  t.same(picks, ids.map((id) => pickBranch(id, 'r', branches)!.next), 'the same every time');
  const a = picks.filter((p) => p === 'a').length / ids.length;
  t.ok(a > 0.2 && a < 0.3, `about a quarter take weight 1 of 4 (${a})`);
  const held = ids.filter((id) => heldOut(id, 10)).length / ids.length;
  t.ok(held > 0.07 && held < 0.13, `about 10% held out (${held})`);
  t.equal(ids.filter((id) => heldOut(id, 0)).length, 0, '0% holds nobody out');
});

t.test('activation checks a split condition and the graph', async (t) => {
  const spec = (workflow: Workflow): CampaignSpec => ({ trigger_type: 'webhook', trigger_config: {}, audience_config: {}, workflow_definition: workflow });
  const ok: Workflow = {
    nodes: [
      { id: 's', type: 'split', condition: { field: 'traits.plan', operator: 'eq', value: 'pro' }, yes: 'p', no: 'e' },
      { id: 'p', type: 'push', title: 'Hi', next: 'e' },
      { id: 'e', type: 'exit' },
    ],
  };
  t.same(activationProblems(spec(ok), new Map(), 0), []);
  const bad: Workflow = { nodes: [{ id: 's', type: 'split', condition: { field: 'parameters.x', operator: 'nope' }, yes: 'p', no: 'p' }, { id: 'p', type: 'push', title: 'Hi' }] };
  t.same(activationProblems(spec(bad), new Map(), 0).map((p) => p.field), ['workflow_definition.nodes.0.condition.filters.0.operator']);
  const audience: Workflow = { nodes: [{ id: 's', type: 'split', condition: { filters: [{ field: 'person.email', operator: 'exists' }], match: 'any' }, yes: 'p', no: 'p' }, { id: 'p', type: 'push', title: 'Hi' }] };
  t.same(activationProblems(spec(audience), new Map(), 0), []);
});

t.test('a wait_for_event is followed by its on_event or on_timeout, never the node after it', async (t) => {
  const nodes: GraphNode[] = [{ id: 'w', type: 'wait_for_event', on_event: 'x', on_timeout: 'p' }, push('p'), { id: 'x', type: 'exit' }];
  t.same(successors(nodes, 0), ['x', 'p']);
  t.equal(nextNode(nodes, 0), null, 'a branching node has no next of its own');
  t.same(graphProblems(nodes), []);
  t.same(fields([{ id: 'w', type: 'wait_for_event', on_event: 'p' }, push('p')]), ['workflow_definition.nodes.0.on_timeout'], 'both branches are required');
  const stats = nodeStats(nodes, [{ from_node: 'w', to_node: 'x', n: 2 }, { from_node: 'w', to_node: 'p', n: 3 }, { from_node: 'p', to_node: '', n: 3 }], 6);
  t.same(stats.w, { entered: 6, completed: 5, took: { x: 2, p: 3 } }, 'took by branch; those still waiting in neither');
});

t.test('durations: a whole number and a unit', async (t) => {
  t.same(['500ms', '30s', '15m', '12h', '2d', ' 1d '].map(parseDuration), [500, 30_000, 900_000, 43_200_000, 172_800_000, 86_400_000]);
  for (const bad of ['2', '2 days', '1.5h', '-1h', '1w', '', 2, null]) t.equal(parseDuration(bad), null, `${String(bad)} is none`);
});

// Journeys (docs/campaigns-runtime.md, "Journeys"): a workflow's nodes as a graph. A node names
// what follows with `next` (without it, the node after it in the list), a `split` its `yes` and
// `no`, a `wait_for_event` its `on_event` and `on_timeout`, a `random_split` its weighted
// `branches`, and an `exit` nothing. Pure: the shape of the
// graph (what follows each node, whether it can go live) and the deterministic picks of a
// random split and of the holdout, from the enrolment id, so a retried step picks the same.
import { createHash } from 'node:crypto';
import type { FieldError } from './errors.js';

export interface Branch {
  weight: number;
  next: string;
}

/** What the graph rules read of a node; the node types' own fields are campaigns.ts's. */
export interface GraphNode {
  id: string;
  type: string;
  next?: string;
  yes?: string;
  no?: string;
  branches?: Branch[];
  on_event?: string;
  on_timeout?: string;
}

/** Node types whose successors are their branches, never the node after them in the list. */
const BRANCHING = new Set(['split', 'wait_for_event', 'random_split', 'exit']);
/** The node types whose successors are named fields, by type: a split's `yes`/`no`, a wait's `on_event`/`on_timeout`. */
const TWO_WAY: ReadonlyMap<string, readonly ('yes' | 'no' | 'on_event' | 'on_timeout')[]> = new Map([
  ['split', ['yes', 'no']],
  ['wait_for_event', ['on_event', 'on_timeout']],
] as const);

/** The node ids that may follow node `index` of the list: its branches, its `next`, or the node after it. */
export function successors(nodes: readonly GraphNode[], index: number): string[] {
  const node = nodes[index];
  if (node === undefined) return [];
  switch (node.type) {
    case 'exit':
      return [];
    case 'split':
    case 'wait_for_event':
      return TWO_WAY.get(node.type)!.map((k) => node[k]).filter((s): s is string => typeof s === 'string');
    case 'random_split':
      return (Array.isArray(node.branches) ? node.branches : []).map((b) => b.next).filter((s): s is string => typeof s === 'string');
    default: {
      if (node.next !== undefined) return [node.next];
      const after = nodes[index + 1];
      return after === undefined ? [] : [after.id];
    }
  }
}

/** The node after a non-branching node (null: the journey ends there). */
export function nextNode(nodes: readonly GraphNode[], index: number): string | null {
  const node = nodes[index];
  if (node === undefined || BRANCHING.has(node.type)) return null;
  return node.next ?? nodes[index + 1]?.id ?? null;
}

/**
 * Why the graph cannot go live, each problem naming its node: a branching node missing its
 * branches, weights not positive, ids that name no node (dangling), a `next` to itself, nodes no
 * path from the first reaches, and cycles (a journey must end: a cycle would hold a person forever).
 */
export function graphProblems(nodes: readonly GraphNode[]): FieldError[] {
  const problems: FieldError[] = [];
  const at = (i: number, key?: string) => `workflow_definition.nodes.${i}${key === undefined ? '' : `.${key}`}`;
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const target = (i: number, key: string, id: unknown) => {
    const node = nodes[i]!;
    if (typeof id !== 'string' || id.length === 0) return problems.push({ field: at(i, key), message: `is required on ${node.type} node ${node.id}: a node id` });
    if (!index.has(id)) return problems.push({ field: at(i, key), message: `names no node of the workflow (${id}), on node ${node.id}` });
    if (id === node.id) problems.push({ field: at(i, key), message: `names node ${node.id} itself` });
  };
  nodes.forEach((node, i) => {
    const two = TWO_WAY.get(node.type);
    if (two) {
      for (const k of two) target(i, k, node[k]);
    } else if (node.type === 'random_split') {
      const branches: unknown = node.branches;
      if (!Array.isArray(branches) || branches.length < 2) problems.push({ field: at(i, 'branches'), message: `random_split node ${node.id} needs at least two branches {weight, next}` });
      else {
        branches.forEach((b: Partial<Branch>, j) => {
          if (!(typeof b.weight === 'number' && Number.isFinite(b.weight) && b.weight > 0)) problems.push({ field: at(i, `branches.${j}.weight`), message: `must be a number above 0, on node ${node.id}` });
          target(i, `branches.${j}.next`, b.next);
        });
      }
    } else if (node.type !== 'exit' && node.next !== undefined) target(i, 'next', node.next);
  });
  if (nodes.length === 0) return problems;
  // Reachable from the first node (where every enrolment starts).
  const reached = new Set<number>([0]);
  const stack = [0];
  while (stack.length > 0) {
    const i = stack.pop()!;
    for (const id of successors(nodes, i)) {
      const j = index.get(id);
      if (j !== undefined && !reached.has(j)) {
        reached.add(j);
        stack.push(j);
      }
    }
  }
  nodes.forEach((node, i) => reached.has(i) || problems.push({ field: at(i), message: `node ${node.id} is unreachable: no path from the first node (${nodes[0]!.id}) leads to it` }));
  const cycle = firstCycle(nodes, index);
  if (cycle !== null) problems.push({ field: at(index.get(cycle[0]!)!), message: `node ${cycle[0]!} is on a cycle (${cycle.join(' → ')}): a journey must end` });
  return problems;
}

/** A cycle of the graph as node ids (first repeated last), or null; iterative depth-first colouring, so 500 nodes cost no deep recursion. */
function firstCycle(nodes: readonly GraphNode[], index: ReadonlyMap<string, number>): string[] | null {
  const state = new Array<0 | 1 | 2>(nodes.length).fill(0); // unseen, on the path, done
  for (let root = 0; root < nodes.length; root++) {
    if (state[root] !== 0) continue;
    const path: { i: number; next: number[] }[] = [{ i: root, next: succ(root) }];
    state[root] = 1;
    while (path.length > 0) {
      const top = path[path.length - 1]!;
      const j = top.next.pop();
      if (j === undefined) {
        state[top.i] = 2;
        path.pop();
      } else if (state[j] === 1) {
        const from = path.findIndex((p) => p.i === j);
        return [...path.slice(from).map((p) => nodes[p.i]!.id), nodes[j]!.id];
      } else if (state[j] === 0) {
        state[j] = 1;
        path.push({ i: j, next: succ(j) });
      }
    }
  }
  return null;
  function succ(i: number): number[] {
    return successors(nodes, i).flatMap((id) => {
      const j = index.get(id);
      return j === undefined ? [] : [j];
    });
  }
}

/** A number in [0, 1) from an enrolment id and a salt: the same every time, spread evenly. */
function unitHash(enrolmentId: string, salt: string): number {
  return createHash('sha256').update(`${salt}/${enrolmentId}`).digest().readUInt32BE(0) / 2 ** 32;
}

/** The branch of a random split an enrolment takes: by weight, from a hash of its id and the node's. */
export function pickBranch(enrolmentId: string, nodeId: string, branches: readonly Branch[]): Branch | undefined {
  const total = branches.reduce((s, b) => s + (b.weight > 0 ? b.weight : 0), 0);
  let x = unitHash(enrolmentId, nodeId) * total;
  for (const b of branches) {
    if (b.weight <= 0) continue;
    if (x < b.weight) return b;
    x -= b.weight;
  }
  return [...branches].reverse().find((b) => b.weight > 0);
}

/** Whether an enrolment is held out of a campaign holding out `percent` (0–50) of its enrolments. */
export const heldOut = (enrolmentId: string, percent: number): boolean => percent > 0 && unitHash(enrolmentId, 'holdout') * 100 < percent;

/** Whether a workflow is a journey rather than a list: a node names what follows, or branches. */
export const isJourney = (nodes: readonly GraphNode[]): boolean => nodes.some((n) => n.next !== undefined || BRANCHING.has(n.type));

export interface NodeStats {
  entered: number;
  completed: number;
  /** A split's, wait's or random split's enrolments per branch (the next node's id). */
  took?: Record<string, number>;
}

/**
 * Per-node stats from the counts along each edge (from a node to the next, '' the end): a
 * node's completed is its out-edges, its entered its in-edges (the first node's: `started`, the
 * enrolments not held out), a branching node's took its out-edges by next node (a wait's: the
 * enrolments that left it by each branch; those still waiting are in neither).
 */
export function nodeStats(nodes: readonly GraphNode[], edges: readonly { from_node: string; to_node: string; n: number }[], started: number): Record<string, NodeStats> {
  const out: Record<string, NodeStats> = {};
  nodes.forEach((n, i) => {
    out[n.id] = { entered: i === 0 ? started : 0, completed: 0, ...(n.type === 'random_split' || TWO_WAY.has(n.type) ? { took: {} } : {}) };
  });
  for (const e of edges) {
    const from = out[e.from_node];
    if (from) {
      from.completed += e.n;
      if (from.took && e.to_node !== '') from.took[e.to_node] = (from.took[e.to_node] ?? 0) + e.n;
    }
    const to = out[e.to_node];
    if (to && e.to_node !== nodes[0]?.id) to.entered += e.n;
  }
  return out;
}

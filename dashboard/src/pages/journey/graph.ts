// A workflow read as a journey's graph (docs/journey-canvas.md): each node's ways out (its
// handles on the canvas, its branch pickers in the list), the edges they draw, and the edits
// the canvas makes to them. Pure: the canvas and the list view both edit nodes through these.
import { NODE_LABEL, type NodeType } from '../../enums';

/** A node as the API stores it; content fields not set are absent. */
export type WorkflowNode = { id: string; type: NodeType; template_id?: string; [k: string]: unknown };

/** How the builder names a step (its list item, its canvas node, its controls, warnings and errors): "Step 1 (Email)". */
export const stepName = (node: { type: NodeType }, i: number) => `Step ${i + 1} (${NODE_LABEL[node.type]})`;

/** A journey's counts per node id while its campaign runs (GET /campaigns/{id}, `data.nodes`; absent for a list). */
export type NodeStats = Record<string, { entered: number; completed: number; took?: Record<string, number> }>;

/** One way out of a node: `handle` names it (the node's key for it, or `branch-<j>`). */
export interface Out {
  handle: string;
  label: string;
  /** The node it leads to, as written; undefined when not set. */
  target: string | undefined;
  /** Not written: the node after this one in the list, which the server runs next. */
  implicit?: boolean;
}

/** The steps that send a message or a call (what a test send can send). */
export const SENDS: readonly NodeType[] = ['push', 'email', 'sms', 'webhook'];
const BRANCHING: readonly NodeType[] = ['split', 'wait_for_event', 'random_split', 'exit'];

/** A workflow the server reads as a graph: a node names what follows, or branches. */
export const isJourney = (nodes: WorkflowNode[]) => nodes.some((n) => typeof n.next === 'string' || BRANCHING.includes(n.type));

type Branch = { weight?: number; next?: string };
export const branchesOf = (node: WorkflowNode): Branch[] => (Array.isArray(node.branches) ? (node.branches as Branch[]) : []);
const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);

/** Node `i`'s ways out, in the order its handles are drawn. */
export function outsOf(nodes: WorkflowNode[], i: number): Out[] {
  const node = nodes[i];
  if (!node) return [];
  switch (node.type) {
    case 'exit':
      return [];
    case 'split':
      return [{ handle: 'yes', label: 'yes', target: str(node.yes) }, { handle: 'no', label: 'no', target: str(node.no) }];
    case 'wait_for_event':
      return [{ handle: 'on_event', label: 'event', target: str(node.on_event) }, { handle: 'on_timeout', label: 'timeout', target: str(node.on_timeout) }];
    case 'random_split':
      return branchesOf(node).map((b, j) => ({ handle: `branch-${j}`, label: `${branchLetter(j)} (${b.weight ?? '?'})`, target: str(b.next) }));
    default: {
      const next = str(node.next);
      const after = nodes[i + 1]?.id;
      return [next || !after ? { handle: 'next', label: 'next', target: next } : { handle: 'next', label: 'next', target: after, implicit: true }];
    }
  }
}

/** A random split's branch as the dashboard names it: A, B, … */
export const branchLetter = (j: number) => String.fromCharCode(65 + j);

/** Node `id`'s way out `handle` set to `target` (undefined: unset). */
export function setOut(nodes: WorkflowNode[], id: string, handle: string, target: string | undefined): WorkflowNode[] {
  return nodes.map((n) => {
    if (n.id !== id) return n;
    const branch = /^branch-(\d+)$/.exec(handle);
    if (branch) return { ...n, branches: branchesOf(n).map((b, j) => (j === Number(branch[1]) ? { ...b, next: target } : b)) };
    return { ...n, [handle]: target };
  });
}

/** The workflow without node `id`, and with every way out that led to it unset (none dangles). */
export function removeNode(nodes: WorkflowNode[], id: string): WorkflowNode[] {
  const rest = nodes.filter((n) => n.id !== id);
  return rest.reduce((all, n, i) => outsOf(rest, i).reduce((acc, o) => (!o.implicit && o.target === id ? setOut(acc, n.id, o.handle, undefined) : acc), all), rest);
}

/**
 * Node `id` made the first (where every enrolment starts). The list's order changes, so every
 * way out that was the list's next node is written first: each node keeps where it leads.
 */
export function makeFirst(nodes: WorkflowNode[], id: string): WorkflowNode[] {
  const written = nodes.map((n, i) => {
    const o = outsOf(nodes, i)[0];
    return o?.implicit ? { ...n, next: o.target } : n;
  });
  const node = written.find((n) => n.id === id);
  return node ? [node, ...written.filter((n) => n.id !== id)] : nodes;
}

/** A node id not used yet: `<type>-<n>`. */
function newNodeId(nodes: WorkflowNode[], type: NodeType): string {
  const ids = new Set(nodes.map((n) => n.id));
  let n = 1;
  while (ids.has(`${type}-${n}`)) n++;
  return `${type}-${n}`;
}

/** A new node of `type`, with what it cannot be without (a delay's minutes, a random split's two branches, a wait's timeout). */
export function newNode(nodes: WorkflowNode[], type: NodeType): WorkflowNode {
  const id = newNodeId(nodes, type);
  if (type === 'delay') return { id, type, minutes: 60 };
  if (type === 'random_split') return { id, type, branches: [{ weight: 50 }, { weight: 50 }] };
  if (type === 'wait_for_event') return { id, type, timeout: '2d' };
  return { id, type };
}

/** Where a node is drawn, when it was moved on the canvas (kept in the node: the API keeps unknown keys). */
type Position = { x: number; y: number };
const positionOf = (node: WorkflowNode): Position | undefined => {
  const p = node.position as Partial<Position> | undefined;
  return typeof p?.x === 'number' && typeof p.y === 'number' ? { x: p.x, y: p.y } : undefined;
};

/**
 * Where each node is drawn: where it was put, else by depth, the first node's row first and
 * each node a row below the deepest node leading to it (the graph has no cycle, or activation
 * refuses it; a cycle drawn while editing stops at the node count). Nodes nothing reaches go on
 * a row of their own below.
 */
export function layout(nodes: WorkflowNode[], width = 240, height = 150): Position[] {
  const index = new Map(nodes.map((n, i) => [n.id, i]));
  const depth = new Array<number>(nodes.length).fill(-1);
  if (nodes.length > 0) depth[0] = 0;
  // Longest-path depths by relaxation, bounded by the node count (so a cycle cannot loop it).
  for (let round = 0, changed = true; changed && round < nodes.length; round++) {
    changed = false;
    nodes.forEach((_, i) => {
      if (depth[i]! < 0) return;
      for (const o of outsOf(nodes, i)) {
        const j = o.target === undefined ? undefined : index.get(o.target);
        if (j !== undefined && depth[j]! < depth[i]! + 1) {
          depth[j] = depth[i]! + 1;
          changed = true;
        }
      }
    });
  }
  const deepest = Math.max(0, ...depth);
  const rows = new Map<number, number>();
  return nodes.map((n, i) => {
    const placed = positionOf(n);
    if (placed) return placed;
    const row = depth[i]! < 0 ? deepest + 1 : depth[i]!;
    const col = rows.get(row) ?? 0;
    rows.set(row, col + 1);
    return { x: col * width, y: row * height };
  });
}

/** What the server's refusal says of node `i` (`workflow_definition.nodes.<i>` and its fields). */
export function problemsOf(fields: Record<string, string>, i: number): string[] {
  const at = `workflow_definition.nodes.${i}`;
  return Object.entries(fields).flatMap(([f, m]) => (f === at || f.startsWith(`${at}.`) ? [f === at ? m : `${f.slice(at.length + 1)}: ${m}`] : []));
}

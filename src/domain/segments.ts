// Segments (docs/audiences.md): a saved condition tree whose members Herald keeps. A tree is
// a group `{all: [...]}` or `{any: [...]}` of nodes, each a group again or a leaf:
//   - a campaign condition `{field, operator, value}` (domain/conditions.ts);
//   - `{event: {name, count: {op, value}, within?}}`: how often the person performed `name`
//     (in the last `within`, e.g. "30d", "12h", "45m"), compared by op (gte, gt, lte, lt, eq);
//   - `{has_channel: push|email|sms}`: reachable there (an active device; an address and
//     consent active);
//   - `{in_list: list_id}`.
// Bounded (MAX_DEPTH, MAX_LEAVES) so a tree cannot make an unbounded SQL statement. Pure.
import type { FieldError } from './errors.js';
import { CONDITION_OPERATORS, COUNT_OPERATORS, isUuidText, type Condition } from './conditions.js';
import { JOB_STATES } from './campaigns.js';

/** A segment's state: a job (computing from scratch) while waiting or running, then ready, or failed. */
export const SEGMENT_STATES = [...JOB_STATES, 'ready', 'failed'] as const;
export type SegmentState = (typeof SEGMENT_STATES)[number];

/** Groups nested deeper than this are refused (the root group is depth 1). */
export const MAX_DEPTH = 10;
/** Trees with more leaves than this are refused. */
export const MAX_LEAVES = 200;
/** The longest `within` window: a year. */
const MAX_WITHIN_SECONDS = 366 * 86_400;

const COUNT_OPS = ['gte', 'gt', 'lte', 'lt', 'eq'] as const;
type CountOp = (typeof COUNT_OPS)[number];
const CHANNELS = ['push', 'email', 'sms'] as const;
type Reach = (typeof CHANNELS)[number];

interface EventLeaf {
  event: { name: string; count: { op: CountOp; value: number }; within?: string };
}
export type SegmentNode = { all: SegmentNode[] } | { any: SegmentNode[] } | Condition | EventLeaf | { has_channel: Reach } | { in_list: string };
export type SegmentTree = { all: SegmentNode[] } | { any: SegmentNode[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const UNIT_SECONDS: Readonly<Record<string, number>> = { m: 60, h: 3_600, d: 86_400 };

/** A `within` window in seconds ("30d", "12h", "45m"), or undefined when it is not one. */
export function windowSeconds(within: string): number | undefined {
  const m = /^([1-9]\d{0,5})([mhd])$/.exec(within);
  if (!m) return undefined;
  const s = Number(m[1]) * UNIT_SECONDS[m[2]!]!;
  return s <= MAX_WITHIN_SECONDS ? s : undefined;
}

/** The lists a tree names (each must be the workspace's: the handler checks). */
export function listsNamed(node: SegmentNode): string[] {
  if ('all' in node) return node.all.flatMap(listsNamed);
  if ('any' in node) return node.any.flatMap(listsNamed);
  return 'in_list' in node ? [node.in_list] : [];
}

/**
 * The event names whose events can change the tree's answer for a person: its event leaves' and
 * its conditions' performed_count_* (whose field names the event). An event of another name
 * leaves a person's membership as it was (a tracked event changes no trait, person field,
 * device, list or consent).
 */
export function eventNamesRead(node: SegmentNode): string[] {
  if ('all' in node) return node.all.flatMap(eventNamesRead);
  if ('any' in node) return node.any.flatMap(eventNamesRead);
  if ('event' in node) return [node.event.name];
  if ('field' in node && (COUNT_OPERATORS as readonly string[]).includes(node.operator)) return [node.field];
  return [];
}

/** Whether the tree has an event leaf (its members change with events). */
export function countsEvents(node: SegmentNode): boolean {
  if ('all' in node) return node.all.some(countsEvents);
  if ('any' in node) return node.any.some(countsEvents);
  return 'event' in node;
}

/**
 * What is wrong with a condition tree, each problem naming its path (`conditions.all.0.event.name`);
 * empty when it is a valid tree. The size limits are checked first and alone: a tree over them
 * is not walked further.
 */
export function segmentTreeProblems(tree: unknown, at = 'conditions'): FieldError[] {
  const size = measure(tree, 1);
  if (size.depth > MAX_DEPTH) return [{ field: at, message: `nests groups more than ${MAX_DEPTH} deep; the limit is ${MAX_DEPTH}` }];
  if (size.leaves > MAX_LEAVES) return [{ field: at, message: `has more than ${MAX_LEAVES} conditions; the limit is ${MAX_LEAVES}` }];
  if (!isObject(tree) || !isGroup(tree)) return [{ field: at, message: 'must be a group {all: [...]} or {any: [...]}' }];
  const problems: FieldError[] = [];
  node(tree, at, problems);
  return problems;
}

const isGroup = (v: Record<string, unknown>) => Object.keys(v).length === 1 && (Array.isArray(v.all) || Array.isArray(v.any));

/** Depth of groups and count of leaves, stopping once past the limits (a hostile tree is not walked whole). */
function measure(v: unknown, depth: number): { depth: number; leaves: number } {
  if (!isObject(v) || !isGroup(v)) return { depth: depth - 1, leaves: 1 };
  if (depth > MAX_DEPTH) return { depth, leaves: 0 };
  const children = (v.all ?? v.any) as unknown[];
  let deepest = depth;
  let leaves = 0;
  for (const c of children) {
    const m = measure(c, depth + 1);
    deepest = Math.max(deepest, m.depth);
    leaves += m.leaves;
    if (deepest > MAX_DEPTH || leaves > MAX_LEAVES) break;
  }
  return { depth: deepest, leaves };
}

function node(v: unknown, at: string, problems: FieldError[]): void {
  const problem = (field: string, message: string) => problems.push({ field: `${at}${field ? `.${field}` : ''}`, message });
  if (!isObject(v)) return void problem('', 'must be a group or a condition object');
  if (isGroup(v)) {
    const key = Array.isArray(v.all) ? 'all' : 'any';
    const children = v[key] as unknown[];
    if (children.length === 0) return void problem(key, 'must hold at least one condition');
    children.forEach((c, i) => node(c, `${at}.${key}.${i}`, problems));
    return;
  }
  if ('event' in v) return eventLeaf(v.event, `${at}.event`, problems);
  if ('has_channel' in v) {
    if (!(CHANNELS as readonly string[]).includes(v.has_channel as string)) problem('has_channel', `must be one of ${CHANNELS.join(', ')}`);
    return;
  }
  if ('in_list' in v) {
    if (typeof v.in_list !== 'string' || !isUuidText(v.in_list)) problem('in_list', 'must be a list id (a UUID)');
    return;
  }
  if ('operator' in v || 'field' in v) return conditionLeaf(v, at, problems);
  problem('', 'must be a group {all|any}, a condition {field, operator, value}, {event}, {has_channel} or {in_list}');
}

function eventLeaf(e: unknown, at: string, problems: FieldError[]): void {
  if (!isObject(e)) return void problems.push({ field: at, message: 'must be {name, count: {op, value}, within?}' });
  if (typeof e.name !== 'string' || e.name.length === 0 || e.name.length > 255) problems.push({ field: `${at}.name`, message: 'must be an event name (1 to 255 characters)' });
  const c = e.count;
  if (!isObject(c) || !(COUNT_OPS as readonly string[]).includes(c.op as string) || !Number.isSafeInteger(c.value) || (c.value as number) < 0) {
    problems.push({ field: `${at}.count`, message: `must be {op, value} with op one of ${COUNT_OPS.join(', ')} and value an integer from 0` });
  }
  if (e.within !== undefined && (typeof e.within !== 'string' || windowSeconds(e.within) === undefined)) {
    problems.push({ field: `${at}.within`, message: 'must be a window such as "30d", "12h" or "45m", at most 366 days' });
  }
}

function conditionLeaf(c: Record<string, unknown>, at: string, problems: FieldError[]): void {
  const { field, operator } = c;
  if (typeof operator !== 'string' || !(CONDITION_OPERATORS as readonly string[]).includes(operator) || (COUNT_OPERATORS as readonly string[]).includes(operator)) {
    problems.push({ field: `${at}.operator`, message: 'is not a known operator (event counts are {event: {name, count}} leaves here)' });
    return;
  }
  if (typeof field !== 'string' || !(field.startsWith('traits.') || field.startsWith('person.')) || field.endsWith('.')) {
    problems.push({ field: `${at}.field`, message: 'must be traits.<path> or person.<field>' });
  }
  if ((operator === 'in' || operator === 'not_in') && !Array.isArray(c.value)) problems.push({ field: `${at}.value`, message: 'must be an array' });
}

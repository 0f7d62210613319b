// A segment's condition tree (docs/audiences.md, "Segments") as edited: a group matching all or
// any of its rows. Trait and person conditions are the campaign audience's rows (conditions.tsx);
// beside them, an event count in a window, a channel the person is reachable on, a list they are
// in, and nested groups. A group is sent as its conditions first, then its other rows, so the
// API's error paths (`conditions.all.2.event.name`) find the row they name.
import { Conditions, fromCondition, toCondition, type Cond } from './conditions';

const COUNT_OPS = ['gte', 'gt', 'eq', 'lte', 'lt'] as const;
const COUNT_LABEL: Record<string, string> = { gte: 'at least', gt: 'more than', eq: 'exactly', lte: 'at most', lt: 'fewer than' };
const CHANNELS = ['email', 'push', 'sms'] as const;
/** The API refuses groups nested deeper (the root is depth 1). */
const MAX_DEPTH = 10;

export type Row =
  | { kind: 'event'; name: string; op: string; value: string; within: string }
  | { kind: 'channel'; channel: string }
  | { kind: 'list'; listId: string }
  | { kind: 'group'; group: Group };
export interface Group {
  match: 'all' | 'any';
  conds: Cond[];
  rows: Row[];
}
type TreeNode = Record<string, unknown>;

export const emptyGroup = (): Group => ({ match: 'all', conds: [], rows: [] });

export function toTree(g: Group): TreeNode {
  return { [g.match]: [...g.conds.map(toCondition), ...g.rows.map(toNode)] };
}

function toNode(r: Row): TreeNode {
  switch (r.kind) {
    case 'group': return toTree(r.group);
    case 'channel': return { has_channel: r.channel };
    case 'list': return { in_list: r.listId };
    case 'event': {
      const within = r.within.trim();
      return { event: { name: r.name.trim(), count: { op: r.op, value: Number(r.value) }, ...(within ? { within } : {}) } };
    }
  }
}

const isNode = (v: unknown): v is TreeNode => typeof v === 'object' && v !== null && !Array.isArray(v);

export function fromTree(raw: unknown): Group {
  const t = isNode(raw) ? raw : {};
  const match = Array.isArray(t.any) ? 'any' : 'all';
  const children = (Array.isArray(t[match]) ? t[match] : []) as unknown[];
  const g: Group = { match, conds: [], rows: [] };
  for (const c of children) {
    if (!isNode(c)) continue;
    if (Array.isArray(c.all) || Array.isArray(c.any)) g.rows.push({ kind: 'group', group: fromTree(c) });
    else if (isNode(c.event)) {
      const count = isNode(c.event.count) ? c.event.count : {};
      g.rows.push({ kind: 'event', name: String(c.event.name ?? ''), op: String(count.op ?? 'gte'), value: String(count.value ?? ''), within: typeof c.event.within === 'string' ? c.event.within : '' });
    } else if (typeof c.has_channel === 'string') g.rows.push({ kind: 'channel', channel: c.has_channel });
    else if (typeof c.in_list === 'string') g.rows.push({ kind: 'list', listId: c.in_list });
    else g.conds.push(fromCondition(c));
  }
  return g;
}

/**
 * One group's editor: what it must match, its conditions, its other rows and buttons adding
 * each kind. `at` is the API's path of the group (`conditions`, `conditions.all.3`); `name`
 * labels its fields apart from other groups' (`Condition`, `Group 2`).
 */
export function GroupEditor({ group, set, at, name, fields, lists, depth = 1 }: {
  group: Group;
  set: (g: Group) => void;
  at: string;
  name: string;
  fields: Record<string, string>;
  lists: { id: string; name: string }[];
  depth?: number;
}) {
  const path = `${at}.${group.match}`;
  const id = path.replaceAll('.', '-');
  const setRow = (j: number, r: Row) => set({ ...group, rows: group.rows.map((x, k) => (k === j ? r : x)) });
  const add = (r: Row) => set({ ...group, rows: [...group.rows, r] });
  const err = fields[at] ?? fields[path];
  return (
    <div className={depth > 1 ? 'group nested' : 'group'}>
      <div className="field">
        <label htmlFor={`${id}-match`}>{name}: people must match</label>
        <select id={`${id}-match`} value={group.match} onChange={(e) => set({ ...group, match: e.target.value as 'all' | 'any' })}>
          <option value="all">all of these</option>
          <option value="any">any of these</option>
        </select>
      </div>
      {err && <p className="error">{err}</p>}
      {group.conds.length + group.rows.length === 0 && <p className="muted">Nothing yet: add a condition below.</p>}
      <Conditions conds={group.conds} set={(conds) => set({ ...group, conds })} at={path} fields={fields} eventFields={false} label={`${name} condition`} valuesOnly />
      <ol className="plain">
        {group.rows.map((r, j) => {
          const here = `${path}.${group.conds.length + j}`;
          const rid = here.replaceAll('.', '-');
          const n = `${name} ${r.kind === 'group' ? 'group' : 'row'} ${j + 1}`;
          const rowErr = Object.entries(fields).filter(([f]) => f === here || (f.startsWith(`${here}.`) && r.kind !== 'group')).map(([, m]) => m);
          return (
            <li key={j} className={r.kind === 'group' ? '' : 'inline cond'}>
              {r.kind === 'event' && (
                <>
                  <div className="field">
                    <label htmlFor={`${rid}-name`}>{n}: event name</label>
                    <input id={`${rid}-name`} value={r.name} onChange={(e) => setRow(j, { ...r, name: e.target.value })} placeholder="purchase" />
                  </div>
                  <div className="field">
                    <label htmlFor={`${rid}-op`}>{n}: performed</label>
                    <select id={`${rid}-op`} value={r.op} onChange={(e) => setRow(j, { ...r, op: e.target.value })}>
                      {COUNT_OPS.map((o) => <option key={o} value={o}>{COUNT_LABEL[o]}</option>)}
                    </select>
                  </div>
                  <div className="field">
                    <label htmlFor={`${rid}-value`}>{n}: times</label>
                    <input id={`${rid}-value`} type="number" min={0} step={1} value={r.value} onChange={(e) => setRow(j, { ...r, value: e.target.value })} />
                  </div>
                  <div className="field">
                    <label htmlFor={`${rid}-within`}>{n}: in the last</label>
                    <input id={`${rid}-within`} value={r.within} onChange={(e) => setRow(j, { ...r, within: e.target.value })} placeholder="ever" aria-describedby={`${rid}-hint`} />
                  </div>
                </>
              )}
              {r.kind === 'channel' && (
                <div className="field">
                  <label htmlFor={`${rid}-channel`}>{n}: reachable by</label>
                  <select id={`${rid}-channel`} value={r.channel} onChange={(e) => setRow(j, { ...r, channel: e.target.value })}>
                    {CHANNELS.map((c) => <option key={c} value={c}>{c}</option>)}
                  </select>
                </div>
              )}
              {r.kind === 'list' && (
                <div className="field">
                  <label htmlFor={`${rid}-list`}>{n}: in the list</label>
                  <select id={`${rid}-list`} value={r.listId} onChange={(e) => setRow(j, { ...r, listId: e.target.value })}>
                    {r.listId === '' && <option value="">Choose a list</option>}
                    {lists.map((l) => <option key={l.id} value={l.id}>{l.name}</option>)}
                    {r.listId !== '' && !lists.some((l) => l.id === r.listId) && <option value={r.listId}>{r.listId}</option>}
                  </select>
                </div>
              )}
              {r.kind === 'group' && (
                <fieldset>
                  <legend>{n}</legend>
                  <GroupEditor group={r.group} set={(g) => setRow(j, { kind: 'group', group: g })} at={here} name={n} fields={fields} lists={lists} depth={depth + 1} />
                </fieldset>
              )}
              <button type="button" className="danger" onClick={() => set({ ...group, rows: group.rows.filter((_, k) => k !== j) })} aria-label={`Remove ${n.toLowerCase()}`}>Remove</button>
              {r.kind === 'event' && <small id={`${rid}-hint`} className="muted hint">A window such as 30d, 12h or 45m (at most 366 days); empty: ever.</small>}
              {rowErr.map((m) => <small key={m} className="error">{m}</small>)}
            </li>
          );
        })}
      </ol>
      <div className="inline">
        <button type="button" onClick={() => add({ kind: 'event', name: '', op: 'gte', value: '1', within: '30d' })}>Add event count<span className="sr-only"> to {name.toLowerCase()}</span></button>
        <button type="button" onClick={() => add({ kind: 'channel', channel: 'email' })}>Add reachability<span className="sr-only"> to {name.toLowerCase()}</span></button>
        <button type="button" onClick={() => add({ kind: 'list', listId: lists[0]?.id ?? '' })}>Add list membership<span className="sr-only"> to {name.toLowerCase()}</span></button>
        {depth < MAX_DEPTH && <button type="button" onClick={() => add({ kind: 'group', group: emptyGroup() })}>Add group<span className="sr-only"> to {name.toLowerCase()}</span></button>}
      </div>
    </div>
  );
}

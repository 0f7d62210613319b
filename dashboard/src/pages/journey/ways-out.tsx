// A journey step's own settings (a split's condition, a wait's event and timeout, a random
// split's weights) and, for every step of a journey, where each way out leads: a select per
// way out, so the list view (and the keyboard) connects what the canvas connects by dragging.
import { useState } from 'react';
import { Field } from '../../ui';
import { Conditions, fromCondition, toCondition, type Cond } from '../conditions';
import { branchLetter, branchesOf, outsOf, setOut, stepName, type WorkflowNode } from './graph';

/** A split's condition as rows: one condition, or an audience's filters (a segment is kept as it is). */
function condsOf(condition: unknown): Cond[] {
  const c = (condition ?? {}) as { field?: unknown; filters?: unknown };
  if (typeof c.field === 'string') return [fromCondition(c)];
  return Array.isArray(c.filters) ? c.filters.map(fromCondition) : [];
}

export function JourneyStep({ node, i, name, change, fields }: {
  node: WorkflowNode;
  i: number;
  name: string;
  change: (patch: Record<string, unknown>) => void;
  fields: Record<string, string>;
}) {
  const at = `workflow_definition.nodes.${i}`;
  // Rows as typed (a value's text is read only when written back).
  const [conds, setConds] = useState(() => condsOf(node.type === 'split' ? node.condition : node.filters));
  if (node.type === 'exit') return <p className="muted">Ends the journey: nothing after it runs.</p>;
  if (node.type === 'split') {
    const segment = (node.condition as { segment_id?: unknown } | undefined)?.segment_id;
    if (typeof segment === 'string') return <p>Splits on the segment <code>{segment}</code>: yes for its members.</p>;
    const match = (node.condition as { match?: unknown } | undefined)?.match === 'any' ? 'any' : 'all';
    return (
      <>
        <p className="muted">Evaluated for each person when they reach this step: yes when they match.</p>
        <Conditions conds={conds} set={(c) => {
          setConds(c);
          change({ condition: c.length > 0 ? { match, filters: c.map(toCondition) } : undefined });
        }} at={`${at}.condition.filters`} fields={fields} eventFields={false} label={`${name}: condition`} />
        {fields[`${at}.condition`] && <p className="error">{fields[`${at}.condition`]}</p>}
      </>
    );
  }
  if (node.type === 'wait_for_event') {
    return (
      <>
        <div className="inline">
          <Field label={`${name}: event name`} value={String(node.event_name ?? '')} error={fields[`${at}.event_name`]} onChange={(e) => change({ event_name: e.target.value })} placeholder="purchase_completed" />
          <Field label={`${name}: timeout`} value={String(node.timeout ?? '')} error={fields[`${at}.timeout`]} onChange={(e) => change({ timeout: e.target.value })} hint="How long to wait: 30m, 6h, 2d" />
        </div>
        <Conditions conds={conds} set={(c) => {
          setConds(c);
          change({ filters: c.length > 0 ? c.map(toCondition) : undefined });
        }} at={`${at}.filters`} fields={fields} eventFields label={`${name}: event filter`} />
      </>
    );
  }
  if (node.type !== 'random_split') return null;
  const branches = branchesOf(node);
  const setBranches = (b: typeof branches) => change({ branches: b });
  return (
    <>
      <p className="muted">Each person takes one branch, by weight: the share of a branch is its weight over the sum of weights.</p>
      <div className="inline">
        {branches.map((b, j) => (
          <Field key={j} label={`${name}: branch ${branchLetter(j)} weight`} type="number" min={0} step="any" value={b.weight === undefined ? '' : String(b.weight)} error={fields[`${at}.branches.${j}.weight`]}
            onChange={(e) => setBranches(branches.map((x, k) => (k === j ? { ...x, weight: e.target.value === '' ? undefined : Number(e.target.value) } : x)))} />
        ))}
      </div>
      <div className="inline">
        {branches.length < 20 && <button type="button" onClick={() => setBranches([...branches, { weight: 50 }])}>Add a branch<span className="sr-only"> to {name}</span></button>}
        {branches.length > 2 && <button type="button" className="danger" onClick={() => setBranches(branches.slice(0, -1))}>Remove branch {branchLetter(branches.length - 1)}<span className="sr-only"> of {name}</span></button>}
      </div>
      {fields[`${at}.branches`] && <p className="error">{fields[`${at}.branches`]}</p>}
    </>
  );
}

/** Where each of step `i`'s ways out leads, a select each. */
export function WaysOut({ nodes, i, name, set, fields }: { nodes: WorkflowNode[]; i: number; name: string; set: (n: WorkflowNode[]) => void; fields: Record<string, string> }) {
  const node = nodes[i];
  const outs = outsOf(nodes, i);
  if (!node || outs.length === 0) return null;
  const at = `workflow_definition.nodes.${i}`;
  return (
    <div className="inline ways-out">
      {outs.map((o) => {
        const id = `${node.id}-out-${o.handle}`;
        const branch = /^branch-(\d+)$/.exec(o.handle);
        const error = fields[branch ? `${at}.branches.${branch[1]}.next` : `${at}.${o.handle}`];
        const label = o.handle === 'next' ? 'then' : branch ? `branch ${branchLetter(Number(branch[1]))} leads to` : `${o.label} leads to`;
        return (
          <div className="field" key={o.handle}>
            <label htmlFor={id}>{name}: {label}</label>
            <select id={id} value={o.implicit ? '' : (o.target ?? '')} aria-invalid={error ? true : undefined} onChange={(e) => set(setOut(nodes, node.id, o.handle, e.target.value || undefined))}>
              <option value="">{o.handle !== 'next' ? 'Not set' : nodes[i + 1] ? 'The next step in the list' : 'The end of the journey'}</option>
              {nodes.map((n, j) => (j === i ? null : <option key={n.id} value={n.id}>{stepName(n, j)}: {n.id}</option>))}
            </select>
            {error && <small className="error">{error}</small>}
          </div>
        );
      })}
    </div>
  );
}

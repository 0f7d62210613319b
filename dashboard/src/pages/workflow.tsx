// The workflow editor (docs/campaigns-runtime.md; docs/channels.md): an ordered list of steps,
// added, moved up and down (buttons, so the keyboard can), removed; each message node's content
// written here or taken from a template of its channel; bypass_frequency_cap on push nodes. A
// journey's steps name where each way out leads (journey/ways-out.tsx); the canvas
// (journey/canvas.tsx) edits the same nodes, its side panel with StepFields.
// Each field shows the API's error for it (`workflow_definition.nodes.<i>.<field>`).
import { useState } from 'react';
import type { Schemas } from '../api';
import { Field, TextField } from '../ui';
import { NODE_LABEL, NODE_TYPES, type Channel } from '../enums';
import { PersonPicker, RenderedMessage, TEMPLATE_FIELDS, usePreview } from './authoring-parts';
import { WebhookStep } from './webhook-step';
import { isJourney, newNode, stepName, type WorkflowNode } from './journey/graph';
import { JourneyStep, WaysOut } from './journey/ways-out';

export { stepName, type WorkflowNode };
type Template = Schemas['MessageTemplate'];

const LIQUID_HINT = 'Liquid: {{ person.first_name }}, {{ traits.plan }}, {{ event.<parameter> }}, {{ trigger.<field> }}';

/** What the API is sent: empty texts dropped. */
export function cleanNode(node: WorkflowNode): WorkflowNode {
  const out: WorkflowNode = { id: node.id, type: node.type };
  for (const [k, v] of Object.entries(node)) if (v !== '' && v !== undefined && v !== false) out[k] = v;
  return out;
}

/** The palette: a button per step type, each adding one (the list's and the canvas's). */
export function AddStep({ nodes, add }: { nodes: WorkflowNode[]; add: (n: WorkflowNode) => void }) {
  return (
    <div className="inline palette" role="group" aria-label="Add a step">
      {NODE_TYPES.map((t) => (
        <button key={t} type="button" onClick={() => add(newNode(nodes, t))}>Add {t === 'delay' ? 'a delay' : NODE_LABEL[t]}</button>
      ))}
    </div>
  );
}

export function Workflow({ workspaceId, nodes, set, templates, fields }: {
  workspaceId: string;
  nodes: WorkflowNode[];
  set: (n: WorkflowNode[]) => void;
  templates: Template[];
  fields: Record<string, string>;
}) {
  const move = (i: number, by: number) => {
    const next = nodes.slice();
    const [n] = next.splice(i, 1);
    if (!n) return;
    next.splice(i + by, 0, n);
    set(next);
  };
  const all = fields['workflow_definition.nodes'] ?? fields['workflow_definition'];
  const journey = isJourney(nodes);
  return (
    <>
      {all && <p className="error">{all}</p>}
      {nodes.length === 0 && <p className="muted">No steps yet: add a message below. Steps run in order, each person going through them one after the other.</p>}
      <ol className="nodes">
        {nodes.map((node, i) => {
          const name = stepName(node, i);
          return (
            <li key={node.id} className="card node" aria-label={name}>
              <div className="node-head">
                <h3>{name} <code>{node.id}</code></h3>
                <div className="actions">
                  <button type="button" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move step ${i + 1} up`}>Up</button>
                  <button type="button" disabled={i === nodes.length - 1} onClick={() => move(i, 1)} aria-label={`Move step ${i + 1} down`}>Down</button>
                  <button type="button" className="danger" onClick={() => set(nodes.filter((_, j) => j !== i))} aria-label={`Remove step ${i + 1}`}>Remove</button>
                </div>
              </div>
              <StepFields workspaceId={workspaceId} nodes={nodes} i={i} set={set} templates={templates} fields={fields} journey={journey} />
            </li>
          );
        })}
      </ol>
      <AddStep nodes={nodes} add={(n) => set([...nodes, n])} />
    </>
  );
}

/**
 * Step `i`'s settings: its problems, its content (a message's, a delay's minutes, a webhook's
 * call, a journey step's condition or event), and with `journey` where each way out leads.
 */
export function StepFields({ workspaceId, nodes, i, set, templates, fields, journey }: {
  workspaceId: string;
  nodes: WorkflowNode[];
  i: number;
  set: (n: WorkflowNode[]) => void;
  templates: Template[];
  fields: Record<string, string>;
  journey: boolean;
}) {
  const node = nodes[i];
  if (!node) return null;
  const change = (patch: Record<string, unknown>) => set(nodes.map((n, j) => (j === i ? { ...n, ...patch } : n)));
  const at = (k: string) => fields[`workflow_definition.nodes.${i}.${k}`];
  const name = stepName(node, i);
  const fromTemplate = node.template_id !== undefined;
  const own = templates.filter((t) => t.channel === node.type);
  return (
    <>
      {fields[`workflow_definition.nodes.${i}`] && <p className="error">{fields[`workflow_definition.nodes.${i}`]}</p>}
      {at('id') && <p className="error">{at('id')}</p>}
      {node.type === 'delay' ? (
        <Field label={`${name}: wait (minutes)`} type="number" min={0} max={525600} step={1} value={String(node.minutes ?? '')} error={at('minutes')}
          onChange={(e) => change({ minutes: e.target.value === '' ? undefined : Number(e.target.value) })} />
      ) : node.type === 'webhook' ? (
        <WebhookStep workspaceId={workspaceId} node={node} name={name} at={at} change={change} />
      ) : node.type === 'split' || node.type === 'wait_for_event' || node.type === 'random_split' || node.type === 'exit' ? (
        <JourneyStep node={node} i={i} name={name} change={change} fields={fields} />
      ) : (
        <>
          <fieldset className="inline">
            <legend>{name}: content</legend>
            <label className="check">
              <input type="radio" name={`${node.id}-source`} checked={!fromTemplate} onChange={() => change({ template_id: undefined })} /> Written here
            </label>
            <label className="check">
              <input type="radio" name={`${node.id}-source`} checked={fromTemplate}
                onChange={() => change({ template_id: own[0]?.id ?? '', ...Object.fromEntries(TEMPLATE_FIELDS[node.type as Channel].map((c) => [c.key, undefined])) })} /> From a template
            </label>
          </fieldset>
          {fromTemplate ? (
            own.length === 0 ? (
              <p className="error">There is no {NODE_LABEL[node.type]} template yet: create one on the Templates page, or write the content here.</p>
            ) : (
              <div className="field">
                <label htmlFor={`${node.id}-template`}>{name}: template</label>
                <select id={`${node.id}-template`} value={node.template_id} onChange={(e) => change({ template_id: e.target.value })} aria-invalid={at('template_id') ? true : undefined}>
                  {own.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
                </select>
                {at('template_id') && <small className="error">{at('template_id')}</small>}
              </div>
            )
          ) : (
            TEMPLATE_FIELDS[node.type].map((c) => {
              const props = {
                label: `${name}: ${c.label}`,
                value: String(node[c.key] ?? ''),
                error: at(c.key),
                hint: c.hint ?? (c.key === 'title' || c.key === 'body' || c.key === 'subject' ? LIQUID_HINT : undefined),
              };
              return c.area ? (
                <TextField key={c.key} {...props} rows={c.key === 'html' ? 6 : 3} onChange={(e) => change({ [c.key]: e.target.value })} />
              ) : (
                <Field key={c.key} {...props} onChange={(e) => change({ [c.key]: e.target.value })} />
              );
            })
          )}
          {node.type === 'push' && (
            <label className="check">
              <input type="checkbox" checked={node.bypass_frequency_cap === true} onChange={(e) => change({ bypass_frequency_cap: e.target.checked })} /> Bypass the
              frequency caps (the daily and rolling caps of the send policy; quiet hours still apply)
            </label>
          )}
          <StepPreview workspaceId={workspaceId} node={node as WorkflowNode & { type: Channel }} templates={templates} name={name} />
        </>
      )}
      {journey && <WaysOut nodes={nodes} i={i} name={name} set={set} fields={fields} />}
    </>
  );
}

/** A message step rendered by Herald for a picked person, as written now (its template's fields under its own); shown on demand. */
function StepPreview({ workspaceId, node, templates, name }: { workspaceId: string; node: WorkflowNode & { type: Channel }; templates: Template[]; name: string }) {
  const [open, setOpen] = useState(false);
  return (
    <div>
      <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? 'Hide the preview' : 'Preview'}<span className="sr-only"> of {name}</span></button>
      {open && <StepRender workspaceId={workspaceId} node={node} templates={templates} name={name} />}
    </div>
  );
}

function StepRender({ workspaceId, node, templates, name }: { workspaceId: string; node: WorkflowNode & { type: Channel }; templates: Template[]; name: string }) {
  const template = node.template_id ? templates.find((t) => t.id === node.template_id) : undefined;
  const content: Record<string, unknown> = {};
  for (const { key } of TEMPLATE_FIELDS[node.type]) {
    const v = node[key] ?? template?.[key as keyof Template];
    if (typeof v === 'string' && v !== '') content[key] = v;
  }
  const preview = usePreview(workspaceId, node.type, content);
  return (
    <div className="step-preview">
      <PersonPicker workspaceId={workspaceId} label={`${name}: preview for`} {...preview.picker} />
      {preview.error ? <p className="error">{preview.error}</p> : preview.rendered ? <RenderedMessage channel={node.type} rendered={preview.rendered} /> : <p className="muted">Rendering…</p>}
    </div>
  );
}

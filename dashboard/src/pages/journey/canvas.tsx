// The journey canvas (docs/journey-canvas.md), loaded on demand (React.lazy) so @xyflow/react
// stays out of the initial bundle: the workflow's nodes drawn as a graph from the campaign's
// trigger, added from the palette, connected by dragging a way out (next, yes, no, event,
// timeout, a random split's branches) onto a step, the selected step's settings in the side
// panel (the list's StepFields), the server's problems and the running campaign's per-node
// counts on each node. Delete or Backspace removes what is selected; the side panel's selects
// connect from the keyboard. Positions a step was moved to are kept in its node (`position`).
import { useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import {
  Background, Controls, Handle, MarkerType, Position, ReactFlow, ReactFlowProvider, useReactFlow,
  type Connection, type Edge, type Node, type NodeChange, type NodeProps,
} from '@xyflow/react';
import '@xyflow/react/dist/base.css';
import './canvas.css';
import type { Schemas } from '../../api';
import { NODE_LABEL } from '../../enums';
import { AddStep, StepFields } from '../workflow';
import { branchLetter, layout, makeFirst, outsOf, problemsOf, removeNode, setOut, stepName, type NodeStats, type Out, type WorkflowNode } from './graph';

type Template = Schemas['MessageTemplate'];

type StepData = { name: string; node: WorkflowNode; outs: Out[]; problems: string[]; stats?: NodeStats[string] };
type StartData = { trigger: string };
const START = '__start';
const FIT = { padding: 0.15, maxZoom: 1 };

/** What a step does, in a line on its node. */
function summary(n: WorkflowNode): string {
  const c = n.condition as { field?: string; filters?: { field?: string }[]; segment_id?: string } | undefined;
  switch (n.type) {
    case 'split':
      return c?.segment_id ? 'on a segment' : c?.field ?? c?.filters?.map((f) => f.field).join(', ') ?? 'no condition yet';
    case 'wait_for_event':
      return `${String(n.event_name ?? 'an event')}, at most ${String(n.timeout ?? '?')}`;
    case 'delay':
      return `${String(n.minutes ?? '?')} min`;
    case 'exit':
      return 'the journey ends';
    case 'random_split':
      return 'by weight';
    case 'webhook':
      return String(n.url ?? 'no URL yet');
    default:
      return n.template_id ? 'from a template' : String(n.subject ?? n.title ?? n.body ?? n.text ?? (n.html ? 'HTML' : 'no content yet'));
  }
}

function StepNode({ data, selected }: NodeProps<Node<StepData>>) {
  const { name, node, outs, problems, stats } = data;
  return (
    <div className={`flow-node${selected ? ' selected' : ''}${problems.length > 0 ? ' invalid' : ''}`}>
      <Handle type="target" position={Position.Top} />
      <strong>{NODE_LABEL[node.type]}</strong> <code>{node.id}</code>
      <div className="flow-summary">{summary(node)}</div>
      {stats && <div className="flow-stats">{stats.entered} entered · {stats.completed} completed</div>}
      {problems.map((p) => <div key={p} className="error">{p}</div>)}
      <span className="sr-only">{name}</span>
      <div className="flow-outs">
        {outs.map((o, j) => (
          <span key={o.handle} className="flow-out">
            {o.label}
            <Handle type="source" id={o.handle} position={Position.Bottom} style={{ left: `${((j + 1) * 100) / (outs.length + 1)}%` }} />
          </span>
        ))}
      </div>
    </div>
  );
}

function StartNode({ data }: NodeProps<Node<StartData>>) {
  return (
    <div className="flow-node flow-start">
      <strong>Trigger</strong> <span>{data.trigger}</span>
      <Handle type="source" id="next" position={Position.Bottom} />
    </div>
  );
}

const NODE_TYPES = { step: StepNode, start: StartNode };

export default function JourneyCanvas(props: CanvasProps) {
  return (
    <ReactFlowProvider>
      <Canvas {...props} />
    </ReactFlowProvider>
  );
}

type CanvasProps = {
  workspaceId: string;
  trigger: string;
  nodes: WorkflowNode[];
  set: (n: WorkflowNode[]) => void;
  templates: Template[];
  fields: Record<string, string>;
  stats?: NodeStats;
};

function Canvas({ workspaceId, trigger, nodes, set, templates, fields, stats }: CanvasProps) {
  const [selected, setSelected] = useState<string | null>(null);
  const [selectedEdges, setSelectedEdges] = useState<string[]>([]);
  // Where a step being dragged is now (written into its node when it is let go).
  const [drag, setDrag] = useState<{ id: string; x: number; y: number } | null>(null);
  const { fitView } = useReactFlow();

  const placed = useMemo(() => layout(nodes), [nodes]);
  // Each step's size as xyflow measured it, handed back with the step: a node given without it
  // is measured anew, its edges not drawn (and so unfocused) until then.
  const sizes = useRef(new Map<string, { width: number; height: number }>());
  const flowNodes = useMemo<Node[]>(() => {
    const first = placed[0] ?? { x: 0, y: 0 };
    const start: Node<StartData> = { id: START, type: 'start', position: { x: first.x, y: first.y - 110 }, data: { trigger }, deletable: false, ariaLabel: `Trigger: ${trigger}`, measured: sizes.current.get(START) };
    return [
      start,
      ...nodes.map((n, i): Node<StepData> => {
        const name = stepName(n, i);
        const problems = problemsOf(fields, i);
        return {
          id: n.id,
          type: 'step',
          position: drag?.id === n.id ? { x: drag.x, y: drag.y } : placed[i]!,
          measured: sizes.current.get(n.id),
          selected: n.id === selected,
          data: { name, node: n, outs: outsOf(nodes, i), problems, stats: stats?.[n.id] },
          ariaLabel: `${name}: ${n.id}, ${summary(n)}${problems.length > 0 ? `; problems: ${problems.join('; ')}` : ''}`,
        };
      }),
    ];
  }, [nodes, placed, drag, selected, fields, stats, trigger]);

  const edges = useMemo<Edge[]>(() => {
    const out: Edge[] = nodes[0] ? [{ id: `${START}:next`, source: START, sourceHandle: 'next', target: nodes[0].id, deletable: false, markerEnd: { type: MarkerType.ArrowClosed } }] : [];
    nodes.forEach((n, i) => {
      for (const o of outsOf(nodes, i)) {
        if (!o.target || !nodes.some((m) => m.id === o.target)) continue;
        const branch = /^branch-(\d+)$/.exec(o.handle);
        const took = stats?.[n.id]?.took?.[o.target];
        const label = `${branch ? branchLetter(Number(branch[1])) : o.handle === 'next' ? '' : o.label}${took !== undefined ? ` ${took}` : ''}`;
        const id = `${n.id}:${o.handle}`;
        out.push({
          id, source: n.id, sourceHandle: o.handle, target: o.target, label: label || undefined, selected: selectedEdges.includes(id),
          // The list's next step: drawn dashed, and not removable (it is the list's order).
          ...(o.implicit ? { className: 'implicit', deletable: false, selectable: false } : {}),
          markerEnd: { type: MarkerType.ArrowClosed },
        });
      }
    });
    return out;
  }, [nodes, stats, selectedEdges]);

  // The graph is fitted into view again when it grows (a step added, the layout deeper or
  // wider); a step added only once it is measured (its size known), at its first dimensions.
  const refit = useRef(false);
  const shape = useRef('');
  const count = useRef(nodes.length);
  const extent = `${Math.max(0, ...placed.map((p) => p.x))}:${Math.max(0, ...placed.map((p) => p.y))}`;
  useEffect(() => {
    const added = nodes.length > count.current;
    count.current = nodes.length;
    if (extent === shape.current && !added) return;
    shape.current = extent;
    if (added) refit.current = true;
    const frame = requestAnimationFrame(() => void fitView(FIT));
    return () => cancelAnimationFrame(frame);
  }, [extent, nodes.length, fitView]);

  const onNodesChange = (changes: NodeChange[]) => {
    if (refit.current && changes.some((c) => c.type === 'dimensions')) {
      refit.current = false;
      requestAnimationFrame(() => void fitView(FIT));
    }
    for (const c of changes) {
      if (c.type === 'dimensions' && c.dimensions) sizes.current.set(c.id, c.dimensions);
      if (c.type === 'select') {
        if (c.selected) setSelected(c.id === START ? null : c.id);
        else setSelected((s) => (s === c.id ? null : s));
      } else if (c.type === 'position' && c.position && c.id !== START) {
        if (c.dragging) setDrag({ id: c.id, ...c.position });
        else {
          const { x, y } = c.position;
          set(nodes.map((n) => (n.id === c.id ? { ...n, position: { x: Math.round(x), y: Math.round(y) } } : n)));
          setDrag(null);
        }
      }
    }
  };
  const onConnect = (c: Connection) => {
    if (c.target === START || c.source === c.target) return;
    set(c.source === START ? makeFirst(nodes, c.target) : setOut(nodes, c.source, c.sourceHandle ?? 'next', c.target));
  };
  const remove = (id: string) => {
    set(removeNode(nodes, id));
    setSelected(null);
  };
  // Delete and Backspace act on the canvas only (not on the whole page, as xyflow's own key would).
  const onKeyDown = (e: KeyboardEvent) => {
    if ((e.key !== 'Delete' && e.key !== 'Backspace') || (e.target as HTMLElement).closest('input, textarea, select')) return;
    e.preventDefault();
    if (selected) remove(selected);
    else if (selectedEdges.length > 0) {
      let next = nodes;
      for (const id of selectedEdges) {
        const [source, handle] = id.split(':') as [string, string];
        next = setOut(next, source, handle, undefined);
      }
      set(next);
      setSelectedEdges([]);
    }
  };

  const i = nodes.findIndex((n) => n.id === selected);
  const node = nodes[i];
  return (
    <div className="journey">
      <div className="journey-main">
        <AddStep nodes={nodes} add={(n) => {
          set([...nodes, n]);
          setSelected(n.id);
        }} />
        <div className="journey-canvas" onKeyDown={onKeyDown} role="group" aria-label="Journey canvas" aria-describedby="journey-help">
          <ReactFlow
            nodes={flowNodes}
            edges={edges}
            nodeTypes={NODE_TYPES}
            onNodesChange={onNodesChange}
            onEdgesChange={(changes) => {
              for (const c of changes) if (c.type === 'select') setSelectedEdges((s) => (c.selected ? [...s.filter((x) => x !== c.id), c.id] : s.filter((x) => x !== c.id)));
            }}
            onConnect={onConnect}
            isValidConnection={(c) => c.target !== START && c.source !== c.target}
            deleteKeyCode={null}
            fitView
            minZoom={0.3}
            proOptions={{ hideAttribution: true }}
          >
            <Background />
            <Controls showInteractive={false} />
          </ReactFlow>
        </div>
        <p id="journey-help" className="muted">
          Drag from a step&apos;s way out (at its bottom) onto another step to connect them; a dashed arrow is the list&apos;s next step. Tab to a
          step and press Enter to select it, the arrow keys to move it, Delete to remove it.
        </p>
      </div>
      <aside className="journey-panel card" aria-label="Step settings">
        {node ? (
          <>
            <div className="node-head">
              <h3>{stepName(node, i)} <code>{node.id}</code></h3>
              <button type="button" className="danger" onClick={() => remove(node.id)}>Remove<span className="sr-only"> {stepName(node, i)}</span></button>
            </div>
            <StepFields key={node.id} workspaceId={workspaceId} nodes={nodes} i={i} set={set} templates={templates} fields={fields} journey />
          </>
        ) : (
          <p className="muted">Select a step to see its settings.</p>
        )}
      </aside>
    </div>
  );
}

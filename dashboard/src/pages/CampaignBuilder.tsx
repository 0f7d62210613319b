// The campaign builder, new and edit (loaded on demand: it is the dashboard's biggest page):
// the name, the trigger of each type (docs/campaigns-runtime.md), the audience, the workflow;
// save and activate, with ACTIVATION_FAILED's details at the fields they name and warnings
// before activating; a test send and the live progress of a saved campaign. Each part is a file
// of campaign-builder/: trigger.tsx (with event-, schedule- and webhook-trigger.tsx, the draft
// in trigger-draft.ts and zones.ts), audience.tsx, goal.tsx, warnings.tsx, actions.tsx, test-send.tsx,
// progress.tsx. The workflow is edited as a list (workflow.tsx) or on the journey canvas
// (journey/canvas.tsx, loaded on demand), the same nodes either way.
import { lazy, Suspense, useMemo, useState } from 'react';
import { flushSync } from 'react-dom';
import { api, call, type Schemas } from '../api';
import { Link, navigate } from '../router';
import { Field, Loaded, useLoad, useSubmit, when } from '../ui';
import { TRIGGER_LABEL, type Trigger } from '../enums';
import { inWorkspace } from './Campaigns';
import { fromCondition, toCondition, type Cond } from './conditions';
import { cleanNode, stepName, Workflow, type WorkflowNode } from './workflow';
import { SaveActions } from './campaign-builder/actions';
import { AudienceSection } from './campaign-builder/audience';
import { goalDraft, goalOf, GoalSection, type GoalDraft } from './campaign-builder/goal';
import { Progress } from './campaign-builder/progress';
import { TestSend } from './campaign-builder/test-send';
import { TriggerSection } from './campaign-builder/trigger';
import { triggerConfig, triggerDraft, type TriggerDraft } from './campaign-builder/trigger-draft';
import { heraldWarnings, warningsOf, Warnings } from './campaign-builder/warnings';
import { isJourney, type NodeStats } from './journey/graph';

const JourneyCanvas = lazy(() => import('./journey/canvas'));

type Campaign = Schemas['Campaign'];
type Template = Schemas['MessageTemplate'];

export function CampaignBuilder({ workspaceId, campaignId }: { workspaceId: string; campaignId?: string }) {
  // A campaign created here keeps its editor (and what it shows) when the address takes its id.
  const [created, setCreated] = useState<Campaign | null>(null);
  const [templates] = useLoad(() => call(api.GET('/workspaces/{workspaceId}/templates', { params: { path: { workspaceId } } })), [workspaceId]);
  const list = templates.state === 'done' ? templates.data.templates : [];
  if (!campaignId || created?.id === campaignId) {
    return (
      <Editor
        workspaceId={workspaceId}
        initial={created}
        templates={list}
        onCreated={(c) => {
          // Before the address changes (its render is synchronous), so the editor stays.
          flushSync(() => setCreated(c));
          navigate(`/w/${workspaceId}/campaigns/${c.id}`, { replace: true });
        }}
      />
    );
  }
  return <Existing workspaceId={workspaceId} campaignId={campaignId} templates={list} />;
}

function Existing({ workspaceId, campaignId, templates }: { workspaceId: string; campaignId: string; templates: Template[] }) {
  const [load, retry] = useLoad(() => call(api.GET('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId } } })), [workspaceId, campaignId]);
  return (
    <Loaded load={load} retry={retry} what="this campaign">
      {({ data }) => <Editor key={data.campaign.id} workspaceId={workspaceId} initial={data.campaign} templates={templates} />}
    </Loaded>
  );
}

function Editor({ workspaceId, initial, templates, onCreated }: { workspaceId: string; initial: Campaign | null; templates: Template[]; onCreated?: (c: Campaign) => void }) {
  const [campaign, setCampaign] = useState<Campaign | null>(initial);
  const [name, setName] = useState(initial?.name ?? '');
  const [type, setType] = useState<Trigger>(initial?.trigger_type ?? 'event');
  const [trigger, setTrigger] = useState<TriggerDraft>(() => triggerDraft(initial?.trigger_config ?? {}));
  const [match, setMatch] = useState<'all' | 'any'>(initial?.audience_config.match === 'any' ? 'any' : 'all');
  const [audience, setAudience] = useState<Cond[]>(() => (Array.isArray(initial?.audience_config.filters) ? initial.audience_config.filters.map(fromCondition) : []));
  const [segmentId, setSegmentId] = useState<string | null>(typeof initial?.audience_config.segment_id === 'string' ? initial.audience_config.segment_id : null);
  const [goal, setGoal] = useState<GoalDraft>(() => goalDraft(initial?.goal));
  const [nodes, setNodes] = useState<WorkflowNode[]>(() => (initial?.workflow_definition.nodes as WorkflowNode[] | undefined) ?? [{ id: 'push-1', type: 'push' }]);
  // A refusal names the steps as they were sent.
  const { busy, done, error, fields, submit } = useSubmit((i) => (nodes[i] ? stepName(nodes[i], i) : `Step ${i + 1}`));
  const [serverWarnings, setServerWarnings] = useState<string[]>([]);
  // A journey opens on the canvas where there is room for it; the list is the other view (and a screen reader's).
  const [view, setView] = useState<'canvas' | 'list'>(() => (isJourney(nodes) && window.matchMedia('(min-width: 700px)').matches ? 'canvas' : 'list'));
  const [nodeStats, setNodeStats] = useState<NodeStats | undefined>(undefined);
  const t = (patch: Partial<TriggerDraft>) => setTrigger((d) => ({ ...d, ...patch }));

  // trigger_config and audience_config are free objects, which the generated types cannot say.
  const body = () => ({
    name: name.trim(),
    trigger_config: triggerConfig(type, trigger, initial?.trigger_config ?? {}) as never,
    audience_config: (segmentId !== null ? { segment_id: segmentId } : audience.length > 0 ? { match, filters: audience.map(toCondition) } : {}) as never,
    workflow_definition: { nodes: nodes.map(cleanNode) as never },
  });
  const warnings = useMemo(() => warningsOf(nodes, templates), [nodes, templates]);

  const run = (what: string, status?: 'active' | 'paused' | 'draft') =>
    submit(async () => {
      let c = campaign;
      let warned: string[];
      if (!c) {
        const g = goalOf(goal);
        const r = await call(api.POST('/campaigns', { params: inWorkspace(workspaceId), body: { ...body(), trigger_type: type, ...(g ? { goal: g } : {}) } }));
        c = r.data.campaign;
        warned = r.data.warnings ?? [];
        setCampaign(c);
        onCreated?.(c);
        if (status) {
          const u = await call(api.PUT('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId: c.id } }, body: { status } }));
          c = u.data.campaign;
          warned = u.warnings ?? warned;
        }
      } else {
        const u = await call(api.PUT('/campaigns/{campaignId}', { params: { ...inWorkspace(workspaceId), path: { campaignId: c.id } }, body: { ...body(), goal: goalOf(goal), ...(status ? { status } : {}) } }));
        c = u.data.campaign;
        warned = u.warnings ?? [];
      }
      setCampaign(c);
      setServerWarnings(warned);
      return what;
    });

  const setWorkflow = (n: WorkflowNode[]) => {
    setNodes(n);
    // Herald's warnings were about the workflow it saved: this one is said by warningsOf.
    setServerWarnings([]);
  };
  const shownWarnings = [...warnings, ...heraldWarnings(serverWarnings, nodes, warnings)];
  return (
    <>
      <p><Link to={`/w/${workspaceId}/campaigns`}>← Campaigns</Link></p>
      <h1 tabIndex={-1}>{campaign ? campaign.name : 'New campaign'}</h1>
      {campaign && (
        <p>
          Status: <span className={`badge ${campaign.status}`}>{campaign.status}</span> · {TRIGGER_LABEL[campaign.trigger_type]} trigger · updated {when(campaign.updated_at)}
          {campaign.status !== 'draft' && <> · <Link to={`/w/${workspaceId}/campaigns/${campaign.id}/analytics`}>Analytics</Link></>}
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(campaign ? 'Saved.' : 'Saved as a draft.');
        }}
      >
        <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} maxLength={255} required error={fields.name} />
        <TriggerSection workspaceId={workspaceId} campaign={campaign} type={type} setType={setType} d={trigger} set={t} fields={fields} />
        <AudienceSection workspaceId={workspaceId} eventTriggered={type === 'event'} match={match} setMatch={setMatch} conds={audience} setConds={setAudience} segmentId={segmentId} setSegmentId={setSegmentId} fields={fields} />
        <GoalSection workspaceId={workspaceId} d={goal} set={setGoal} fields={fields} />
        <section aria-labelledby="workflow">
          <div className="node-head">
            <h2 id="workflow">Workflow</h2>
            <div className="inline" role="group" aria-label="Workflow view">
              <button type="button" aria-pressed={view === 'canvas'} onClick={() => setView('canvas')}>Canvas</button>
              <button type="button" aria-pressed={view === 'list'} onClick={() => setView('list')}>List</button>
            </div>
          </div>
          {view === 'canvas' ? (
            <Suspense fallback={<p className="muted">Loading the canvas…</p>}>
              <JourneyCanvas workspaceId={workspaceId} trigger={TRIGGER_LABEL[type]} nodes={nodes} set={setWorkflow} templates={templates} fields={fields} stats={nodeStats} />
            </Suspense>
          ) : (
            <Workflow workspaceId={workspaceId} nodes={nodes} set={setWorkflow} templates={templates} fields={fields} />
          )}
        </section>
        {campaign && <TestSend workspaceId={workspaceId} campaign={campaign} />}
        <Warnings shown={shownWarnings} />
        <SaveActions campaign={campaign} busy={busy} done={done} error={error} run={run} />
      </form>
      {campaign && campaign.status !== 'draft' && <Progress workspaceId={workspaceId} campaign={campaign} onStatus={(c) => setCampaign((old) => (old && old.status !== c.status ? c : old))} onNodes={setNodeStats} />}
    </>
  );
}

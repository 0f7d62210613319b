// Campaign authoring (docs/campaigns-runtime.md; README, Request bodies and Routes). Session routes:
// the pipeline has checked that the caller is a member of the workspace (X-Workspace-ID, the
// workspace_id query parameter, or the path). Every change runs in the workspace's actor, in
// one transaction holding the campaign row; the rules are domain/campaigns.ts.
import type { Ctx, Handler, Handlers, PathCtx } from './context.js';
import { json } from './reply.js';
import { refuseUnknownTopics } from './topics.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import {
  NODE_FIELDS, checkDeletable, initialWorkflow, normalizeWorkflow, refuseKnownBadKeys, setNodeMessage, settleStatus, templateIdsOf, workflowWarnings,
  type CampaignSpec, type MessageNode, type SettableStatus, type Workflow,
} from '../domain/campaigns.js';
import { iso } from '../domain/time.js';
import { pageBack } from './page-back.js';
import { presentMessage } from './push.js';
import { isUuid, newId } from '../ids.js';
import { campaignMessages, campaignStats, channelStats, deleteCampaign, findCampaign, findTemplate, glanceStats, insertCampaign, listCampaigns, saveCampaign, templateContents, type CampaignFields, type CampaignRow, type Queryable } from '../store/index.js';
import { findSegment } from '../store/segments.js';
import { journeyEdges } from '../store/enrolments.js';
import { isJourney, nodeStats } from '../domain/journeys.js';
import { checkGoal } from '../domain/goals.js';

/** `limit` of the list above this is silently reduced. */
const LIST_MAX = 500;
/** `limit` of a campaign's messages above this is silently reduced. */
const MESSAGES_MAX = 500;

function present(c: CampaignRow) {
  return {
    id: c.id,
    workspace_id: c.workspace_id,
    name: c.name,
    status: c.status,
    trigger_type: c.trigger_type,
    trigger_config: c.trigger_config,
    audience_config: c.audience_config,
    workflow_definition: c.workflow_definition,
    // Only on a campaign that holds out: the others read as before journeys.
    ...(c.holdout_percent === 0 ? {} : { holdout_percent: c.holdout_percent }),
    ...(c.goal === null ? {} : { goal: c.goal }),
    ...(c.template_id === null ? {} : { template_id: c.template_id }),
    created_at: iso(c.created_at),
    updated_at: iso(c.updated_at),
  };
}

/** Unknown, another workspace's, or not a UUID: all the same 404. */
export async function loadCampaign(q: Queryable, ctx: PathCtx<'campaignId'>, lock = false): Promise<CampaignRow> {
  const id = ctx.params.campaignId;
  const campaign = isUuid(id) ? await findCampaign(q, ctx.workspaceId, id, lock) : null;
  if (!campaign) throw new DomainError('NOT_FOUND', 'Campaign not found');
  return campaign;
}

/**
 * Stores `next` with the status the update leaves (domain settleStatus: activation rules when
 * it goes or stays live), reading the templates its push nodes name.
 */
async function settleAndSave(q: Queryable, ctx: Ctx, current: CampaignRow, next: Omit<CampaignFields, 'status'>, target: SettableStatus | undefined, rulesInputsChanged: boolean): Promise<CampaignRow> {
  const spec: CampaignSpec = { trigger_type: current.trigger_type, ...next };
  const templates = await templateContents(q, ctx.workspaceId, templateIdsOf(next.workflow_definition));
  const status = settleStatus(current.status, target, spec, templates, rulesInputsChanged, Date.now());
  return saveCampaign(q, current.id, { ...next, status });
}

/** An audience naming a segment names one of the workspace's (its members are read by id alone). */
async function checkSegment(q: Queryable, workspaceId: string, audience: Record<string, unknown> | undefined): Promise<void> {
  const id = audience?.segment_id;
  if (typeof id !== 'string') return;
  // Locked until commit, so the segment cannot be deleted between this check and the save.
  if (!isUuid(id) || !(await findSegment(q, workspaceId, id, true))) {
    throw new InvalidInput('audience_config.segment_id names no segment of this workspace', [{ field: 'audience_config.segment_id', message: 'names no segment of this workspace' }]);
  }
}

const create: Handler<'POST /campaigns'> = async (ctx) => {
  const b = ctx.body;
  refuseKnownBadKeys(b.trigger_config);
  checkGoal(b.goal);
  const templateId = b.template_id?.toLowerCase();
  // The schema lets a delay node lack minutes: normalizeWorkflow refuses that.
  const workflow = initialWorkflow(b.workflow_definition && normalizeWorkflow(b.workflow_definition as Workflow), templateId);
  const campaign = await ctx.db.tx(async (q) => {
    await checkSegment(q, ctx.workspaceId, b.audience_config);
    // Held until commit, so the template cannot go between this check and the insert.
    if (templateId !== undefined && !(await findTemplate(q, ctx.workspaceId, templateId, true))) {
      throw new InvalidInput('template_id names no message template of this workspace', [{ field: 'template_id', message: 'names no message template of this workspace' }]);
    }
    await refuseUnknownTopics(q, ctx.workspaceId, workflow);
    return insertCampaign(q, {
      id: newId(), workspace_id: ctx.workspaceId, name: b.name, status: 'draft', trigger_type: b.trigger_type, trigger_config: b.trigger_config,
      audience_config: b.audience_config ?? {}, workflow_definition: workflow, template_id: templateId ?? null, holdout_percent: b.holdout_percent ?? 0,
      goal: b.goal ?? null,
    });
  });
  return json(201, { success: true, data: { campaign: present(campaign), message: 'Campaign created as a draft', warnings: workflowWarnings(campaign.workflow_definition) } });
};

const list: Handler<'GET /campaigns'> = async (ctx) => {
  const limit = Math.min(ctx.query.limit, LIST_MAX);
  const offset = ctx.query.offset;
  const r = await listCampaigns(ctx.db, ctx.workspaceId, { status: ctx.query.status, trigger_type: ctx.query.trigger_type, q: ctx.query.q, limit, offset });
  // The stats at a glance of the page, in one statement.
  const stats = await glanceStats(ctx.db, ctx.workspaceId, r.campaigns.map((c) => c.id));
  const campaigns = r.campaigns.map((c) => {
    const s = stats.get(c.id)!;
    return { ...present(c), stats: { enrolled: s.enrolled, sent: s.sent, delivered: s.delivered, failed: s.failed, last_triggered_at: iso(s.last_triggered_at) } };
  });
  return json(200, { success: true, campaigns, total: r.total, limit, offset });
};

const get: Handler<'GET /campaigns/{campaignId}'> = async (ctx) => {
  const campaign = await loadCampaign(ctx.db, ctx);
  const st = await campaignStats(ctx.db, campaign.id);
  // The message counters, all channels together and per channel (docs/channels.md).
  const heldOut = campaign.holdout_percent > 0 || st.held_out > 0 ? { held_out: st.held_out } : {};
  const converted = campaign.goal !== null || st.converted > 0 ? { converted: st.converted } : {};
  const stats = { enrolled: st.enrolled, triggered: st.triggered, ...heldOut, ...converted, ...(await channelStats(ctx.db, ctx.workspaceId, campaign.id)), last_triggered_at: iso(st.last_triggered_at) };
  // A journey's per-node stats, from the edge counters the executor keeps.
  const nodes = campaign.workflow_definition.nodes;
  const perNode = isJourney(nodes) ? { nodes: nodeStats(nodes, await journeyEdges(ctx.db, campaign.id), st.enrolled - st.held_out) } : {};
  return json(200, { success: true, data: { campaign: present(campaign), stats, ...perNode, message: 'Campaign retrieved' } });
};

const update: Handler<'PUT /campaigns/{campaignId}'> = async (ctx) => {
  const b = ctx.body;
  if (b.trigger_config !== undefined) refuseKnownBadKeys(b.trigger_config);
  checkGoal(b.goal);
  const workflow = b.workflow_definition && normalizeWorkflow(b.workflow_definition as Workflow);
  const campaign = await ctx.db.tx(async (q) => {
    const current = await loadCampaign(q, ctx, true);
    await refuseUnknownTopics(q, ctx.workspaceId, workflow);
    await checkSegment(q, ctx.workspaceId, b.audience_config);
    const next = {
      name: b.name ?? current.name,
      trigger_config: b.trigger_config ?? current.trigger_config,
      audience_config: b.audience_config ?? current.audience_config,
      workflow_definition: workflow ?? current.workflow_definition,
      holdout_percent: b.holdout_percent ?? current.holdout_percent,
      // null removes the goal.
      goal: b.goal === undefined ? current.goal : b.goal,
    };
    const rulesInputsChanged = b.trigger_config !== undefined || b.audience_config !== undefined || workflow !== undefined;
    return settleAndSave(q, ctx, current, next, b.status, rulesInputsChanged);
  });
  await ctx.eventTriggers.changed(ctx.workspaceId);
  await ctx.goals.changed(ctx.workspaceId);
  const warnings = workflowWarnings(campaign.workflow_definition);
  return json(200, { success: true, message: 'Campaign updated', data: { campaign: present(campaign) }, ...(warnings.length ? { warnings } : {}) });
};

const remove: Handler<'DELETE /campaigns/{campaignId}'> = async (ctx) => {
  const name = await ctx.db.tx(async (q) => {
    const campaign = await loadCampaign(q, ctx, true);
    checkDeletable(campaign.status);
    await deleteCampaign(q, campaign.id);
    return campaign.name;
  });
  await ctx.goals.changed(ctx.workspaceId);
  return json(200, { success: true, message: `Campaign ${name} deleted with its enrolments; its push records are kept` });
};

/** The node's own content (and the template it names), as node-messages answers it. */
function messageOf(node: MessageNode) {
  const message: Record<string, unknown> = {};
  for (const key of [...NODE_FIELDS[node.type], 'template_id']) {
    const value = (node as unknown as Record<string, unknown>)[key];
    if (value !== undefined) message[key] = value;
  }
  return message;
}

/** Live progress (README, Dashboard): the campaign's messages, newest first; `before` and `before_id` page back. */
const messages: Handler<'GET /workspaces/{workspaceId}/campaigns/{campaignId}/messages'> = async (ctx) => {
  const campaign = await loadCampaign(ctx.db, ctx);
  const limit = Math.min(ctx.query.limit, MESSAGES_MAX);
  const rows = await campaignMessages(ctx.db, ctx.workspaceId, campaign.id, pageBack(ctx.query), limit);
  return json(200, { success: true, messages: rows.map(presentMessage), total: rows.length, limit });
};

const nodeMessage: Handler<'PUT /workspaces/{workspaceId}/campaigns/{campaignId}/node-messages/{nodeId}'> = async (ctx) => {
  const node = await ctx.db.tx(async (q) => {
    const current = await loadCampaign(q, ctx, true);
    const changed = setNodeMessage(current.workflow_definition, ctx.params.nodeId, ctx.body);
    const next = { name: current.name, trigger_config: current.trigger_config, audience_config: current.audience_config, workflow_definition: changed.workflow, holdout_percent: current.holdout_percent, goal: current.goal };
    await settleAndSave(q, ctx, current, next, undefined, true);
    return changed.node;
  });
  await ctx.eventTriggers.changed(ctx.workspaceId);
  const warnings = workflowWarnings({ nodes: [node] });
  return json(200, { success: true, data: { node_id: node.id, message: messageOf(node) }, ...(warnings.length ? { warnings } : {}) });
};

export const campaignHandlers = {
  'POST /campaigns': create,
  'GET /campaigns': list,
  'GET /campaigns/{campaignId}': get,
  'PUT /campaigns/{campaignId}': update,
  'DELETE /campaigns/{campaignId}': remove,
  'PUT /workspaces/{workspaceId}/campaigns/{campaignId}/node-messages/{nodeId}': nodeMessage,
  'GET /workspaces/{workspaceId}/campaigns/{campaignId}/messages': messages,
} satisfies Handlers;

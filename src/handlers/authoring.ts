// The dashboard's campaign authoring support (README, Dashboard), session routes on the path's
// workspace: how many people an audience matches (with a sample), a channel's content rendered
// for a person, and one node of a campaign sent to one person. Each reuses what campaigns do:
// the audience's SQL (store/audience.ts) and activation's rules (domain/campaigns.ts), the
// render pool and the channels' field rules, the push engine and channels/send.ts.
import type { Ctx, Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { dashboardPerson, personByUuid } from './people.js';
import { loadCampaign } from './campaigns.js';
import { DomainError, InvalidInput, type FieldError } from '../domain/errors.js';
import { audienceProblems, isMessageNode, nodeContent, runProblems, templateIdsOf, type PushNode } from '../domain/campaigns.js';
import { compileContent, compileFields, outcomeError, personScope, type CompiledContent, type PushContent, type TemplateScope } from '../domain/templates.js';
import type { AudienceConfig } from '../domain/conditions.js';
import { CHANNELS } from '../channels/index.js';
import { channelScope } from '../channels/send.js';
import { newId } from '../ids.js';
import { audiencePages, countAudience, peopleByIds, templateContents, type PersonRow } from '../store/index.js';
import { AUDIENCE_COUNT_MAX, AUDIENCE_SAMPLE } from '../../schemas/authoring.js';

/** Test sends are recorded with these tags (README, Dashboard); campaign stats leave them out. */
const TEST_TAGS = ['test'];

const audiencePreview: Handler<'POST /workspaces/{workspaceId}/audiences/preview'> = async (ctx) => {
  const audience = ctx.body.audience_config;
  const problems = audienceProblems(audience);
  if (problems.length > 0) throw new InvalidInput(`audience_config is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
  const config = audience as AudienceConfig;
  const { count, capped } = await countAudience(ctx.db, ctx.workspaceId, config, AUDIENCE_COUNT_MAX);
  let ids: string[] = [];
  for await (const page of audiencePages(ctx.db, ctx.workspaceId, config, { pageSize: AUDIENCE_SAMPLE, limit: AUDIENCE_SAMPLE })) ids = page;
  const people = new Map((await peopleByIds(ctx.db, ctx.workspaceId, ids)).map((p) => [p.id, p]));
  // In the walk's order (oldest first); one deleted meanwhile is left out.
  const sample = ids.flatMap((id) => (people.has(id) ? [dashboardPerson(people.get(id)!)] : []));
  return json(200, { success: true, count, count_capped: capped, sample });
};

/** Where a preview's `unsubscribe_url` points: a link that unsubscribes nobody (a bad token is a 404 page). */
const previewUnsubscribeUrl = (ctx: Ctx) => `${ctx.messaging.publicUrl}/u/preview`;

/** A content's errors named as the request names them: `content.<field>`. */
function asContentFields(err: InvalidInput): InvalidInput {
  const fields = err.fields.map((f): FieldError => ({ field: `content.${f.field}`, message: f.message }));
  return new InvalidInput(`Template error: ${fields.map((f) => `${f.field} ${f.message}`).join('; ')}`, fields);
}

function compiled(compile: () => CompiledContent): CompiledContent {
  try {
    return compile();
  } catch (err) {
    throw err instanceof InvalidInput ? asContentFields(err) : err;
  }
}

const templatePreview: Handler<'POST /workspaces/{workspaceId}/templates/preview'> = async (ctx) => {
  const { channel, content, variables = {} } = ctx.body;
  const person: PersonRow | null = ctx.body.person_id === undefined ? null : await personByUuid(ctx, ctx.body.person_id);
  // The fields a node of that channel would send (domain/campaigns.ts), compiled as its send does.
  const node = { ...content, id: 'preview', type: channel };
  const none = new Map();
  let c: CompiledContent;
  let scope: TemplateScope;
  // Push's content has its own shape; every other channel's is plain Liquid fields it declares.
  const { fields, preview } = CHANNELS[channel];
  if (!fields || !preview) {
    c = compiled(() => compileContent(nodeContent(node as PushNode, none)));
    scope = { variables, person: person ? personScope(person) : {}, traits: person?.traits ?? {} };
  } else {
    c = compiled(() => compileFields(fields(node, none)));
    scope = channelScope(person, variables, previewUnsubscribeUrl(ctx));
  }
  const [outcome] = await ctx.renders.render(ctx.workspaceId, c, [scope]);
  if ('error' in outcome!) throw asContentFields(outcomeError(outcome));
  const out: PushContent = outcome!.content;
  if (!preview) return json(200, { success: true, rendered: out });
  return json(200, { success: true, rendered: preview(out.custom_data as Record<string, string>) });
};

const testSend: Handler<'POST /workspaces/{workspaceId}/campaigns/{campaignId}/test-send'> = async (ctx) => {
  const campaign = await loadCampaign(ctx.db, ctx);
  const nodes = campaign.workflow_definition.nodes;
  const index = nodes.findIndex((n) => n.id === ctx.body.node_id);
  if (index < 0) throw new DomainError('NOT_FOUND', `The campaign has no node ${ctx.body.node_id}`);
  const node = nodes[index]!;
  if (!isMessageNode(node)) throw new InvalidInput(`Node ${node.id} is a ${node.type} node: only message nodes are sent`, [{ field: 'node_id', message: `names a ${node.type} node: only message nodes are sent` }]);
  const person = await personByUuid(ctx, ctx.body.person_id);
  const templates = await templateContents(ctx.db, ctx.workspaceId, templateIdsOf({ nodes: [node] }));
  // What activation requires of the node (content present, templates of its channel, Liquid that parses).
  const problems = runProblems({ trigger_type: campaign.trigger_type, trigger_config: {}, audience_config: {}, workflow_definition: { nodes: [node] } }, templates)
    .map((p) => ({ field: p.field.replace(/^workflow_definition\.nodes\.0/, `workflow_definition.nodes.${index}`), message: p.message }));
  if (problems.length > 0) throw new InvalidInput(`Node ${node.id} cannot be sent: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);

  const deps = { db: ctx.db, settings: ctx.messaging, pools: ctx.pools, renders: ctx.renders };
  // Answered with its outcome, recorded, before the request times out (a 503 would say nothing was done).
  const deadline = AbortSignal.timeout(ctx.messaging.testSendDeadlineMs);
  const send = { workspaceId: ctx.workspaceId, campaignId: campaign.id, node, templates, tags: TEST_TAGS, outsidePolicy: true, deadline, withRecords: async () => {} };
  const [r] = await CHANNELS[node.type].sendNode(deps, send, [{ id: newId(), person, variables: {} }]);
  return json(200, {
    success: true,
    data: { message_id: r!.id, node_id: node.id, channel: node.type, status: r!.status, provider: r!.provider, provider_id: r!.provider_id, address: r!.address, skip_reason: r!.skip_reason, error: r!.error },
  });
};

export const authoringHandlers = {
  'POST /workspaces/{workspaceId}/audiences/preview': audiencePreview,
  'POST /workspaces/{workspaceId}/templates/preview': templatePreview,
  'POST /workspaces/{workspaceId}/campaigns/{campaignId}/test-send': testSend,
} satisfies Handlers;

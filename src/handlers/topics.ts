// Topics and people's subscriptions (docs/audiences.md): session routes on the path's workspace.
// A person's subscriptions are their choices, else each topic's default; nodes naming a topic
// skip the people not subscribed (channels/decisions.ts).
import type { Handler, Handlers, PathCtx } from './context.js';
import { json } from './reply.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import { iso } from '../domain/time.js';
import { isUuid, newId } from '../ids.js';
import { findPersonById, type Queryable } from '../store/index.js';
import { isMessageNode, type Workflow } from '../domain/campaigns.js';
import { deleteTopic, findTopic, insertTopic, saveTopic, setSubscriptions, subscriptionsOf, topicsOf, type TopicRow } from '../store/topics.js';

const present = (t: TopicRow) => ({ id: t.id, workspace_id: t.workspace_id, name: t.name, description: t.description, default: t.default, created_at: iso(t.created_at), updated_at: iso(t.updated_at) });

async function loadTopic(q: Queryable, ctx: PathCtx<'topicId'>, lock = false): Promise<TopicRow> {
  const id = ctx.params.topicId;
  const topic = isUuid(id) ? await findTopic(q, ctx.workspaceId, id, lock) : null;
  if (!topic) throw new DomainError('NOT_FOUND', 'Topic not found');
  return topic;
}

/** A workflow's nodes may name only topics of the workspace (a 400 naming each node that does not). */
export async function refuseUnknownTopics(q: Queryable, workspaceId: string, workflow: Workflow | undefined): Promise<void> {
  const named = (workflow?.nodes ?? []).flatMap((n, i) => (isMessageNode(n) && n.topic_id !== undefined ? [{ i, id: n.topic_id.toLowerCase() }] : []));
  if (named.length === 0) return;
  const known = new Set((await topicsOf(q, workspaceId)).map((t) => t.id));
  const unknown = named.filter((n) => !known.has(n.id));
  if (unknown.length > 0) throw new InvalidInput('topic_id names no topic of this workspace', unknown.map((n) => ({ field: `workflow_definition.nodes[${n.i}].topic_id`, message: 'names no topic of this workspace' })));
}

const TOPICS = '/workspaces/{workspaceId}/topics';
const SUBSCRIPTIONS = '/workspaces/{workspaceId}/people/{personId}/subscriptions';

const create: Handler<`POST ${typeof TOPICS}`> = async (ctx) => {
  const topic = await insertTopic(ctx.db, newId(), ctx.workspaceId, { name: ctx.body.name, description: ctx.body.description ?? null, default: ctx.body.default });
  return json(201, { success: true, data: { topic: present(topic) } });
};

const list: Handler = async (ctx) => {
  const topics = (await topicsOf(ctx.db, ctx.workspaceId)).map(present);
  return json(200, { success: true, topics, total: topics.length });
};

const get: Handler<`GET ${typeof TOPICS}/{topicId}`> = async (ctx) => json(200, { success: true, data: { topic: present(await loadTopic(ctx.db, ctx)) } });

const update: Handler<`PUT ${typeof TOPICS}/{topicId}`> = async (ctx) => {
  const topic = await ctx.db.tx(async (q) => {
    const t = await loadTopic(q, ctx, true);
    const b = ctx.body;
    return saveTopic(q, t.id, { name: b.name ?? t.name, description: b.description === undefined ? t.description : b.description, default: b.default ?? t.default });
  });
  return json(200, { success: true, data: { topic: present(topic) } });
};

const remove: Handler<`DELETE ${typeof TOPICS}/{topicId}`> = async (ctx) => {
  const name = await ctx.db.tx(async (q) => {
    const t = await loadTopic(q, ctx, true);
    await deleteTopic(q, t.id);
    return t.name;
  });
  return json(200, { success: true, message: `Topic ${name} deleted` });
};

async function personOf(q: Queryable, ctx: PathCtx<'personId'>): Promise<string> {
  const id = ctx.params.personId;
  const person = isUuid(id) ? await findPersonById(q, ctx.workspaceId, id) : null;
  if (!person) throw new DomainError('PERSON_NOT_FOUND', 'Person not found');
  return person.id;
}

const subscriptions: Handler<`GET ${typeof SUBSCRIPTIONS}`> = async (ctx) => {
  const personId = await personOf(ctx.db, ctx);
  return json(200, { success: true, subscriptions: await subscriptionsOf(ctx.db, ctx.workspaceId, personId) });
};

const subscribe: Handler<`PUT ${typeof SUBSCRIPTIONS}`> = async (ctx) => {
  const out = await ctx.db.tx(async (q) => {
    const personId = await personOf(q, ctx);
    const known = new Set((await topicsOf(q, ctx.workspaceId)).map((t) => t.id));
    const choices: Record<string, boolean> = {};
    const unknown: string[] = [];
    for (const [id, v] of Object.entries(ctx.body.subscriptions)) {
      const key = id.toLowerCase();
      if (isUuid(key) && known.has(key) && typeof v === 'boolean') choices[key] = v;
      else unknown.push(id);
    }
    if (unknown.length > 0) throw new InvalidInput('subscriptions names topics the workspace does not have', unknown.slice(0, 20).map((id) => ({ field: `subscriptions.${id}`, message: 'is not a topic of the workspace' })));
    await setSubscriptions(q, personId, choices);
    return subscriptionsOf(q, ctx.workspaceId, personId);
  });
  return json(200, { success: true, subscriptions: out });
};

export const topicHandlers = {
  [`POST ${TOPICS}`]: create,
  [`GET ${TOPICS}`]: list,
  [`GET ${TOPICS}/{topicId}`]: get,
  [`PUT ${TOPICS}/{topicId}`]: update,
  [`DELETE ${TOPICS}/{topicId}`]: remove,
  [`GET ${SUBSCRIPTIONS}`]: subscriptions,
  [`PUT ${SUBSCRIPTIONS}`]: subscribe,
} satisfies Handlers;

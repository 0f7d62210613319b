// Message templates (docs/campaigns-runtime.md): push content in Liquid that campaign push nodes name by
// template_id. Session routes on the path's workspace (dashboard-only: a key gets 403). Every
// template stored parses: a field that does not is a 400 naming it.
import type { Handler, Handlers, PathCtx } from './context.js';
import { json } from './reply.js';
import { DomainError } from '../domain/errors.js';
import { CONTENT_FIELDS, EMAIL_FIELDS } from '../domain/campaigns.js';
import { compileContent, compileFields } from '../domain/templates.js';
import { iso } from '../domain/time.js';
import { isUuid, newId } from '../ids.js';
import { deleteTemplate, findTemplate, insertTemplate, liveCampaignsUsing, saveTemplate, templatesOf, type Queryable, type TemplateFields, type TemplateRow } from '../store/index.js';

function present(t: TemplateRow) {
  return {
    id: t.id,
    workspace_id: t.workspace_id,
    name: t.name,
    channel: t.channel,
    title: t.title,
    body: t.body,
    image_url: t.image_url,
    action_url: t.action_url,
    custom_data: t.custom_data,
    subject: t.subject,
    html: t.html,
    text: t.text,
    preheader: t.preheader,
    created_at: iso(t.created_at),
    updated_at: iso(t.updated_at),
  };
}

async function loadTemplate(q: Queryable, ctx: PathCtx<'templateId'>, lock = false): Promise<TemplateRow> {
  const id = ctx.params.templateId;
  const template = isUuid(id) ? await findTemplate(q, ctx.workspaceId, id, lock) : null;
  if (!template) throw new DomainError('NOT_FOUND', 'Template not found');
  return template;
}

/** The template's fields: those sent (null clears a content field), else `base`'s; its content must parse. */
function fieldsOf(body: Partial<TemplateFields>, base: TemplateFields): TemplateFields {
  const fields: TemplateFields = { ...base, name: body.name ?? base.name, channel: body.channel ?? base.channel };
  for (const key of [...CONTENT_FIELDS, ...EMAIL_FIELDS]) if (body[key] !== undefined) (fields as Record<string, unknown>)[key] = body[key];
  compileContent({
    title: fields.title ?? undefined, body: fields.body ?? undefined, image_url: fields.image_url ?? undefined, action_url: fields.action_url ?? undefined, custom_data: fields.custom_data ?? undefined,
  });
  // Email's fields parse as Liquid too (docs/channels.md).
  compileFields(Object.fromEntries(EMAIL_FIELDS.flatMap((k) => (fields[k] === null ? [] : [[k, fields[k]]]))));
  return fields;
}

const EMPTY: TemplateFields = { name: '', channel: 'push', title: null, body: null, image_url: null, action_url: null, custom_data: null, subject: null, html: null, text: null, preheader: null };

const create: Handler<'POST /workspaces/{workspaceId}/templates'> = async (ctx) => {
  const template = await insertTemplate(ctx.db, newId(), ctx.workspaceId, fieldsOf(ctx.body, EMPTY));
  return json(201, { success: true, data: { template: present(template) } });
};

const list: Handler = async (ctx) => {
  const templates = (await templatesOf(ctx.db, ctx.workspaceId)).map(present);
  return json(200, { success: true, templates, total: templates.length });
};

const get: Handler<'GET /workspaces/{workspaceId}/templates/{templateId}'> = async (ctx) => json(200, { success: true, data: { template: present(await loadTemplate(ctx.db, ctx)) } });

const update: Handler<'PUT /workspaces/{workspaceId}/templates/{templateId}'> = async (ctx) => {
  const template = await ctx.db.tx(async (q) => {
    const current = await loadTemplate(q, ctx, true);
    return saveTemplate(q, current.id, fieldsOf(ctx.body, current));
  });
  return json(200, { success: true, data: { template: present(template) } });
};

const remove: Handler<'DELETE /workspaces/{workspaceId}/templates/{templateId}'> = async (ctx) => {
  const name = await ctx.db.tx(async (q) => {
    // A campaign going live reads its templates FOR SHARE: with this lock held, it either
    // committed before (and is found below) or reads the template after it is gone (and fails
    // activation), never both.
    const template = await loadTemplate(q, ctx, true);
    const using = await liveCampaignsUsing(q, ctx.workspaceId, template.id);
    if (using.length > 0) throw new DomainError('TEMPLATE_IN_USE', `The template is used by live campaigns (${using.join(', ')}): pause them or change their workflows first`);
    await deleteTemplate(q, template.id);
    return template.name;
  });
  return json(200, { success: true, message: `Template ${name} deleted` });
};

const TEMPLATES = '/workspaces/{workspaceId}/templates';

export const templateHandlers = {
  [`POST ${TEMPLATES}`]: create,
  [`GET ${TEMPLATES}`]: list,
  [`GET ${TEMPLATES}/{templateId}`]: get,
  [`PUT ${TEMPLATES}/{templateId}`]: update,
  [`DELETE ${TEMPLATES}/{templateId}`]: remove,
} satisfies Handlers;

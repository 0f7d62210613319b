// Message templates (docs/campaigns-runtime.md): push content that campaign push nodes name by id.
import { prepared, type Queryable } from './db.js';
import type { TemplateContent } from '../domain/campaigns.js';
import type { Channel } from '../domain/messages.js';

export interface TemplateRow {
  id: string;
  workspace_id: string;
  name: string;
  channel: Channel;
  title: string | null;
  body: string | null;
  image_url: string | null;
  action_url: string | null;
  custom_data: Record<string, unknown> | null;
  /** Email (docs/channels.md). */
  subject: string | null;
  html: string | null;
  text: string | null;
  preheader: string | null;
  created_at: Date;
  updated_at: Date;
}

/** What a template holds that can change. */
export type TemplateFields = Pick<TemplateRow, 'name' | 'channel' | 'title' | 'body' | 'image_url' | 'action_url' | 'custom_data' | 'subject' | 'html' | 'text' | 'preheader'>;

const COLUMNS = 'id, workspace_id, name, channel, title, body, image_url, action_url, custom_data, subject, html, text, preheader, created_at, updated_at';

export async function insertTemplate(q: Queryable, id: string, workspaceId: string, t: TemplateFields): Promise<TemplateRow> {
  const r = await q.query<TemplateRow>(
    `INSERT INTO message_templates (id, workspace_id, name, channel, title, body, image_url, action_url, custom_data, subject, html, text, preheader)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text::jsonb, $10, $11, $12, $13) RETURNING ${COLUMNS}`,
    [id, workspaceId, t.name, t.channel, t.title, t.body, t.image_url, t.action_url, t.custom_data === null ? null : JSON.stringify(t.custom_data), t.subject, t.html, t.text, t.preheader],
  );
  return r.rows[0]!;
}

/** A template of the workspace (the caller has checked `id` is a UUID); `lock` holds it until the transaction ends. */
export async function findTemplate(q: Queryable, workspaceId: string, id: string, lock = false): Promise<TemplateRow | null> {
  const r = await q.query<TemplateRow>(`SELECT ${COLUMNS} FROM message_templates WHERE id = $1 AND workspace_id = $2${lock ? ' FOR UPDATE' : ''}`, [id, workspaceId]);
  return r.rows[0] ?? null;
}

export async function templatesOf(q: Queryable, workspaceId: string): Promise<TemplateRow[]> {
  return (await q.query<TemplateRow>(`SELECT ${COLUMNS} FROM message_templates WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC`, [workspaceId])).rows;
}

/** Read for every page of a fan-out with a template: prepared. */
const TEMPLATE_CONTENTS = prepared('template-contents', `SELECT ${COLUMNS} FROM message_templates WHERE workspace_id = $1 AND id = ANY($2::uuid[]) FOR SHARE`);

/**
 * The content of those of `ids` that are templates of the workspace, by id. Read FOR SHARE: a
 * campaign going live with them keeps them from being deleted until it has committed.
 */
export async function templateContents(q: Queryable, workspaceId: string, ids: readonly string[]): Promise<Map<string, TemplateContent>> {
  if (ids.length === 0) return new Map();
  const r = await q.query<TemplateRow>(TEMPLATE_CONTENTS, [workspaceId, ids]);
  const some = <T>(v: T | null) => v ?? undefined;
  return new Map(
    r.rows.map((t) => [
      t.id,
      { channel: t.channel, title: some(t.title), body: some(t.body), image_url: some(t.image_url), action_url: some(t.action_url), custom_data: some(t.custom_data), subject: some(t.subject), html: some(t.html), text: some(t.text), preheader: some(t.preheader) },
    ]),
  );
}

export async function saveTemplate(q: Queryable, id: string, t: TemplateFields): Promise<TemplateRow> {
  const r = await q.query<TemplateRow>(
    `UPDATE message_templates SET name = $2, channel = $3, title = $4, body = $5, image_url = $6, action_url = $7, custom_data = $8::text::jsonb,
       subject = $9, html = $10, text = $11, preheader = $12, updated_at = now()
     WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, t.name, t.channel, t.title, t.body, t.image_url, t.action_url, t.custom_data === null ? null : JSON.stringify(t.custom_data), t.subject, t.html, t.text, t.preheader],
  );
  return r.rows[0]!;
}

export async function deleteTemplate(q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM message_templates WHERE id = $1', [id]);
}

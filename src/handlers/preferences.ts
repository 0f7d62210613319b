// The preference center (docs/audiences.md), outside /api/v1, no credential: `/p/{token}` from an
// email's `{{ preferences_url }}`. GET answers a page listing the workspace's topics with a
// checkbox each and a button to unsubscribe from everything, and changes nothing (mail scanners
// follow links); POST saves the form: the topics ticked subscribed, the others not, or
// (`action=unsubscribe_all`) the person unsubscribed as by the one-click link. Same headers and
// token rules as the unsubscribe page (handlers/unsubscribe.ts).
import type { Handler, Handlers, PathCtx } from './context.js';
import { NOT_FOUND, escape, masked, page } from './unsubscribe.js';
import { readPreferencesToken } from '../channels/topic-links.js';
import { unsubscribeByLink, unsubscribeSubject } from '../store/index.js';
import { setSubscriptions, subscriptionsOf, topicsOf, type TopicRow } from '../store/topics.js';

async function subjectOf(ctx: PathCtx<'token'>) {
  const token = readPreferencesToken(ctx.messaging.unsubscribeKey, ctx.params.token);
  if (!token) return undefined;
  const s = await unsubscribeSubject(ctx.db, token.workspaceId, token.personId);
  return s && { ...token, s };
}

function form(topics: readonly TopicRow[], subscribed: Readonly<Record<string, boolean>>): string {
  const rows = topics
    .map((t) => `<p><label><input type="checkbox" name="topic" value="${t.id}"${subscribed[t.id] ? ' checked' : ''}> <strong>${escape(t.name)}</strong>${t.description ? `<br><small>${escape(t.description)}</small>` : ''}</label></p>`)
    .join('');
  const save = topics.length > 0 ? `<form method="post"><input type="hidden" name="action" value="save">${rows}<button type="submit">Save preferences</button></form>` : '';
  return `${save}<form method="post"><input type="hidden" name="action" value="unsubscribe_all"><p><button type="submit">Unsubscribe from everything</button></p></form>`;
}

const show: Handler<'GET /p/{token}'> = async (ctx) => {
  const found = await subjectOf(ctx);
  if (!found) return NOT_FOUND;
  const [topics, subscribed] = await Promise.all([topicsOf(ctx.db, found.workspaceId), subscriptionsOf(ctx.db, found.workspaceId, found.personId)]);
  return page(200, `Your preferences for ${found.s.workspace}`, `<p>What <strong>${escape(found.s.workspace)}</strong> sends to <strong>${escape(masked(found.s.email))}</strong>:</p>${form(topics, subscribed)}`);
};

const save: Handler<'POST /p/{token}'> = async (ctx) => {
  const found = await subjectOf(ctx);
  if (!found) return NOT_FOUND;
  const fields = new URLSearchParams(Buffer.from(ctx.raw ?? new Uint8Array(0)).toString('utf8'));
  if (fields.get('action') === 'unsubscribe_all') {
    await unsubscribeByLink(ctx.db, found.personId);
    await ctx.segments.touched(found.workspaceId, [found.personId]);
    return page(200, 'Unsubscribed', `<p>${escape(masked(found.s.email))} will get no more emails from <strong>${escape(found.s.workspace)}</strong>.</p>`);
  }
  const ticked = new Set(fields.getAll('topic').map((id) => id.toLowerCase()));
  const topics = await topicsOf(ctx.db, found.workspaceId);
  await setSubscriptions(ctx.db, found.personId, Object.fromEntries(topics.map((t) => [t.id, ticked.has(t.id)])));
  const subscribed = Object.fromEntries(topics.map((t) => [t.id, ticked.has(t.id)]));
  return page(200, 'Preferences saved', `<p>Saved for <strong>${escape(masked(found.s.email))}</strong>.</p>${form(topics, subscribed)}`);
};

export const preferenceHandlers = {
  'GET /p/{token}': show,
  'POST /p/{token}': save,
} satisfies Handlers;

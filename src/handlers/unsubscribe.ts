// One-click unsubscribe (docs/channels.md, RFC 8058), outside /api/v1, no credential. GET answers a
// page naming the workspace and the masked address with a button that POSTs, and changes
// nothing (mail scanners follow links). POST (`List-Unsubscribe=One-Click` from a mail client,
// or the page's form) unsubscribes the person the token names: 200, never a redirect; repeats
// answer the same. A token Herald did not make, or whose person is gone: a 404 page.
import { createHash } from 'node:crypto';
import type { Handler, Handlers, PathCtx } from './context.js';
import type { Reply } from './reply.js';
import { readUnsubscribeToken } from '../channels/email/unsubscribe.js';
import { unsubscribeByLink, unsubscribeSubject } from '../store/index.js';
import { readTopicToken } from '../channels/topic-links.js';
import { findTopic, setSubscriptions } from '../store/topics.js';

export const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The pages' one style sheet: readable on a phone, and a button a thumb can hit (44 px high at least). */
const STYLE =
  'body{font:1rem/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}' +
  'button{font:inherit;font-weight:600;min-height:2.75rem;padding:.625rem 1.5rem;border:0;border-radius:.5rem;background:#b42318;color:#fff;cursor:pointer}' +
  'button:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}';

/**
 * As the dashboard's (src/http/dashboard.ts): never framed, no script, nothing sniffed, no
 * Referer carrying the token away; the style sheet is allowed by its hash, the form posts here
 * only, and the empty `data:` favicon keeps the browser from asking for /favicon.ico (a 404).
 */
const HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

export function page(status: number, title: string, body: string): Reply {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><link rel="icon" href="data:,"><title>${escape(title)}</title><style>${STYLE}</style></head><body><main><h1>${escape(title)}</h1>${body}</main></body></html>`;
  return { status, body: html, headers: HEADERS };
}

export const NOT_FOUND = page(404, 'Link not recognised', '<p>This link is not valid. Nothing was changed.</p>');

/** `ma***@example.com`: enough to recognise, not enough to harvest. */
export function masked(email: string | null): string {
  if (!email) return 'your address';
  const at = email.lastIndexOf('@');
  return at < 0 ? '***' : `${email.slice(0, Math.min(2, at))}***${email.slice(at)}`;
}

async function subjectOf(ctx: PathCtx<'token'>): Promise<{ personId: string; workspaceId: string; s: { workspace: string; email: string | null } } | undefined> {
  const token = readUnsubscribeToken(ctx.messaging.unsubscribeKey, ctx.params.token);
  if (!token) return undefined;
  const s = await unsubscribeSubject(ctx.db, token.workspaceId, token.personId);
  return s && { personId: token.personId, workspaceId: token.workspaceId, s };
}

/** A topic's email links here with a token of its own (docs/audiences.md): it unsubscribes from that topic only. */
async function topicSubjectOf(ctx: PathCtx<'token'>) {
  const token = readTopicToken(ctx.messaging.unsubscribeKey, ctx.params.token);
  if (!token) return undefined;
  const [s, topic] = await Promise.all([unsubscribeSubject(ctx.db, token.workspaceId, token.personId), findTopic(ctx.db, token.workspaceId, token.topicId)]);
  return s && topic ? { personId: token.personId, s, topic } : undefined;
}

const show: Handler<'GET /u/{token}'> = async (ctx) => {
  const found = await subjectOf(ctx);
  if (!found) {
    const t = await topicSubjectOf(ctx);
    if (!t) return NOT_FOUND;
    return page(200, `Unsubscribe from ${t.topic.name}`, `<p>Stop <strong>${escape(t.topic.name)}</strong> messages from <strong>${escape(t.s.workspace)}</strong> to <strong>${escape(masked(t.s.email))}</strong>?</p><form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`);
  }
  const { workspace, email } = found.s;
  return page(200, `Unsubscribe from ${workspace}`, `<p>Stop emails from <strong>${escape(workspace)}</strong> to <strong>${escape(masked(email))}</strong>?</p><form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`);
};

const unsubscribe: Handler<'POST /u/{token}'> = async (ctx) => {
  const found = await subjectOf(ctx);
  if (!found) {
    const t = await topicSubjectOf(ctx);
    if (!t) return NOT_FOUND;
    await setSubscriptions(ctx.db, t.personId, { [t.topic.id]: false });
    return page(200, 'Unsubscribed', `<p>${escape(masked(t.s.email))} will get no more <strong>${escape(t.topic.name)}</strong> messages from <strong>${escape(t.s.workspace)}</strong>.</p>`);
  }
  await unsubscribeByLink(ctx.db, found.personId);
  // Consent changed: a segment's has_channel may no longer hold.
  await ctx.segments.touched(found.workspaceId, [found.personId]);
  return page(200, 'Unsubscribed', `<p>${escape(masked(found.s.email))} will get no more emails from <strong>${escape(found.s.workspace)}</strong>.</p>`);
};

export const unsubscribeHandlers = {
  'GET /u/{token}': show,
  'POST /u/{token}': unsubscribe,
} satisfies Handlers;

// One-click unsubscribe (DECISIONS §13, RFC 8058), outside /api/v1, no credential. GET answers a
// page naming the workspace and the masked address with a button that POSTs, and changes
// nothing (mail scanners follow links). POST (`List-Unsubscribe=One-Click` from a mail client,
// or the page's form) unsubscribes the person the token names: 200, never a redirect; repeats
// answer the same. A token Herald did not make, or whose person is gone: a 404 page.
import type { Handler, Handlers } from './context.js';
import type { Reply } from './reply.js';
import { readUnsubscribeToken } from '../email/unsubscribe.js';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(status: number, title: string, body: string): Reply {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><meta name="robots" content="noindex"><title>${escape(title)}</title></head><body style="font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem"><h1>${escape(title)}</h1>${body}</body></html>`;
  return { status, body: html, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' } };
}

const NOT_FOUND = page(404, 'Link not recognised', '<p>This unsubscribe link is not valid. Nothing was changed.</p>');

/** `ma***@example.com`: enough to recognise, not enough to harvest. */
function masked(email: string | null): string {
  if (!email) return 'your address';
  const at = email.lastIndexOf('@');
  return at < 0 ? '***' : `${email.slice(0, Math.min(2, at))}***${email.slice(at)}`;
}

interface Subject {
  workspace: string;
  email: string | null;
  status: string;
}

async function subjectOf(ctx: Parameters<Handler>[0]): Promise<{ personId: string; s: Subject } | undefined> {
  const token = readUnsubscribeToken(ctx.messaging.unsubscribeKey, ctx.params.token!);
  if (!token) return undefined;
  const r = await ctx.db.query<Subject>(
    'SELECT w.name AS workspace, p.email, p.status FROM people p JOIN workspaces w ON w.id = p.workspace_id WHERE p.id = $1 AND p.workspace_id = $2',
    [token.personId, token.workspaceId],
  );
  return r.rows[0] && { personId: token.personId, s: r.rows[0] };
}

const show: Handler = async (ctx) => {
  const found = await subjectOf(ctx);
  if (!found) return NOT_FOUND;
  const { workspace, email } = found.s;
  return page(200, `Unsubscribe from ${workspace}`, `<p>Stop emails from <strong>${escape(workspace)}</strong> to <strong>${escape(masked(email))}</strong>?</p><form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`);
};

const unsubscribe: Handler = async (ctx) => {
  const found = await subjectOf(ctx);
  if (!found) return NOT_FOUND;
  await ctx.db.query(
    `UPDATE people SET status = 'unsubscribed', unsubscribed_at = now(), unsubscribe_reason = 'unsubscribe_link', updated_at = now() WHERE id = $1 AND status <> 'unsubscribed'`,
    [found.personId],
  );
  return page(200, 'Unsubscribed', `<p>${escape(masked(found.s.email))} will get no more emails from <strong>${escape(found.s.workspace)}</strong>.</p>`);
};

export const unsubscribeHandlers = {
  'GET /u/{token}': show,
  'POST /u/{token}': unsubscribe,
} satisfies Handlers;

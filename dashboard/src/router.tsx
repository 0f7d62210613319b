// A small client-side router over the History API: the app's pages are real addresses under
// /dashboard/ (Herald answers any of them with index.html), so reload, back and bookmarks work.
import { useEffect, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

const BASE = '/dashboard';
const listeners = new Set<() => void>();
const emit = () => listeners.forEach((l) => l());
window.addEventListener('popstate', emit);

const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};
const current = () => location.pathname + location.search;

/** `to` is an app path (`/w/…`). */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const url = to.startsWith(BASE) ? to : BASE + to;
  if (opts.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  emit();
}

/** The current app path (without /dashboard) and query. */
export function useRoute(): { path: string; query: URLSearchParams } {
  const href = useSyncExternalStore(subscribe, current);
  const url = new URL(href, location.origin);
  const path = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) || '/' : url.pathname;
  return { path: path.replace(/\/+$/, '') || '/', query: url.searchParams };
}

/** The query with `changes` applied (empty values dropped), as `?…`. */
export function withQuery(query: URLSearchParams, changes: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams(query);
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === '' || v === 0) q.delete(k);
    else q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

export function Link({ to, onClick, ...rest }: LinkProps) {
  const href = BASE + to;
  const click = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    // A new tab or window (modifier keys, middle button) is the browser's business.
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={href} onClick={click} {...rest} />;
}

/** Replaces the current address with `to` (an app path). */
export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

// The session token: read from the sign-in link's `#token=` (then removed from the address bar
// and history), pasted, kept in sessionStorage (this tab only, gone when it closes). A 401 from
// the API ends the session: the sign-in page shows in place, on the same address, so signing in
// again returns to the page the user was on.
import { useSyncExternalStore } from 'react';

const KEY = 'herald.session';
const listeners = new Set<() => void>();
let notice = '';

const emit = () => listeners.forEach((l) => l());
const subscribe = (l: () => void) => {
  listeners.add(l);
  return () => listeners.delete(l);
};

export function token(): string | null {
  return sessionStorage.getItem(KEY);
}

/** Moves a `#token=` of the address into sessionStorage; the link's token leaves no trace in history. */
export function takeTokenFromLink(): void {
  const [, linked] = /^#token=([^&]+)/.exec(location.hash) ?? [];
  if (!linked) return;
  signIn(decodeURIComponent(linked));
  history.replaceState(history.state, '', location.pathname + location.search);
}

export function signIn(t: string): void {
  sessionStorage.setItem(KEY, t.trim());
  notice = '';
  emit();
}

/** Ends the session; `why` is shown on the sign-in page. */
export function signOut(why = ''): void {
  sessionStorage.removeItem(KEY);
  notice = why;
  emit();
}

export function useSession(): { token: string | null; notice: string } {
  const t = useSyncExternalStore(subscribe, token);
  return { token: t, notice };
}

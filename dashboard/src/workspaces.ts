// The caller's workspaces, loaded once per session token and shared by the switcher and the pages;
// `refreshWorkspaces` after a creation or a rename.
import { useSyncExternalStore } from 'react';
import { api, call, type Schemas } from './api';
import { token } from './session';

type Workspace = Schemas['Workspace'];
/** The list, for the session that asked (another sign-in asks again). */
let cached: { token: string | null; list: Promise<Workspace[]> } | null = null;
let version = 0;
const listeners = new Set<() => void>();

export function workspaces(): Promise<Workspace[]> {
  if (cached?.token !== token()) {
    const list = call(api.GET('/workspaces')).then((r) => r.workspaces);
    cached = { token: token(), list };
    // A failure is not kept: the next call asks again.
    list.catch(() => cached?.list === list && (cached = null));
  }
  return cached!.list;
}

export function refreshWorkspaces(): void {
  cached = null;
  version++;
  listeners.forEach((l) => l());
}

/** Changes when the list is refreshed (a dependency for useLoad). */
export function useWorkspacesVersion(): number {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => version,
  );
}

const LAST = 'herald.workspace';
export const lastWorkspace = () => localStorage.getItem(LAST);
export const rememberWorkspace = (id: string) => localStorage.setItem(LAST, id);

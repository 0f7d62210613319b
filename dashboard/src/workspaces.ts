// The caller's workspaces, loaded once per session and shared by the switcher and the pages;
// `refreshWorkspaces` after a creation or a rename.
import { useSyncExternalStore } from 'react';
import { api, call, type Schemas } from './api';

type Workspace = Schemas['Workspace'];
let list: Promise<Workspace[]> | null = null;
let version = 0;
const listeners = new Set<() => void>();

export function workspaces(): Promise<Workspace[]> {
  list ??= call(api.GET('/workspaces')).then((r) => r.workspaces);
  // A failure is not kept: the next call asks again.
  list.catch(() => (list = null));
  return list;
}

export function refreshWorkspaces(): void {
  list = null;
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

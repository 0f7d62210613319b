// The caller's workspaces: one list per session token, shared by the switcher and the pages;
// `refreshWorkspaces` after a creation or a rename.
import { useEffect, useSyncExternalStore } from 'react';
import { api, call, type Schemas } from './api';
import { token } from './session';
import type { Load } from './ui';

type Workspace = Schemas['Workspace'];
let state: Load<Workspace[]> = { state: 'loading' };
/** The session token `state` belongs to. */
let loadedFor: string | null | undefined;
const listeners = new Set<() => void>();
const set = (s: Load<Workspace[]>) => {
  state = s;
  listeners.forEach((l) => l());
};

export function refreshWorkspaces(): void {
  const t = (loadedFor = token());
  if (state.state !== 'done') set({ state: 'loading' });
  call(api.GET('/workspaces')).then(
    (r) => loadedFor === t && set({ state: 'done', data: r.workspaces }),
    (error: Error) => loadedFor === t && set({ state: 'failed', error }),
  );
}

/** The list (loaded on first use, and again for another session), and a retry. */
export function useWorkspaces(): [Load<Workspace[]>, () => void] {
  const s = useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => void listeners.delete(l);
    },
    () => state,
  );
  useEffect(() => {
    if (loadedFor !== token()) {
      state = { state: 'loading' };
      refreshWorkspaces();
    }
  });
  // Until the effect has asked, what is loaded may be another session's.
  return [loadedFor === token() ? s : { state: 'loading' }, refreshWorkspaces];
}

const LAST = 'herald.workspace';
export const lastWorkspace = () => localStorage.getItem(LAST);
export const rememberWorkspace = (id: string) => localStorage.setItem(LAST, id);

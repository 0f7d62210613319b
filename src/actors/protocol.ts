// Messages between the front (main thread) and the actor threads.
import type { Reply } from '../http/reply.js';
import type { SessionUser } from '../auth/sessions.js';
import type { StoreLink } from '../store/open.js';

export interface KeyPrincipal {
  kind: 'key';
  keyId: string;
  workspaceId: string;
  permissions: string[];
}

export interface SessionPrincipal {
  kind: 'session';
  user: SessionUser;
}

export interface ActorRequest {
  id: number;
  route: string;
  params: Record<string, string>;
  query: string;
  body: Uint8Array | null;
  principal: KeyPrincipal | SessionPrincipal | null;
  /** The workspace the request acts on (the key's, or the session route's), when any. */
  workspaceId: string | null;
  ip: string;
}

export type FromActor = { type: 'ready' } | { type: 'reply'; id: number; reply: Reply } | { type: 'stopped' };
export type ToActor = { type: 'request'; req: ActorRequest } | { type: 'stop' };

export interface ActorWorkerData {
  index: number;
  store: StoreLink;
}

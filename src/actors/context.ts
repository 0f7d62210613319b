// What an actor handler receives and answers.
import type { Db } from '../store/db.js';
import type { Log } from '../eventlog/event-log.js';
import type { Route } from '../http/routes.js';
import type { Reply } from '../http/reply.js';
import type { KeyPrincipal } from './protocol.js';
import type { SessionUser } from '../auth/sessions.js';

export type Role = 'owner' | 'admin' | 'member';

export interface Ctx {
  db: Db;
  log: Log;
  route: Route;
  params: Record<string, string>;
  query: Record<string, unknown>;
  // Validated against the route's schema before the handler runs.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  workspaceId: string | null;
  /** Session routes: the signed-in user and, on workspace routes, their role there. */
  user: SessionUser | null;
  role: Role | null;
  key: KeyPrincipal | null;
  ip: string;
  /** Runs `task` after the response has been handed back (failures are logged). */
  defer(task: () => Promise<void>): void;
}

export type Handler = (ctx: Ctx) => Promise<Reply>;

// Messages between the front (main thread) and the actor threads.
import type { Reply } from '../handlers/reply.js';
import type { KeyPrincipal, NoPrincipal, SessionPrincipal } from '../domain/principals.js';
import type { RouteId } from '../routes.js';
import type { StoreLink } from '../store/index.js';
import type { MetricsJson } from '../metrics/scrape.js';

export interface ActorRequest {
  id: number;
  route: RouteId;
  params: Record<string, string>;
  query: string;
  /** The headers the route reads (routes.ts `headers`), by lower-case name, every value sent. */
  headers: Record<string, string[]>;
  body: Uint8Array | null;
  /** An upload route's body (routes.ts `upload`): the file the front staged it in, or null when none was sent. */
  upload: string | null;
  principal: KeyPrincipal | SessionPrincipal | NoPrincipal;
  /** The workspace the request acts on (the key's, or the session route's), when any. */
  workspaceId: string | null;
  ip: string;
  /** When the front stops waiting and answers 503 (ms since the epoch): work still under way then must record nothing. */
  deadline: number;
}

export interface ActorReply {
  id: number;
  reply: Reply;
}

// Requests and replies travel in batches, those of one turn of the sender's event loop
// together: a message between threads has a fixed cost (a wake-up of the receiving thread, an
// event dispatched there) that one request per message paid on each side.
// A scrape of /metrics asks each actor for its registry (`metrics`, answered with the same id).
export type FromActor = { type: 'ready' } | { type: 'replies'; replies: ActorReply[] } | { type: 'metrics'; id: number; metrics: MetricsJson };
export type ToActor = { type: 'requests'; reqs: ActorRequest[] } | { type: 'stop' } | { type: 'metrics'; id: number };

export interface ActorWorkerData {
  index: number;
  store: StoreLink;
  /** The key sealing push credentials (HERALD_SECRETS_KEY or the generated one), as hex. */
  secretsKey: string;
  /** HERALD_PUBLIC_URL, else the address Herald listens on (the port bound): the base of links and callback URLs. */
  publicUrl: string;
}

// What a handler receives and answers. The actor pipeline (actors/pipeline.ts) has already
// authenticated, limited, parsed and validated the request when it builds a Ctx.
import type { Db } from '../store/index.js';
import type { Log } from '../eventlog/index.js';
import type { BodyOf, HandledRouteId, ParamsOf, QueryOf, WorkspacelessRouteId } from '../routes.js';
import type { Reply } from './reply.js';
import type { KeyPrincipal, SessionUser } from '../domain/principals.js';
import type { Role } from '../domain/roles.js';
import type { PushEngine } from '../channels/push/engine.js';
import type { ProviderRegistry } from '../channels/push/registry.js';
import type { EventTriggers, Goals, TriggerClaims } from '../campaigns/index.js';
import type { MessagingSettings } from '../channels/settings.js';
import type { RenderPool } from '../render/pool.js';
import type { ChannelPools } from '../channels/pools.js';
import type { OutboundPolicy } from '../net/destinations.js';
import type { AnalyticsReader } from '../domain/analytics.js';

/** What the outbound webhook routes need beyond the store (docs/webhooks.md). */
interface OutboundWebhooks {
  /** The destination rule an endpoint URL is judged by when it is saved. */
  outbound: OutboundPolicy;
  /** Tells this actor's dispatcher that deliveries are due now. */
  nudge(): void;
}

/** What the webhook trigger needs beyond the store. */
interface WebhookTriggers {
  /** Where Idempotency-Keys are claimed (NATS KV with NATS_URL, else the store). */
  claims: TriggerClaims;
  /** HERALD_TRIGGER_AUDIENCE_CEILING: at most this many people per trigger. */
  audienceCeiling: number;
  /** Tells the workflow executor that enrolments are due now. */
  enrolled(): void;
}

/** What the actor pipeline builds for any route (actors/pipeline.ts). */
export interface RequestCtx {
  db: Db;
  /** The event Log: facts appended here are acknowledged once durable. */
  events: Log;
  /** The push send pipeline of this actor (its counters are the workspace's). */
  push: PushEngine;
  /** This actor's push providers by workspace, and the seal of stored credentials. */
  providers: ProviderRegistry;
  /** The channels' server settings (docs/channels.md). */
  messaging: MessagingSettings;
  /** This actor's render pool: Liquid rendered off the actor thread, within the send budgets (the dashboard's template preview). */
  renders: Pick<RenderPool, 'render'>;
  /** This actor's channels' connection pools (a campaign node's test send, a channel's settings checked). */
  pools: ChannelPools;
  triggers: WebhookTriggers;
  /** The event-triggered campaigns of this actor's workspaces: fired by tracked events, told of campaign changes. */
  eventTriggers: EventTriggers;
  /** Campaign goals of this actor's workspaces: reached by tracked events, told of campaign changes. */
  goals: Pick<Goals, 'reached' | 'changed'>;
  webhooks: OutboundWebhooks;
  /** CSV imports: where this process stages uploads (an import names it), and the runner to wake. */
  imports: { stagedOn: string; nudge(): void };
  /** Segments kept live (audiences/segments.ts): told of segment changes, and of the people a request changed. */
  segments: {
    changed(workspaceId: string): void;
    touched(workspaceId: string, personIds: readonly string[], eventIds?: readonly string[]): Promise<void>;
    performed(workspaceId: string, events: readonly { id: string; person_id: string; type: string }[], created: readonly string[]): Promise<void>;
  };
  /** No ClickHouse: the store is the analytics store, so a deleted person's events are archived there (store/people.ts). */
  analyticsInStore: boolean;
  /** The analytics reads (docs/analytics.md): ClickHouse with CLICKHOUSE_URL, else the store. */
  analytics: AnalyticsReader;
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** The headers the route reads (routes.ts `headers`), by lower-case name, every value sent. */
  headers: Record<string, string[]>;
  /** Outside routes (unsubscribe, provider callbacks): the body's bytes as received, never parsed before. */
  raw: Uint8Array | null;
  /** Upload routes (routes.ts `upload`): the file the body was staged in, null when none was sent; answering 202 takes it over. */
  upload: string | null;
  body: unknown;
  /** The JSON body's size in bytes as parsed (decoded when it came compressed); 0 without one. */
  bodyBytes: number;
  workspaceId: string | null;
  /** Session routes: the signed-in user and, on workspace routes, their role there. */
  user: SessionUser | null;
  role: Role | null;
  key: KeyPrincipal | null;
  ip: string;
  /** When the front answers 503 for this request if the actor has not answered (ms since the epoch). */
  deadline: number;
  /** Runs `task` after the response has been handed back (failures are logged). */
  defer(task: () => Promise<void>): void;
}

/**
 * A route's context: its path parameters by name, its body and query as its schemas validated
 * them, and its workspace (null on a workspaceless route). Without `Id`, what every route with a
 * workspace has in common.
 */
export type Ctx<Id extends HandledRouteId | undefined = undefined> = Id extends HandledRouteId
  ? Omit<RequestCtx, 'params'> & { params: ParamsOf<Id>; body: BodyOf<Id>; query: QueryOf<Id>; workspaceId: Id extends WorkspacelessRouteId ? null : string }
  : RequestCtx & { workspaceId: string };

/** The context of any route whose path names the parameters `N` (a helper shared by such routes). */
export type PathCtx<N extends string> = Ctx & { params: { readonly [P in N]: string } };

export type Handler<Id extends HandledRouteId | undefined = undefined> = (ctx: Ctx<Id>) => Promise<Reply>;

/**
 * A resource module's handlers, by route id. The function type is spelt out: TypeScript would
 * compare `Handler<Id>` by its argument and refuse a handler that reads no body (`Handler`).
 */
export type Handlers = { [Id in HandledRouteId]?: (ctx: Ctx<Id>) => Promise<Reply> };

/** Every handled route's handler. */
export type AllHandlers = { [Id in HandledRouteId]-?: (ctx: Ctx<Id>) => Promise<Reply> };

// The channel model (docs/channels.md, "The channel model"), after Novu's provider interface: a
// channel declares what a send on it needs, and its providers do the I/O side by side (send and
// classify; where they have callbacks, verify and parse them). Every caller that sends a node (a
// campaign step, a test send) asks the registry's channel (`sendNode`); behind it the send path
// (channels/send.ts for channels with one address a person, channels/push/engine.ts for a
// person's devices) runs the same decisions (channels/decisions.ts), render step (the render
// pool), retry rule (channels/retry.ts), record writer (store/messages.ts), metrics call and
// callback applier (channels/callbacks.ts) for all of them; what differs is asked of the channel
// object, never branched on by name.
import type { Db, Queryable } from '../store/db.js';
import type { PersonRow } from '../store/people.js';
import type { RenderPool } from '../render/pool.js';
import type { EmailNode, MessageNode, SmsNode, Templates } from '../domain/campaigns.js';
import type { AddressChannel, AddressSuppressionType, Channel as ChannelName, ProviderEventKind } from '../domain/messages.js';
import type { Held, PolicyScope } from './decisions.js';
import type { MessagingSettings } from './settings.js';
import type { ChannelPools } from './pools.js';
import type { Wrap } from '../domain/tracking.js';

/** What every channel declares to the decisions. */
export interface ChannelRules {
  readonly name: ChannelName;
  /** Whether a `bounced` person is sent nothing (their email address bounced). */
  readonly stopsAtBounce: boolean;
  /** What of the send policy applies to it. */
  readonly policy: PolicyScope;
}

/** One recipient of a node's send. */
export interface NodeRecipient {
  /** The record's id, chosen by the caller (a campaign send: UUIDv5 of enrolment and node). */
  id: string;
  person: PersonRow;
  variables: Record<string, unknown>;
  /** A campaign send's template scope (docs/campaigns-runtime.md): the triggering event's parameters, a webhook's trigger_data. */
  event?: Record<string, unknown>;
  trigger?: Record<string, unknown>;
  /** The triggering event, recorded as the record's event_id. */
  eventId?: string;
}

/** A message node sent to recipients: a campaign step, or a dashboard test send. */
export interface NodeSend {
  workspaceId: string;
  campaignId: string;
  node: MessageNode;
  /** The template the node names, if any (its fields apply where the node has none). */
  templates: Templates;
  /** What must commit with the records, in their transaction (a campaign's enrolments moved past the node). */
  withRecords: (q: Queryable) => Promise<void>;
  /** Recorded on every message (a dashboard test send: `["test"]`). */
  tags?: string[];
  /** A dashboard test send (README, Dashboard): the send policy does not apply (the person's and address checks still do). */
  outsidePolicy?: boolean;
  /** Past it, nothing more is waited for from a provider (a test send answers within its request's time). */
  deadline?: AbortSignal;
  /** The node names a topic: the people not subscribed to it, skipped `topic_unsubscribed` (docs/audiences.md). */
  optedOut?: ReadonlySet<string>;
}

/** What became of one recipient, as recorded. */
export interface NodeOutcome {
  id: string;
  status: string;
  provider: string;
  provider_id: string | null;
  /** The address sent to (null for push, whose tokens are its deliveries'). */
  address: string | null;
  skip_reason: string | null;
  error: string | null;
}

/** A channel in the registry: its rules, and the one entry every caller that sends a node uses. */
export interface Channel extends ChannelRules {
  /** Sends the node to each recipient; answers their outcomes, in order, once recorded. */
  sendNode(deps: ChannelDeps, send: NodeSend, recipients: readonly NodeRecipient[]): Promise<NodeOutcome[]>;
  /** A channel whose content is plain Liquid fields (every channel but push, whose content has its own shape): those of a node, its own else its template's. */
  fields?(node: MessageNode, templates: Templates): Record<string, string>;
  /** The rendered fields as a preview shows them. */
  preview?(rendered: Record<string, string>): Record<string, string | null>;
}

/** A provider's answer to one send, classified into the outcome every channel shares. */
export type SendAnswer =
  | {
      status: 'sent';
      providerId: string;
      /** The sandbox: what the provider would report later, applied through the callback applier. */
      reported?: ProviderEventKind;
    }
  | { status: 'failed'; error: string; retryable?: boolean; retryAfterMs?: number; suppress?: AddressSuppressionType };

/** One message to one address, rendered and composed. */
export interface Outgoing {
  workspaceId: string;
  messageId: string;
  address: string;
  /** The rendered fields as the channel composed them (channel.compose). */
  fields: Readonly<Record<string, string>>;
  unsubscribeUrl: string;
  /** Past it, nothing is waited for (a test send answers within its request's time). */
  deadline?: AbortSignal;
}

/** A workspace's provider of a channel, with the settings it was opened with. */
export interface OpenChannel {
  /** Recorded as the messages' `provider`: `smtp`, `twilio`, `sandbox`. */
  readonly provider: string;
  /** The person's address on this channel (in the form sends and suppressions use), if they have one. */
  address(person: PersonRow): string | undefined;
  /** One send attempt; the send path retries what it answers retryable. A channel not configured answers each send `failed` with why. */
  send(out: Outgoing): Promise<SendAnswer>;
}

/** What channels' providers may use: the store, the server's settings, this actor's connection pools and render pool. */
export interface ChannelDeps {
  db: Db;
  settings: MessagingSettings;
  /** Each channel's own connection pools, made by the channel on first use. */
  pools: ChannelPools;
  renders: Pick<RenderPool, 'render'>;
}

/** What the settings route gives a channel. */
export type SettingsDeps = Pick<ChannelDeps, 'settings' | 'pools'>;

/**
 * A channel's settings as the settings route handles them (PUT /workspaces/{id}/channels/<name>,
 * GET /workspaces/{id}/channels): stored sealed in the channel's column (store/channel-settings.ts).
 */
export interface SettingsRoute {
  /**
   * Applies a PUT's body (already valid against the route's schema; partial: a field omitted
   * keeps its stored value, `null` removes one) within the caller's transaction, the stored row
   * locked; refuses what cannot be completed with InvalidInput naming the fields.
   */
  put(q: Queryable, deps: SettingsDeps, workspaceId: string, body: unknown): Promise<void>;
  /** How GET /channels shows the channel: its non-secret identifiers and the callback URLs to paste into the provider's console. */
  describe(q: Queryable, deps: SettingsDeps, workspaceId: string): Promise<Record<string, unknown>>;
}

/** A channel that sends a person one message at one address of theirs (email, SMS), through channels/send.ts. */
export interface AddressedChannel extends Channel {
  readonly name: AddressChannel;
  /** The skip of a person with no address on it. */
  readonly noAddress: Held;
  /** A node's Liquid fields (its own, else its template's). */
  fields(node: EmailNode | SmsNode, templates: Templates): Record<string, string>;
  /** The rendered fields as sent (email: the text part derived once), and what the record keeps of them. */
  compose(rendered: Record<string, string>): { fields: Record<string, string>; title: string | null; body: string };
  /**
   * Herald's own tracking (docs/tracking.md): the composed fields as sent, their links wrapped
   * by `wrap` and the open pixel `pixel` placed where the channel has one (either absent: off).
   */
  track?(fields: Readonly<Record<string, string>>, tracking: { wrap?: Wrap; pixel?: string }): Record<string, string>;
  /** The rendered fields as a preview shows them. */
  preview(rendered: Record<string, string>): Record<string, string | null>;
  /** The workspace's provider: its stored settings, else the sandbox when the server says so. */
  open(deps: ChannelDeps, workspaceId: string): Promise<OpenChannel>;
  /** Its settings route. */
  readonly settings: SettingsRoute;
  /** An address as its suppressions store it (a suppression set by hand); refuses one that is not an address of this channel with InvalidInput. */
  suppressionAddress(address: string): string;
}

/** The provider of a channel that cannot send: each send fails with why. */
export function unavailable(provider: string, address: OpenChannel['address'], why: string): OpenChannel {
  return { provider, address, send: async () => ({ status: 'failed', error: why }) };
}

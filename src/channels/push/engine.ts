// The push send pipeline (docs/channels.md; README, Request bodies and Routes), run in the
// actor that owns the workspace. A send to many recipients is three phases:
//   1. load, in one statement (store/send-context.ts): the policy, the recipients' sendable
//      devices, which of their tokens are suppressed; and, when a cap is set, the send counters
//      of people the actor does not hold yet;
//   2. decide per recipient, in the decisions' one order (channels/decisions.ts): consent →
//      devices → token suppression → (render) → quiet hours → daily cap → rolling cap. The recipients still in after the
//      suppression check are rendered together in the render pool (src/render/pool.ts, off this
//      thread); then the policy checks run synchronously, a send reserving its counter slot with
//      no await between the check and the reservation;
//   3. send through the workspace's providers within the workspace's share of the actor's send
//      concurrency (channels/send-shares.ts), then write every record
//      and delivery (one statement) and the dead-token effects and the caller's `withRecords`
//      (with them, in one transaction) before answering.
import type { Db, Queryable } from '../../store/db.js';
import type { PersonRow } from '../../store/people.js';
import { sendContext, trackingSettings } from '../../store/send-context.js';
import { trackingOf } from '../../domain/tracking.js';
import { messageTracker, type TrackingLinks } from '../tracking-links.js';
import { invalidateDevices, type SendableDevice } from '../../store/devices.js';
import { suppressToken } from '../../store/suppressions.js';
import { saveMessages, type DeliveryRecord, type PushRecord } from '../../store/messages.js';
import { setsCap, type SendPolicy } from '../../domain/send-policy.js';
import { consent, topic, sendPolicy } from '../decisions.js';
import { PUSH_RULES as push } from './rules.js';
import { outcomeError, personScope, type CompiledContent, type PushContent, type RenderOutcome, type TemplateScope } from '../../domain/templates.js';
import type { PushOutcome } from '../../domain/push-outcome.js';
import type { RenderPool } from '../../render/pool.js';
import { newId } from '../../ids.js';
import { sendWithRetries, type PushDevice, type PushMessage, type RetryOptions } from './index.js';
import type { SendCounters } from '../counters.js';
import { SendShares } from '../send-shares.js';
import { groupBy } from '../../util/group-by.js';
import type { ProviderRegistry, WorkspaceProviders } from './registry.js';
import type { DevicePlatform as Platform } from '../../domain/tokens.js';
import { countMessages } from '../../metrics/index.js';
import type { SendStatus } from '../../domain/messages.js';

/** Where a workspace's providers come from: the ProviderRegistry, or a stand-in in tests. */
type ProviderSource = Pick<ProviderRegistry, 'forWorkspace'>;

/** Where content is rendered: the actor's render pool. */
type Renderer = Pick<RenderPool, 'render'>;

/** The push channel's address and suppression skips (decisions 2 and 3). */
type SkipReason = 'no_active_device_tokens' | 'requested_device_not_active' | 'device_token_suppressed';

/**
 * What became of one recipient. `id` is its record's, or null when nothing was stored (an
 * immediate send's skip, a recipient with no person); `at` is when it was decided or sent (ms).
 * How an answer shows it is the caller's (the push route: README, Routes).
 */
export interface SendOutcome {
  id: string | null;
  status: SendStatus;
  at: number;
  provider: string;
  provider_id?: string;
  error?: string;
  skip_reason?: string;
}

/** What every recipient of one send shares. */
export interface Send {
  workspaceId: string;
  content: CompiledContent;
  tags?: string[];
  campaignId?: string;
  /** A campaign's push node: recorded on its messages. */
  nodeId?: string;
  eventId?: string;
  /** A campaign push node's `bypass_frequency_cap`: skips both caps, never quiet hours. */
  bypassCaps?: boolean;
  /** A dashboard test send (README, Dashboard): neither quiet hours nor the caps apply. */
  outsidePolicy?: boolean;
  /** A campaign node naming a topic: the people not subscribed to it, skipped `topic_unsubscribed` (docs/audiences.md). */
  optedOut?: ReadonlySet<string>;
  /** How a template that fails to render is answered: a 400 for the whole request, or that recipient `failed`. */
  renderErrors: 'throw' | 'fail';
  /** What must commit with the records, in their transaction (a campaign's enrolments moved past the node). */
  withRecords?: (q: Queryable) => Promise<void>;
}

export interface Recipient {
  /** Null: the recipient failed before any person was found (`failure` says why); nothing is stored. */
  person: PersonRow | null;
  failure?: string;
  /** Selects one of the person's sendable devices. */
  deviceToken?: string;
  /** Only the person's devices of this platform. */
  platform?: Platform;
  variables: Record<string, unknown>;
  /**
   * The record's id, chosen by the caller: a claimed scheduled send (docs/channels.md), a campaign
   * send (UUIDv5 of enrolment and node). Its record takes the outcome, skips included.
   */
  scheduledId?: string;
  /** A campaign send's template scope (docs/campaigns-runtime.md): the triggering event's parameters, a webhook's trigger_data. */
  event?: Record<string, unknown>;
  trigger?: Record<string, unknown>;
  /** The triggering event, recorded as the record's event_id (else the send's). */
  eventId?: string;
}

type Decision =
  | { kind: 'skip'; reason: string; error: string }
  | { kind: 'fail'; error: string; content?: PushContent }
  | { kind: 'policy'; reason: string; error: string; content: PushContent }
  | { kind: 'send'; devices: SendableDevice[]; content: PushContent; tracked?: Tracked };

/** A campaign push whose `action_url` is tracked (docs/tracking.md): its record's id (the token names it), the URL sent, the link stored. */
interface Tracked {
  id: string;
  actionUrl: string;
  links: string[];
}

const SKIP_PROSE: Record<SkipReason, string> = {
  no_active_device_tokens: 'The person has no active device token',
  requested_device_not_active: "The requested device token is not one of the person's active devices",
  device_token_suppressed: "Every one of the person's device tokens is suppressed",
};

/** How many recipients are with the providers at once, all of the actor's workspaces together… */
export const SEND_CONCURRENCY = 1024;
/** …and at most this many of one workspace's (its share: a slow provider holds no more). */
export const WORKSPACE_SHARE = 256;

function toMessage(c: PushContent): PushMessage {
  return { title: c.title, body: c.body, imageUrl: c.image_url, actionUrl: c.action_url, data: c.custom_data };
}

export class PushEngine {
  private readonly shares = new SendShares(SEND_CONCURRENCY, WORKSPACE_SHARE);

  constructor(
    private readonly db: Db,
    private readonly providers: ProviderSource,
    private readonly counters: SendCounters,
    private readonly renderer: Renderer,
    private readonly retry: RetryOptions = {},
    /** Where tracked links point and what signs them (docs/tracking.md); none: nothing is tracked. */
    private readonly links?: TrackingLinks,
  ) {}

  /** Sends one content to each recipient; one outcome per recipient, in order. */
  async send(send: Send, recipients: readonly Recipient[]): Promise<SendOutcome[]> {
    // 1. Load.
    const people = recipients.flatMap((r) => (r.person ? [r.person] : []));
    const personIds = [...new Set(people.map((p) => p.id))];
    const { policy: stored, policySince, devices, suppressed } = await sendContext(this.db, send.workspaceId, personIds);
    const policy = stored as SendPolicy | null;
    const capped = !send.bypassCaps && setsCap(policy);
    if (capped) await this.counters.load(personIds, policySince);
    const devicesOf = groupBy(devices, (d) => d.person_id);

    // 2. Decide: who is sendable, then render their content (one render task for the send),
    // then the policy (no await from there to the end of the loop: the counters stay consistent).
    const targets = recipients.map((r) => targetsOf(r, devicesOf.get(r.person?.id ?? '') ?? [], suppressed, send.optedOut));
    const toRender = targets.flatMap((t, i) => (Array.isArray(t) ? [i] : []));
    const renders = await this.renderer.render(send.workspaceId, send.content, toRender.map((i) => scopeOf(recipients[i]!)));
    const rendered = new Map(toRender.map((i, k) => [i, renders[k]!]));
    const now = Date.now();
    const decisions = recipients.map((r, i) => {
      const t = targets[i]!;
      return Array.isArray(t) ? this.decide(send, r.person!, t, rendered.get(i)!, policy, now) : t;
    });

    await this.track(send, recipients, decisions);

    // 3. Send, record, answer.
    const outcomes: (DeviceOutcome[] | undefined)[] = new Array(recipients.length);
    const providers = decisions.some((d) => d.kind === 'send') ? await this.providers.forWorkspace(send.workspaceId) : undefined;
    await eachLimited(decisions, WORKSPACE_SHARE, async (d, i) => {
      const message = d.kind === 'send' ? toMessage(d.tracked ? { ...d.content, action_url: d.tracked.actionUrl } : d.content) : undefined;
      if (d.kind === 'send') outcomes[i] = await this.shares.run(send.workspaceId, () => sendToDevices(providers!, message!, d.devices, this.retry));
    });
    return this.record(send, recipients, decisions, outcomes, now);
  }

  /**
   * A campaign push's web `action_url` goes through Herald's click tracking when the workspace's
   * `settings.tracking.clicks` is on (docs/tracking.md): the record's id is chosen now, as its
   * token names it. The settings are read only when some recipient has such a link.
   */
  private async track(send: Send, recipients: readonly Recipient[], decisions: Decision[]): Promise<void> {
    const links = this.links;
    if (!links || send.campaignId === undefined || !decisions.some((d) => d.kind === 'send' && d.content.action_url)) return;
    if (!trackingOf(await trackingSettings(this.db, send.workspaceId)).clicks) return;
    decisions.forEach((d, i) => {
      const url = d.kind === 'send' ? d.content.action_url : undefined;
      if (d.kind !== 'send' || !url || !/^https?:\/\//i.test(url)) return;
      const id = recipients[i]!.scheduledId ?? newId();
      const tracker = messageTracker(links, { workspaceId: send.workspaceId, messageId: id });
      const actionUrl = tracker.wrap(url);
      if (actionUrl !== undefined) d.tracked = { id, actionUrl, links: tracker.links };
    });
  }

  private decide(send: Send, person: PersonRow, targets: SendableDevice[], rendered: RenderOutcome, policy: SendPolicy | null, now: number): Decision {
    if ('error' in rendered) {
      if (send.renderErrors === 'throw') throw outcomeError(rendered);
      return { kind: 'fail', error: rendered.error };
    }
    const content = rendered.content;
    const block = send.outsidePolicy ? undefined : sendPolicy(policy, push.policy, person, now, this.counters.times(person.id, now), send.bypassCaps);
    if (block) return { kind: 'policy', reason: block.skip, error: block.error, content };
    this.counters.reserve(person.id, now);
    return { kind: 'send', devices: targets, content };
  }

  /** Writes the records, deliveries and dead-token effects in one transaction, then releases the reservations of sends that did not go out. */
  private async record(send: Send, recipients: readonly Recipient[], decisions: Decision[], outcomes: (DeviceOutcome[] | undefined)[], now: number): Promise<SendOutcome[]> {
    const records: PushRecord[] = [];
    const deliveries: DeliveryRecord[] = [];
    const dead: { device: SendableDevice; type: 'uninstalled' | 'invalid_token'; error: string; messageId: string }[] = [];
    const counted: string[] = [];
    const results = decisions.map((d, i): SendOutcome => {
      const r = recipients[i]!;
      const person = r.person;
      const base = (id: string, status: PushRecord['status'], content: PushContent | undefined): PushRecord => ({
        id, workspace_id: send.workspaceId, person_id: person!.id, external_id: person!.external_id, channel: 'push', status, platform: null, provider: 'none',
        provider_id: null, address: null, skip_reason: null, error: null, title: content?.title ?? null, body: content?.body ?? null, image_url: content?.image_url ?? null,
        action_url: content?.action_url ?? null, custom_data: content?.custom_data ?? null, variables: null, tags: send.tags ?? null,
        campaign_id: send.campaignId ?? null, node_id: send.nodeId ?? null, event_id: r.eventId ?? send.eventId ?? null, scheduled_at: null, sent_at: null,
      });
      if (d.kind === 'skip') {
        // An immediate skip is not stored; a scheduled one keeps its record.
        if (r.scheduledId) records.push({ ...base(r.scheduledId, 'skipped', undefined), skip_reason: d.reason, error: d.error });
        return { id: r.scheduledId ?? null, status: 'skipped', at: now, provider: 'none', error: d.error, skip_reason: d.reason };
      }
      if (d.kind === 'fail' && !person) return { id: null, status: 'failed', at: now, provider: 'none', error: d.error };
      const id = (d.kind === 'send' ? d.tracked?.id : undefined) ?? r.scheduledId ?? newId();
      if (d.kind === 'fail') {
        records.push({ ...base(id, 'failed', d.content), error: d.error });
        return { id, status: 'failed', at: now, provider: 'none', error: d.error };
      }
      if (d.kind === 'policy') {
        records.push({ ...base(id, 'policy_suppressed', d.content), skip_reason: d.reason, error: d.error });
        return { id, status: 'policy_suppressed', at: now, provider: 'none', error: d.error, skip_reason: d.reason };
      }
      // Sent to the provider: one delivery per device.
      const out = outcomes[i]!;
      out.forEach(({ outcome: o }, k) => {
        const device = d.devices[k]!;
        deliveries.push({
          message_id: id, device_id: device.id, device_token: device.device_token, platform: device.platform,
          status: o.kind === 'delivered' ? 'sent' : 'failed', provider_id: o.kind === 'delivered' ? o.providerMessageId : null, error: o.kind === 'delivered' ? null : o.error,
        });
        if (o.kind === 'dead_token') dead.push({ device, type: o.suppression, error: o.error, messageId: id });
      });
      const sentAt = Date.now();
      const first = out.find((x) => x.outcome.kind === 'delivered');
      if (first) {
        const providerId = (first.outcome as { providerMessageId: string }).providerMessageId;
        const platform = d.devices[out.indexOf(first)]!.platform;
        records.push({ ...base(id, 'sent', d.content), platform, provider: first.provider, provider_id: providerId, sent_at: new Date(sentAt).toISOString(), links: d.tracked?.links ?? null });
        counted.push(person!.id);
        return { id, status: 'sent', at: sentAt, provider: first.provider, provider_id: providerId };
      }
      this.counters.release(person!.id, now);
      const error = [...new Set(out.map((x) => (x.outcome as { error: string }).error))].join('; ');
      records.push({ ...base(id, 'failed', d.content), platform: d.devices[0]!.platform, provider: out[0]!.provider, error });
      return { id, status: 'failed', at: sentAt, provider: out[0]!.provider, error };
    });
    try {
      // One statement when no token died and nothing goes with the records (an API send); else one transaction.
      if (dead.length === 0 && !send.withRecords) await saveMessages(this.db, records, deliveries);
      else {
        await this.db.tx(async (q) => {
          await saveMessages(q, records, deliveries);
          await invalidateDevices(q, dead.map((x) => x.device.id));
          for (const x of dead) {
            await suppressToken(q, send.workspaceId, { device_token: x.device.device_token, platform: x.device.platform, suppression_type: x.type, reason: x.error, source_push_id: x.messageId });
          }
          await send.withRecords?.(q);
        });
      }
    } catch (err) {
      // Not recorded: the sends that went out no longer count against the caps here either,
      // matching what a restart would rebuild from the records.
      for (const personId of counted) this.counters.release(personId, now);
      throw err;
    }
    countMessages('push', results, send.campaignId !== undefined);
    return results;
  }
}

function skip(reason: SkipReason): Decision {
  return { kind: 'skip', reason, error: SKIP_PROSE[reason] };
}

/** The devices a recipient's push goes to, or why it does not go (the checks before rendering). */
function targetsOf(r: Recipient, all: SendableDevice[], suppressed: Set<string>, optedOut: ReadonlySet<string> | undefined): SendableDevice[] | Decision {
  const person = r.person;
  if (!person) return { kind: 'fail', error: r.failure ?? 'Unknown person' };
  const blocked = consent(person, push.stopsAtBounce) ?? topic(optedOut, person.id);
  if (blocked) return { kind: 'skip', reason: blocked.skip, error: blocked.error };
  let targets = r.platform ? all.filter((d) => d.platform === r.platform) : all;
  if (r.deviceToken !== undefined) {
    targets = targets.filter((d) => d.device_token === r.deviceToken);
    if (targets.length === 0) return skip('requested_device_not_active');
  }
  if (targets.length === 0) return skip('no_active_device_tokens');
  targets = targets.filter((d) => !suppressed.has(d.device_token));
  if (targets.length === 0) return skip('device_token_suppressed');
  return targets;
}

function scopeOf(r: Recipient): TemplateScope {
  const person = r.person!;
  return { variables: r.variables, person: personScope(person), traits: person.traits ?? {}, event: r.event, trigger: r.trigger };
}

/** One device's outcome and the code of the provider that gave it (`sandbox`, `fcm`, `apns`). */
interface DeviceOutcome {
  outcome: PushOutcome;
  provider: string;
}

/** Sends to each device through its platform's provider, in one call per provider; outcomes in device order. */
async function sendToDevices(providers: WorkspaceProviders, message: PushMessage, devices: SendableDevice[], retry: RetryOptions): Promise<DeviceOutcome[]> {
  const groups = groupBy(devices.keys(), (i) => providers.forPlatform(devices[i]!.platform));
  const out: DeviceOutcome[] = new Array(devices.length);
  await Promise.all(
    [...groups].map(async ([provider, idx]) => {
      const targets: PushDevice[] = idx.map((i) => ({ token: devices[i]!.device_token, platform: devices[i]!.platform }));
      const got = await sendWithRetries(provider, message, targets, retry);
      idx.forEach((i, k) => (out[i] = { outcome: got[k]!, provider: provider.name }));
    }),
  );
  return out;
}

/** Runs fn over items with at most `limit` at once. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

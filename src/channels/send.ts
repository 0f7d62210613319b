// The send path of the channels that send a person one message at one address (email, SMS:
// channels/channel.ts AddressedChannel), for a campaign node's many recipients at once
// (docs/channels.md). Each recipient goes through the decisions in their one order
// (channels/decisions.ts: consent → address → suppression → render → send policy; the first that
// applies is recorded `skipped` / `policy_suppressed` with its reason), is rendered in the
// render pool (one task for the send) with `unsubscribe_url` in scope, sent through the
// workspace's provider under the one retry rule (channels/retry.ts), and ends with one record;
// the records, the answers' effects (dead addresses suppressed), the sandbox's reports (through
// the callback applier) and the caller's `withRecords` commit in one transaction.
import type { PersonRow } from '../store/people.js';
import { addressKey, suppressedAddresses } from '../store/address-suppressions.js';
import { saveMessages, type MessageRecord } from '../store/messages.js';
import { sendPolicy as loadSendPolicy, trackingSettings } from '../store/send-context.js';
import { trackingOf } from '../domain/tracking.js';
import { trackedFields } from './tracking-links.js';
import { cpuStep } from '../util/cpu-steps.js';
import { isAddressNode, type EmailNode, type SmsNode } from '../domain/campaigns.js';
import type { SendPolicy } from '../domain/send-policy.js';
import { compileFields, personScope, type TemplateScope } from '../domain/templates.js';
import type { AddressChannel, ProviderEventKind } from '../domain/messages.js';
import { countMessages } from '../metrics/index.js';
import type { AddressedChannel, ChannelDeps, NodeOutcome, NodeRecipient, NodeSend, SendAnswer } from './channel.js';
import { consent, held, sendPolicy, topic, type Held } from './decisions.js';
import { preferencesUrl, topicUnsubscribeUrl } from './topic-links.js';
import { unsubscribeToken } from './email/unsubscribe.js';
import { applyOutcome, type Effect } from './effects.js';
import { applyProviderEvents } from './callbacks.js';
import { sendRetried } from './retry.js';

/** An email or SMS node's send (its node one of those). */
type AddressedSend = NodeSend & { node: EmailNode | SmsNode };

const ADDRESS_SUPPRESSED = held('address_suppressed', 'The address is suppressed');

/**
 * What an email or SMS template sees (docs/campaigns-runtime.md; docs/channels.md): the variables and `unsubscribe_url`,
 * the person (none in a preview without one), and a campaign send's event and trigger.
 */
export function channelScope(person: PersonRow | null, variables: Record<string, unknown>, unsubscribeUrl: string, event?: Record<string, unknown>, trigger?: Record<string, unknown>, preferences = unsubscribeUrl): TemplateScope {
  return {
    variables: { ...variables, unsubscribe_url: unsubscribeUrl, preferences_url: preferences },
    person: person ? personScope(person) : {},
    traits: person?.traits ?? {},
    ...(event ? { event } : {}),
    ...(trigger ? { trigger } : {}),
  };
}

/** A record of a channel with one address a person. */
type AddressRecord = MessageRecord & { channel: AddressChannel };

interface Done {
  record: AddressRecord;
  effect?: Effect;
  reported?: ProviderEventKind;
}

/** An email or SMS channel's `sendNode`: a node of another channel is a caller's mistake. */
export function sendAddressed(channel: AddressedChannel, deps: ChannelDeps, send: NodeSend, recipients: readonly NodeRecipient[]): Promise<NodeOutcome[]> {
  const { node } = send;
  if (!isAddressNode(node) || node.type !== channel.name) throw new Error(`the ${channel.name} channel was given a ${node.type} node`);
  return sendChannelNode(channel, deps, { ...send, node }, recipients);
}

/** Sends the node to each recipient; answers their records, in order, once written. */
async function sendChannelNode(channel: AddressedChannel, deps: ChannelDeps, send: AddressedSend, recipients: readonly NodeRecipient[]): Promise<AddressRecord[]> {
  const { db, settings } = deps;
  const { workspaceId, node } = send;
  const open = await channel.open(deps, workspaceId);
  const policy = channel.policy !== 'none' && !send.outsidePolicy ? ((await loadSendPolicy(db, workspaceId)) as SendPolicy | null) : null;
  // Herald's own opens and clicks (docs/tracking.md), where the channel has links to wrap and the workspace has not turned both off.
  const stored = channel.track ? trackingOf(await trackingSettings(db, workspaceId)) : null;
  const tracking = stored && (stored.opens || stored.clicks) ? stored : null;

  // Consent and address, then the suppressions of the addresses left.
  const decisions = recipients.map((r): Held | { address: string } => {
    const blocked = consent(r.person, channel.stopsAtBounce) ?? topic(send.optedOut, r.person.id);
    if (blocked) return blocked;
    const address = open.address(r.person);
    return address ? { address } : channel.noAddress;
  });
  const addresses = decisions.flatMap((d) => ('address' in d ? [d.address] : []));
  const suppressed = await suppressedAddresses(db, workspaceId, channel.name, addresses);
  decisions.forEach((d, i) => {
    if ('address' in d && suppressed.has(addressKey(channel.name, d.address))) decisions[i] = ADDRESS_SUPPRESSED;
  });

  // Rendered in the render pool, one task for the send's recipients still in.
  // A topic's message unsubscribes from that topic only (docs/audiences.md).
  const topicId = node.topic_id;
  const unsubscribeUrls = recipients.map((r) =>
    topicId === undefined ? `${settings.publicUrl}/u/${unsubscribeToken(settings.unsubscribeKey, { workspaceId, personId: r.person.id, messageId: r.id })}` : topicUnsubscribeUrl(settings, workspaceId, r.person.id, topicId),
  );
  const toRender = decisions.flatMap((d, i) => ('address' in d ? [i] : []));
  const compiled = compileFields(channel.fields(node, send.templates));
  const scopes = toRender.map((i) => {
    const r = recipients[i]!;
    return channelScope(r.person, r.variables, unsubscribeUrls[i]!, r.event, r.trigger, preferencesUrl(settings, workspaceId, r.person.id, r.id));
  });
  const renders = scopes.length > 0 ? await deps.renders.render(workspaceId, compiled, scopes) : [];
  const rendered = new Map(toRender.map((i, k) => [i, renders[k]!]));

  const now = Date.now();
  const done = await Promise.all(
    recipients.map(async (r, i): Promise<Done> => {
      const d = decisions[i]!;
      const base = {
        id: r.id, workspace_id: workspaceId, person_id: r.person.id, external_id: r.person.external_id, channel: channel.name, provider: open.provider, provider_id: null,
        address: 'address' in d ? d.address : null, skip_reason: null, error: null, title: null, body: null, campaign_id: send.campaignId, node_id: node.id, event_id: r.eventId ?? null, tags: send.tags ?? null, sent_at: null,
      } satisfies Omit<AddressRecord, 'status'>;
      if (!('address' in d)) return { record: { ...base, status: d.status, skip_reason: d.skip, error: d.error } };
      const outcome = rendered.get(i)!;
      if ('error' in outcome) return { record: { ...base, status: 'failed', error: `Template render failed: ${outcome.error}` } };
      const quiet = sendPolicy(policy, channel.policy, r.person, now, []);
      if (quiet) return { record: { ...base, status: quiet.status, skip_reason: quiet.skip, error: quiet.error } };
      const message = channel.compose(outcome.content.custom_data as Record<string, string>);
      // Parsing a recipient's html is CPU (a tenant's 64 KB of it, ~1 ms): one recipient a turn of the event loop.
      const sent = tracking ? await cpuStep(() => trackedFields(channel, settings, tracking, { workspaceId, messageId: r.id }, message.fields)) : { fields: message.fields, links: null };
      const kept = { ...base, title: message.title, body: message.body, links: sent.links };
      const answer: SendAnswer = await sendRetried(() => open.send({ workspaceId, messageId: r.id, address: d.address, fields: sent.fields, unsubscribeUrl: unsubscribeUrls[i]!, deadline: send.deadline }), send.deadline);
      if (answer.status === 'sent') return { record: { ...kept, status: 'sent', provider_id: answer.providerId, sent_at: new Date().toISOString() }, reported: answer.reported };
      return { record: { ...kept, status: 'failed', error: answer.error }, ...(answer.suppress ? { effect: { suppress: answer.suppress } } : {}) };
    }),
  );
  countMessages(channel.name, done.map((x) => x.record), true);
  await db.tx(async (q) => {
    await saveMessages(q, done.map((x) => x.record));
    for (const { record, effect } of done) if (effect) await applyOutcome(q, record, effect);
    // The sandbox's provider reports, through the callback applier (docs/channels.md).
    const reported = done.flatMap((x) => (x.reported ? [{ record: x.record, kind: x.reported }] : []));
    const { fates } = await applyProviderEvents(q, workspaceId, reported.map(({ record, kind }) => ({ provider: 'sandbox', eventId: `${record.id}:${kind}`, messageId: record.id, kind, details: {} })));
    // The records answered are as stored: a delivered, bounced or complained sandbox send says so.
    fates.forEach((f, i) => {
      if (f.fate === 'applied') Object.assign(reported[i]!.record, { status: f.status, error: f.error });
    });
    await send.withRecords(q);
  });
  return done.map((x) => x.record);
}

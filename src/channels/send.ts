// Email and SMS sends of a campaign node (docs/channels.md), for many recipients at once, each in
// four steps: the skip decisions in §13's order (the first that applies wins, recorded as
// `skipped` / `policy_suppressed` with its reason) → render (Liquid, `unsubscribe_url` in scope)
// → send (the workspace's SMTP relay or Twilio; the sandbox without a channel while the server
// says so, whose answers go through the same classification and whose reports through the
// provider callbacks' handling) → classify the answer (dead addresses suppressed). Every recipient ends with one
// record, written with the caller's `withRecords` in one transaction.
import type { Db, Queryable } from '../store/db.js';
import type { PersonRow } from '../store/people.js';
import { loadMessageChannel, type EmailChannel, type SmsChannel } from '../store/message-channels.js';
import { addressKey, suppressedAddresses } from '../store/address-suppressions.js';
import { saveChannelMessages, type ChannelMessageRecord } from '../store/channel-messages.js';
import { channelFields, type EmailNode, type SmsNode, type Templates } from '../domain/campaigns.js';
import { compileFields, personScope, renderContent, type TemplateScope } from '../domain/templates.js';
import { policyBlock, recipientZone, type SendPolicy } from '../domain/send-policy.js';
import { emailMessage, textPart, type EmailContent } from './email/message.js';
import type { EmailTransports } from './email/transport.js';
import { unsubscribeToken } from './email/unsubscribe.js';
import { sendTwilio, type TwilioOutcome } from './sms/twilio.js';
import { e164 } from './sms/phone.js';
import { callbackUrls, type MessagingSettings } from './settings.js';
import { applyOutcome, sandboxEmailEvent, sandboxTwilio, type Effect } from './effects.js';
import { applyProviderEvents } from './callbacks.js';
import type { ProviderEventKind } from '../domain/messages.js';
import { sendRetried } from './retry.js';

export interface ChannelRecipient {
  /** The record's id, chosen by the caller (a campaign send: UUIDv5 of enrolment and node). */
  id: string;
  person: PersonRow;
  variables: Record<string, unknown>;
  event?: Record<string, unknown>;
  trigger?: Record<string, unknown>;
  eventId?: string;
}

export interface ChannelSend {
  workspaceId: string;
  campaignId: string;
  node: EmailNode | SmsNode;
  /** The template the node names, if any (its fields apply where the node has none). */
  templates: Templates;
  /** What must commit with the records, in their transaction. */
  withRecords: (q: Queryable) => Promise<void>;
  /** Recorded on every message (a dashboard test send: `["test"]`). */
  tags?: string[];
  /** A dashboard test send (README, Dashboard): quiet hours do not apply (the person's and address checks still do). */
  outsidePolicy?: boolean;
  /** When an email still with the SMTP relay is given up, recorded `failed` (`smtp_timeout`): a test send's answer is due. */
  deadline?: AbortSignal;
}

type Decision = { skip: string; status?: 'policy_suppressed'; error: string } | { address: string };

/** What the sender needs: the store, the server's settings, this actor's SMTP pools. */
export interface ChannelDeps {
  db: Db;
  settings: MessagingSettings;
  smtp: EmailTransports;
}

function personDecision(p: PersonRow, email: boolean): Decision | undefined {
  if (p.status === 'unsubscribed') return { skip: 'person_unsubscribed', error: 'The person is unsubscribed' };
  if (p.status === 'suppressed') return { skip: 'person_suppressed', error: 'The person is suppressed' };
  if (email && p.status === 'bounced') return { skip: 'person_bounced', error: "The person's email bounced" };
  return undefined;
}

/**
 * What an email or SMS template sees (docs/campaigns-runtime.md; docs/channels.md): the variables and `unsubscribe_url`,
 * the person (none in a preview without one), and a campaign send's event and trigger.
 */
export function channelScope(person: PersonRow | null, variables: Record<string, unknown>, unsubscribeUrl: string, event?: Record<string, unknown>, trigger?: Record<string, unknown>): TemplateScope {
  return {
    variables: { ...variables, unsubscribe_url: unsubscribeUrl },
    person: person ? personScope(person) : {},
    traits: person?.traits ?? {},
    ...(event ? { event } : {}),
    ...(trigger ? { trigger } : {}),
  };
}

/** Sends the node to each recipient; answers their records, in order, once written. */
export async function sendChannelNode(deps: ChannelDeps, send: ChannelSend, recipients: readonly ChannelRecipient[]): Promise<ChannelMessageRecord[]> {
  const { db, settings } = deps;
  const { workspaceId, node } = send;
  const email = node.type === 'email';
  const stored = await loadMessageChannel(db, settings.secrets, workspaceId, node.type);
  const channel = stored?.readable ? stored.settings : undefined;
  const sandbox = !stored && (email ? settings.emailMode : settings.smsMode) === 'sandbox';
  const policy = email ? null : ((await db.query<{ p: SendPolicy | null }>(`SELECT settings->'send_policy' AS p FROM workspaces WHERE id = $1`, [workspaceId])).rows[0]?.p ?? null);
  const country = (channel as SmsChannel | undefined)?.default_country;

  // The checks before any address is looked up, then the suppressions of the addresses left.
  const decisions = recipients.map((r): Decision => {
    const blocked = personDecision(r.person, email);
    if (blocked) return blocked;
    if (email) return r.person.email?.trim() ? { address: r.person.email.trim() } : { skip: 'no_email_address', error: 'The person has no email address' };
    const phone = e164(r.person.phone, country);
    return phone ? { address: phone } : { skip: 'no_phone_number', error: 'The person has no valid phone number' };
  });
  const addresses = decisions.flatMap((d) => ('address' in d ? [d.address] : []));
  const suppressed = await suppressedAddresses(db, workspaceId, email ? 'email' : 'sms', addresses);
  const now = Date.now();
  for (const [i, d] of decisions.entries()) {
    if (!('address' in d)) continue;
    if (suppressed.has(addressKey(email ? 'email' : 'sms', d.address))) decisions[i] = { skip: 'address_suppressed', error: 'The address is suppressed' };
    else if (!email && !send.outsidePolicy) {
      const quiet = policyBlock(policy, recipientZone(recipients[i]!.person.timezone, policy), now, [], { bypassCaps: true });
      if (quiet) decisions[i] = { skip: quiet.skip_reason, status: 'policy_suppressed', error: quiet.error };
    }
  }

  const compiled = compileFields(channelFields(node, send.templates));
  const provider = sandbox ? 'sandbox' : email ? 'smtp' : 'twilio';
  const records = await Promise.all(
    recipients.map(async (r, i): Promise<{ record: ChannelMessageRecord; effect?: Effect; sandboxEvent?: ProviderEventKind }> => {
      const d = decisions[i]!;
      const base = {
        id: r.id, workspace_id: workspaceId, person_id: r.person.id, external_id: r.person.external_id, channel: node.type, provider, provider_id: null,
        address: 'address' in d ? d.address : null, skip_reason: null, error: null, title: null, body: null, campaign_id: send.campaignId, event_id: r.eventId ?? null, events: [], tags: send.tags ?? null,
      } satisfies Omit<ChannelMessageRecord, 'status'>;
      if (!('address' in d)) return { record: { ...base, status: d.status ?? 'skipped', skip_reason: d.skip, error: d.error } };
      const unsubscribeUrl = `${settings.publicUrl}/u/${unsubscribeToken(settings.unsubscribeKey, { workspaceId, personId: r.person.id, messageId: r.id })}`;
      let fields: Record<string, string>;
      try {
        fields = renderContent(compiled, channelScope(r.person, r.variables, unsubscribeUrl, r.event, r.trigger)).custom_data as Record<string, string>;
      } catch (err) {
        return { record: { ...base, status: 'failed', error: `Template render failed: ${(err as Error).message}` } };
      }
      if (!sandbox && !channel) {
        const why = stored ? `the ${node.type} channel's settings cannot be opened (set them again)` : `no ${node.type} channel is configured`;
        return { record: { ...base, status: 'failed', error: why } };
      }
      if (email) {
        // The text part as sent (derived from the html when the node has none, once) is what the record keeps.
        const content = { ...(fields as unknown as EmailContent) };
        content.text = textPart(content);
        const rendered = { ...base, title: content.subject, body: content.text };
        if (sandbox) return { record: { ...rendered, status: 'sent', provider_id: r.id }, sandboxEvent: sandboxEmailEvent(d.address) };
        const mail = emailMessage(channel as EmailChannel, d.address, r.id, content, unsubscribeUrl);
        const outcome = await sendRetried(() => deps.smtp.send(workspaceId, channel as EmailChannel, mail, send.deadline), send.deadline);
        if (outcome.status === 'sent') return { record: { ...rendered, status: 'sent', provider_id: r.id } };
        return { record: { ...rendered, status: 'failed', error: outcome.error }, ...(outcome.invalidAddress ? { effect: { suppress: 'invalid_address' as const } } : {}) };
      }
      const rendered = { ...base, body: fields.body ?? '' };
      const outcome: TwilioOutcome = sandbox
        ? sandboxTwilio(d.address, r.id)
        : await sendRetried(() => sendTwilio(settings.twilioEndpoint, channel as SmsChannel, d.address, rendered.body, callbackUrls(settings, workspaceId).smsStatus));
      if (outcome.status === 'sent') return { record: { ...rendered, status: 'sent', provider_id: outcome.sid }, ...(sandbox ? { sandboxEvent: 'delivered' as const } : {}) };
      return { record: { ...rendered, status: 'failed', error: outcome.error }, ...(outcome.suppress ? { effect: { suppress: outcome.suppress } } : {}) };
    }),
  );
  await db.tx(async (q) => {
    await saveChannelMessages(q, records.map((x) => x.record));
    for (const { record, effect } of records) if (effect) await applyOutcome(q, record, effect);
    // The sandbox's provider reports, through the callback handling (docs/channels.md).
    const reported = records.filter((x) => x.sandboxEvent !== undefined);
    const fates = await applyProviderEvents(q, workspaceId, reported.map(({ record, sandboxEvent }) => ({ provider: 'sandbox', eventId: `${record.id}:${sandboxEvent}`, messageId: record.id, kind: sandboxEvent!, details: {} })));
    // The records answered are as stored: a delivered, bounced or complained sandbox send says so.
    fates.forEach((f, i) => {
      if (f.fate === 'applied') Object.assign(reported[i]!.record, { status: f.status, error: f.error });
    });
    await send.withRecords(q);
  });
  return records.map((x) => x.record);
}

// The webhook channel (docs/channels.md, "The webhook channel"): a workflow step that calls the
// sender's own system once per person. Its node's `url` and `body` are Liquid, rendered in the
// render pool like every channel's content; the body must be JSON once rendered. Each call is
// signed with the workspace's node secret (webhook/secret.ts), sent under the one retry rule
// and the destination rule (webhook/call.ts), and recorded as a message on channel `webhook`:
// the URL as its address, the method as its title, the request body as its body, the answer's
// status code as its provider_id and, with the first 1 kB of the answer, in custom_data (and in
// the error of a failure). The consent decisions apply (an unsubscribed or suppressed person, or
// one not subscribed to the node's topic, is not called for); there is no address to suppress
// and no send policy (nothing reaches the person).
import { OutboundPolicy } from '../../net/destinations.js';
import { WEBHOOK_FIELDS, type WebhookNode } from '../../domain/campaigns.js';
import { compileFields, personScope, type TemplateScope } from '../../domain/templates.js';
import { saveMessages, type MessageRecord } from '../../store/messages.js';
import { countMessages } from '../../metrics/index.js';
import type { Channel, ChannelDeps, NodeOutcome, NodeRecipient, NodeSend } from '../channel.js';
import { consent, topic } from '../decisions.js';
import type { PoolKind } from '../pools.js';
import { sendRetried } from '../retry.js';
import { SendShares } from '../send-shares.js';
import { callWebhook, type CallAnswer } from './call.js';
import { nodeSecret } from './secret.js';

/** Recorded as the messages' `provider`. */
const PROVIDER = 'http';

/**
 * The actor's webhook calls: the destination rule (any port: the sender names its own service),
 * and at most 256 calls under way at once, 64 of one workspace, so that a workspace whose
 * receiver is slow holds its own share and nothing more (docs/isolation.md).
 */
const WEBHOOK_CALLS: PoolKind<{ policy: OutboundPolicy; shares: SendShares }> = {
  name: 'webhook-calls',
  make: (settings) => ({ policy: new OutboundPolicy(settings.allowedPrivateHosts), shares: new SendShares(256, 64), close: () => {} }),
};

/** A webhook node's Liquid fields. */
function webhookFields(node: { url?: string; body?: string }): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of WEBHOOK_FIELDS) if (typeof node[k] === 'string') out[k] = node[k];
  return out;
}

/** What its templates see: the variables, the person, and a campaign send's event and trigger. */
function scopeOf(r: NodeRecipient): TemplateScope {
  return { variables: r.variables, person: personScope(r.person), traits: r.person.traits, ...(r.event ? { event: r.event } : {}), ...(r.trigger ? { trigger: r.trigger } : {}) };
}

/** The URL to call, or why it cannot be. */
function urlOf(raw: string): URL | string {
  try {
    const url = new URL(raw.trim());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password) return url;
  } catch {
    // said below
  }
  return 'The url is not an http or https URL without credentials once rendered';
}

async function sendWebhook(deps: ChannelDeps, send: NodeSend, recipients: readonly NodeRecipient[]): Promise<NodeOutcome[]> {
  const node = send.node;
  if (node.type !== 'webhook') throw new Error(`the webhook channel was given a ${node.type} node`);
  const { workspaceId } = send;
  const held = recipients.map((r) => consent(r.person, webhook.stopsAtBounce) ?? topic(send.optedOut, r.person.id));
  const toRender = held.flatMap((h, i) => (h ? [] : [i]));
  const renders = toRender.length > 0 ? await deps.renders.render(workspaceId, compileFields(webhookFields(node)), toRender.map((i) => scopeOf(recipients[i]!))) : [];
  const rendered = new Map(toRender.map((i, k) => [i, renders[k]!]));
  const secret = toRender.length > 0 ? await nodeSecret(deps.db, deps.settings.secrets, workspaceId) : '';
  const { policy: outbound, shares } = deps.pools.of(WEBHOOK_CALLS);
  const method = node.method ?? 'POST';

  const records = await Promise.all(
    recipients.map(async (r, i): Promise<MessageRecord> => {
      const base = {
        id: r.id, workspace_id: workspaceId, person_id: r.person.id, external_id: r.person.external_id, channel: webhook.name, provider: PROVIDER, provider_id: null,
        address: null, skip_reason: null, error: null, title: method, body: null, campaign_id: send.campaignId, node_id: send.node.id, event_id: r.eventId ?? null, tags: send.tags ?? null, sent_at: null,
      } satisfies Omit<MessageRecord, 'status'>;
      const h = held[i];
      if (h) return { ...base, status: h.status, skip_reason: h.skip, error: h.error };
      const outcome = rendered.get(i)!;
      if ('error' in outcome) return { ...base, status: 'failed', error: `Template render failed: ${outcome.error}` };
      const fields = outcome.content.custom_data as Record<string, string>;
      const body = fields.body?.trim() ? fields.body : '{}';
      const url = urlOf(fields.url ?? '');
      const kept = { ...base, address: fields.url ?? null, body };
      if (typeof url === 'string') return { ...kept, status: 'failed', error: url };
      try {
        JSON.parse(body);
      } catch {
        return { ...kept, status: 'failed', error: 'The body is not JSON once rendered' };
      }
      const call = { url, method, headers: node.headers ?? {}, body, id: `msg_${r.id}`, secret, outbound };
      // Each attempt takes a slot of the workspace's share; a wait between retries holds none.
      const answer: CallAnswer = await sendRetried(() => shares.run(workspaceId, () => callWebhook(call)), send.deadline);
      const answered = { ...kept, provider_id: answer.statusCode === null ? null : String(answer.statusCode), custom_data: { status_code: answer.statusCode, answer: answer.answer } };
      if (answer.status === 'sent') return { ...answered, status: 'sent', sent_at: new Date().toISOString() };
      return { ...answered, status: 'failed', error: answer.error };
    }),
  );
  countMessages(webhook.name, records, true);
  await deps.db.tx(async (q) => {
    await saveMessages(q, records);
    await send.withRecords(q);
  });
  return records;
}

export const webhook: Channel & Required<Pick<Channel, 'fields' | 'preview'>> = {
  name: 'webhook',
  stopsAtBounce: false,
  policy: 'none',
  fields: (node) => webhookFields(node as WebhookNode),
  preview: (rendered) => ({ url: rendered.url ?? '', body: rendered.body ?? '' }),
  sendNode: sendWebhook,
};

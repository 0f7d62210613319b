// Push sends, their status and a person's message history (docs/channels.md;
// README, Routes). The handlers turn requests into sends for the engine (src/channels/push/engine.ts)
// and records into answers; the rules of a send are the engine's and the domain's.
import type { Ctx, Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { personByUuid, personNotFound } from './people.js';
import { DomainError, InvalidInput } from '../domain/errors.js';
import { compileContent, type CompiledContent, type PushContent } from '../domain/templates.js';
import { maskToken } from '../domain/tokens.js';
import { iso, parseTimestamp } from '../domain/time.js';
import { isUuid, newId } from '../ids.js';
import { findPerson, findPersonById, loadMessage, messagesOf, peopleByIds, saveMessages, type PersonRow, type StoredMessage } from '../store/index.js';
import type { Recipient, Send, SendOutcome } from '../channels/push/engine.js';

/** One recipient's answer (README, Request bodies). */
interface SendResult {
  message_id: string;
  status: SendOutcome['status'];
  sent_at: string;
  provider: string;
  provider_id?: string;
  error?: string;
  skip_reason?: string;
}

/** The answer of an outcome: one not stored carries a synthetic id, `<status>-<unix seconds>`. */
function resultOf(o: SendOutcome): SendResult {
  return {
    message_id: o.id ?? `${o.status}-${Math.floor(o.at / 1000)}`, status: o.status, sent_at: new Date(o.at).toISOString(), provider: o.provider,
    provider_id: o.provider_id, error: o.error, skip_reason: o.skip_reason,
  };
}

/** `limit` of the message history above this is silently reduced (README, Request bodies). */
const HISTORY_PAGE_MAX = 100;

interface ContentBody extends PushContent {
  variables?: Record<string, unknown>;
  tags?: string[];
  campaign_id?: string;
  event_id?: string;
}

/** The content fields of a send body, checked and parsed: neither title nor body is a 400 (README, Request bodies), so is a template that does not parse. */
function contentOf(b: ContentBody): { raw: PushContent; compiled: CompiledContent } {
  if (b.title === undefined && b.body === undefined) throw new InvalidInput('A push needs a title or a body', [{ field: 'title', message: 'title or body is required' }]);
  const raw: PushContent = { title: b.title, body: b.body, image_url: b.image_url, action_url: b.action_url, custom_data: b.custom_data };
  return { raw, compiled: compileContent(raw) };
}

function sendOf(ctx: Ctx, b: ContentBody, compiled: CompiledContent, renderErrors: Send['renderErrors']): Send {
  return { workspaceId: ctx.workspaceId, content: compiled, tags: b.tags, campaignId: b.campaign_id, eventId: b.event_id, renderErrors };
}

/** The person a single send names by external id; the person UUID is refused, not looked up (README, Routes). */
async function recipientPerson(ctx: Ctx, externalId: string): Promise<PersonRow> {
  const person = await findPerson(ctx.db, ctx.workspaceId, externalId);
  if (person) return person;
  if (isUuid(externalId) && (await findPersonById(ctx.db, ctx.workspaceId, externalId.toLowerCase()))) {
    throw new InvalidInput('external_id takes your own user id, not the person UUID', [{ field: 'external_id', message: "is a person UUID; send the person's external id" }]);
  }
  throw personNotFound(externalId);
}

const send: Handler<'POST /workspaces/{workspaceId}/push/send'> = async (ctx) => {
  const b = ctx.body;
  const { raw, compiled } = contentOf(b);
  const person = await recipientPerson(ctx, b.external_id);
  const at = b.scheduled_at === undefined ? undefined : parseTimestamp(b.scheduled_at)!;
  if (at !== undefined && at > Date.now()) {
    // Held until due (docs/channels.md): stored unrendered with its variables; the scheduler
    // (src/channels/push/scheduled-sends.ts) claims and sends it once, running the checks then.
    const id = newId();
    const scheduledAt = new Date(at).toISOString();
    await saveMessages(ctx.db, [{
      id, workspace_id: ctx.workspaceId, person_id: person.id, external_id: person.external_id, channel: 'push', status: 'scheduled', platform: null, provider: 'none',
      provider_id: null, address: null, skip_reason: null, error: null, title: raw.title ?? null, body: raw.body ?? null, image_url: raw.image_url ?? null,
      action_url: raw.action_url ?? null, custom_data: raw.custom_data ?? null, variables: b.variables ?? null, tags: b.tags ?? null,
      campaign_id: b.campaign_id ?? null, node_id: null, event_id: b.event_id ?? null, scheduled_at: scheduledAt, sent_at: null,
    }]);
    return json(202, { success: true, message_id: id, status: 'scheduled', scheduled_at: scheduledAt });
  }
  const [outcome] = await ctx.push.send(sendOf(ctx, b, compiled, 'throw'), [{ person, variables: b.variables ?? {} }]);
  const result = resultOf(outcome!);
  // Every device refused (docs/channels.md): the record is stored as failed, the request is a 500.
  if (result.status === 'failed') throw new DomainError('PROVIDER_ERROR', `No device accepted the push: ${result.error}`, { message_id: result.message_id });
  return json(200, { success: true, ...result });
};

const sendBatch: Handler<'POST /workspaces/{workspaceId}/push/send/batch'> = async (ctx) => {
  const b = ctx.body;
  const { compiled } = contentOf(b);
  const ids = [...new Set(b.recipients.map((r) => r.user_id.toLowerCase()).filter(isUuid))];
  const people = new Map((ids.length ? await peopleByIds(ctx.db, ctx.workspaceId, ids) : []).map((p) => [p.id, p]));
  const recipients = b.recipients.map((r): Recipient => {
    const variables = { ...b.variables, ...r.variables };
    if (!isUuid(r.user_id)) return { person: null, failure: 'user_id must be a person UUID', variables };
    const person = people.get(r.user_id.toLowerCase()) ?? null;
    return { person, failure: person ? undefined : `No person with id '${r.user_id}' in this workspace`, deviceToken: r.device_token, platform: r.platform, variables };
  });
  const results = (await ctx.push.send(sendOf(ctx, b, compiled, 'fail'), recipients)).map(resultOf);
  const count = (s: string) => results.filter((r) => r.status === s).length;
  return json(200, {
    success: true,
    results: results.map((r, i) => ({ user_id: b.recipients[i]!.user_id, ...r })),
    summary: { total: results.length, sent: count('sent'), failed: count('failed'), skipped: count('skipped'), policy_suppressed: count('policy_suppressed'), processed: new Date().toISOString() },
  });
};

/** The totals of a person's opens and clicks of a message (docs/tracking.md): repeats counted, a machine's not; absent when none. */
function engagementTotals(events: StoredMessage['events']): { opens?: number; clicks?: number } {
  let opens = 0;
  let clicks = 0;
  for (const e of events) {
    if (e.machine) continue;
    if (e.type === 'opened') opens++;
    else if (e.type === 'clicked') clicks++;
  }
  return { ...(opens ? { opens } : {}), ...(clicks ? { clicks } : {}) };
}

/** A record as the status route and the history show it (docs/channels.md; README, Request bodies). */
/** A stored message as the status route, the message histories and a campaign's message list show it. */
export function presentMessage(m: StoredMessage) {
  return {
    message_id: m.id,
    channel: m.channel,
    // A claimed scheduled send is still `scheduled` to the outside until its outcome is written.
    status: m.status === 'sending' ? 'scheduled' : m.status,
    external_id: m.external_id,
    platform: m.platform,
    // Email and SMS: the address or number; a push's tokens are its deliveries', masked.
    ...(m.channel !== 'push' && m.address ? { to: m.address } : {}),
    provider: m.provider,
    provider_id: m.provider_id,
    ...(m.skip_reason ? { skip_reason: m.skip_reason } : {}),
    ...(m.error ? { error: m.error } : {}),
    title: m.title,
    body: m.body,
    // A dashboard test send is tagged ["test"]: the message lists mark it.
    ...(m.tags?.length ? { tags: m.tags } : {}),
    created_at: iso(m.created_at),
    sent_at: iso(m.sent_at),
    ...(m.scheduled_at ? { scheduled_at: iso(m.scheduled_at) } : {}),
    ...(m.campaign_id ? { campaign_id: m.campaign_id } : {}),
    ...(m.event_id ? { event_id: m.event_id } : {}),
    events: m.events,
    ...engagementTotals(m.events),
    ...(m.events_not_stored > 0 ? { events_not_stored: m.events_not_stored } : {}),
    deliveries: m.deliveries.map((d) => ({
      device_id: d.device_id,
      device_token: maskToken(d.device_token),
      platform: d.platform,
      status: d.status,
      ...(d.provider_id ? { provider_id: d.provider_id } : {}),
      ...(d.error ? { error: d.error } : {}),
    })),
  };
}

const status: Handler<'GET /workspaces/{workspaceId}/push/status/{messageId}'> = async (ctx) => {
  const id = ctx.params.messageId;
  // Synthetic `skipped-…` ids and anything else that is not a UUID name no record.
  const m = isUuid(id) ? await loadMessage(ctx.db, ctx.workspaceId, id) : null;
  if (!m) throw new DomainError('NOT_FOUND', `No push message '${id}' in this workspace`);
  return json(200, { success: true, message: presentMessage(m) });
};

const history: Handler<'GET /workspaces/{workspaceId}/people/{personId}/messages'> = async (ctx) => {
  const person = await personByUuid(ctx, ctx.params.personId);
  const limit = Math.min(ctx.query.limit, HISTORY_PAGE_MAX);
  const { messages, total } = await messagesOf(ctx.db, ctx.workspaceId, person.id, limit, ctx.query.offset);
  return json(200, { success: true, messages: messages.map(presentMessage), total });
};

const PUSH = '/workspaces/{workspaceId}/push';

export const pushHandlers = {
  [`POST ${PUSH}/send`]: send,
  [`POST ${PUSH}/send/batch`]: sendBatch,
  [`GET ${PUSH}/status/{messageId}`]: status,
  'GET /workspaces/{workspaceId}/people/{personId}/messages': history,
} satisfies Handlers;

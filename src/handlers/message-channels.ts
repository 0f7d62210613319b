// Email and SMS channels (docs/channels.md), session routes: PUT (owners and admins) is partial, a
// field omitted keeps its stored value, `null` removes an optional one, `smtp: null` / `twilio:
// null` removes the channel. GET /channels (any member) answers every channel with its
// non-secret identifiers and the callback URLs to paste into the provider's console; passwords,
// tokens and keys are never echoed. Stored sealed under HERALD_SECRETS_KEY (store/message-channels.ts).
import { createPublicKey } from 'node:crypto';
import type { Handler, Handlers } from './context.js';
import { json } from './reply.js';
import { requireManager } from './workspaces.js';
import { describePush } from './channels.js';
import { InvalidInput, type FieldError } from '../domain/errors.js';
import { loadMessageChannel, loadPushChannels, saveMessageChannel, type EmailChannel, type MessageChannel, type Queryable, type SmsChannel, type StoredSettings } from '../store/index.js';
import { callbackUrls, type MessagingSettings } from '../channels/settings.js';
import { isPhoneCountry } from '../channels/sms/phone.js';

/** `null` values removed: what a partial update leaves of `sent` over `stored`. */
function merged<T extends object>(stored: T | undefined, sent: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored, ...sent };
  for (const [k, v] of Object.entries(out)) if (v === null || v === undefined) delete out[k];
  return out;
}

function refuse(problems: FieldError[]): never {
  throw new InvalidInput(`Request body is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
}

const missing = (prefix: string, o: Record<string, unknown>, fields: readonly string[], why: string): FieldError[] =>
  fields.filter((f) => o[f] === undefined).map((f) => ({ field: `${prefix}.${f}`, message: `is required: ${why}` }));

/** Why `sent` cannot be completed from what is stored. */
function why(stored: StoredSettings<MessageChannel> | null): string {
  return stored && !stored.readable ? 'the stored settings cannot be opened, so every field must be sent' : 'no value is stored to keep it from';
}

/** SendGrid hands out its Event Webhook key as base64 DER (SPKI); PEM is accepted too. */
function sendgridKeyProblem(key: string): string | undefined {
  try {
    const k = key.includes('-----BEGIN') ? createPublicKey(key) : createPublicKey({ key: Buffer.from(key, 'base64'), format: 'der', type: 'spki' });
    return k.asymmetricKeyType === 'ec' ? undefined : 'must be an ECDSA public key';
  } catch (err) {
    return `must be SendGrid's verification key, PEM or base64 DER (${(err as Error).message})`;
  }
}

/** What a refused SMTP host or port is told: the same whether a name resolves to a private address or not at all. */
const SMTP_DESTINATION = {
  address: 'must be a public address, or a name that resolves to one: a relay on a private network (localhost included) needs the operator to list it in HERALD_ALLOWED_PRIVATE_HOSTS',
  port: 'must be 25, 465, 587 or 2525: another port needs the operator to list the host in HERALD_ALLOWED_PRIVATE_HOSTS',
};

async function emailSettings(s: MessagingSettings, stored: StoredSettings<'email'> | null, body: Record<string, Record<string, unknown> | string | null | undefined>): Promise<EmailChannel> {
  const base = stored?.readable ? stored.settings : undefined;
  const smtp: Record<string, unknown> = { max_connections: 5, ...merged(base?.smtp, body.smtp as Record<string, unknown>) };
  const from = (body.from ?? base?.from) as Record<string, unknown> | undefined;
  const reply = body.reply_to === undefined ? base?.reply_to : body.reply_to;
  // Another provider's keys are not kept when the provider changes.
  const sentHooks = body.webhooks as Record<string, unknown> | null | undefined;
  const kept = sentHooks?.provider === undefined || sentHooks.provider === base?.webhooks?.provider ? base?.webhooks : undefined;
  const hooks: Record<string, unknown> | undefined = sentHooks === null ? undefined : sentHooks === undefined ? base?.webhooks : merged(kept, sentHooks);
  const problems = [...missing('smtp', smtp, ['host', 'port', 'security'], why(stored)), ...(from ? [] : [{ field: 'from', message: `is required: ${why(stored)}` }])];
  // A host or port being set is judged as a connection would be now, the name resolved (a
  // partial update of other fields does not depend on DNS); each connection judges it again,
  // as DNS may have changed since.
  const sent = body.smtp as Record<string, unknown> | undefined;
  const judged = !base || (sent !== undefined && ('host' in sent || 'port' in sent));
  const problem = judged && typeof smtp.host === 'string' && typeof smtp.port === 'number' ? await s.outbound.problem(smtp.host, smtp.port) : undefined;
  if (problem) problems.push({ field: problem === 'port' ? 'smtp.port' : 'smtp.host', message: SMTP_DESTINATION[problem] });
  if (hooks) {
    const needs = { sendgrid: ['verification_key'], mailgun: ['signing_key'], postmark: ['username', 'password'] }[hooks.provider as string];
    problems.push(...(needs ? missing('webhooks', hooks, needs, `the ${hooks.provider as string} callbacks are verified with it`) : [{ field: 'webhooks.provider', message: 'is required' }]));
    const keyProblem = hooks.provider === 'sendgrid' && typeof hooks.verification_key === 'string' ? sendgridKeyProblem(hooks.verification_key) : undefined;
    if (keyProblem) problems.push({ field: 'webhooks.verification_key', message: keyProblem });
  }
  if (problems.length > 0) refuse(problems);
  return { smtp, from, ...(reply ? { reply_to: reply } : {}), ...(hooks ? { webhooks: hooks } : {}) } as EmailChannel;
}

function smsSettings(stored: StoredSettings<'sms'> | null, body: { twilio?: Record<string, unknown>; default_country?: string | null }): SmsChannel {
  const base = stored?.readable ? stored.settings : undefined;
  const twilio = merged(base?.twilio, body.twilio);
  const country = body.default_country === undefined ? base?.default_country : body.default_country;
  const problems = missing('twilio', twilio, ['account_sid', 'auth_token'], why(stored));
  if (twilio.from === undefined && twilio.messaging_service_sid === undefined) problems.push({ field: 'twilio.from', message: 'or twilio.messaging_service_sid is required: where the messages are sent from' });
  if (body.default_country && !isPhoneCountry(body.default_country)) problems.push({ field: 'default_country', message: 'is not a country code (ISO 3166 alpha-2) with known phone numbers' });
  if (problems.length > 0) refuse(problems);
  return { twilio, ...(country ? { default_country: country } : {}) } as SmsChannel;
}

function describe<T>(stored: StoredSettings<MessageChannel> | null, view: (s: T) => Record<string, unknown>) {
  if (!stored) return { configured: false };
  if (!stored.readable) return { configured: true, readable: false };
  return { configured: true, readable: true, ...view(stored.settings as T) };
}

/** GET /channels, and what each PUT answers. */
async function present(q: Queryable, s: MessagingSettings, workspaceId: string) {
  const urls = callbackUrls(s, workspaceId);
  const [push, email, sms] = await Promise.all([
    loadPushChannels(q, s.secrets, workspaceId),
    loadMessageChannel(q, s.secrets, workspaceId, 'email'),
    loadMessageChannel(q, s.secrets, workspaceId, 'sms'),
  ]);
  return json(200, {
    success: true,
    data: {
      push: describePush(push),
      email: {
        ...describe<EmailChannel>(email, (c) => ({
          smtp: { host: c.smtp.host, port: c.smtp.port, security: c.smtp.security, username: c.smtp.username ?? null, max_connections: c.smtp.max_connections, rate_per_second: c.smtp.rate_per_second ?? null },
          from: { email: c.from.email, name: c.from.name ?? null },
          reply_to: c.reply_to ?? null,
          webhooks: c.webhooks ? { provider: c.webhooks.provider, url: urls.email } : null,
        })),
        sandbox: !email && s.emailMode === 'sandbox',
      },
      sms: {
        ...describe<SmsChannel>(sms, (c) => ({
          twilio: { account_sid: c.twilio.account_sid, from: c.twilio.from ?? null, messaging_service_sid: c.twilio.messaging_service_sid ?? null },
          default_country: c.default_country ?? null,
        })),
        sandbox: !sms && s.smsMode === 'sandbox',
        status_callback_url: urls.smsStatus,
        inbound_url: urls.smsInbound,
      },
    },
  });
}

const get: Handler = (ctx) => present(ctx.db, ctx.messaging, ctx.workspaceId);

const putEmail: Handler<'PUT /workspaces/{workspaceId}/channels/email'> = async (ctx) => {
  requireManager(ctx);
  const s = ctx.messaging;
  await ctx.db.tx(async (q) => {
    const settings = ctx.body.smtp === null ? null : await emailSettings(s, await loadMessageChannel(q, s.secrets, ctx.workspaceId, 'email', true), ctx.body);
    await saveMessageChannel(q, s.secrets, ctx.workspaceId, 'email', settings);
  });
  return present(ctx.db, s, ctx.workspaceId);
};

const putSms: Handler<'PUT /workspaces/{workspaceId}/channels/sms'> = async (ctx) => {
  requireManager(ctx);
  const s = ctx.messaging;
  await ctx.db.tx(async (q) => {
    const { twilio, ...rest } = ctx.body;
    const settings = twilio === null ? null : smsSettings(await loadMessageChannel(q, s.secrets, ctx.workspaceId, 'sms', true), { ...rest, twilio });
    await saveMessageChannel(q, s.secrets, ctx.workspaceId, 'sms', settings);
  });
  return present(ctx.db, s, ctx.workspaceId);
};

export const messageChannelHandlers = {
  'PUT /workspaces/{workspaceId}/channels/email': putEmail,
  'PUT /workspaces/{workspaceId}/channels/sms': putSms,
  'GET /workspaces/{workspaceId}/channels': get,
} satisfies Handlers;

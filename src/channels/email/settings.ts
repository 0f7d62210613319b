// The email channel's settings (docs/channels.md): the SMTP relay, the sender, and how delivery
// callbacks are verified; sealed in the `email` column (store/channel-settings.ts).
import { createPublicKey } from 'node:crypto';
import type { Queryable } from '../../store/db.js';
import { loadChannelSettings, saveChannelSettings, type StoredSettings } from '../../store/channel-settings.js';
import type { SettingsDeps, SettingsRoute } from '../channel.js';
import { sandboxed } from '../settings.js';
import { describeStored, merged, missing, refuse, why } from '../settings-input.js';
import { SMTP_POOLS } from './pools.js';
import type { SmtpSettings } from './transport.js';

type EmailWebhookProvider = 'sendgrid' | 'mailgun' | 'postmark';

export interface EmailChannel {
  smtp: SmtpSettings;
  from: { email: string; name?: string };
  reply_to?: string;
  webhooks?: { provider: EmailWebhookProvider; verification_key?: string; signing_key?: string; username?: string; password?: string };
}

const NAME = 'email';

/** The workspace's email settings; `lock` holds them until the transaction ends. */
export const loadEmailSettings = (q: Queryable, deps: Pick<SettingsDeps, 'settings'>, workspaceId: string, lock = false): Promise<StoredSettings<EmailChannel> | null> =>
  loadChannelSettings<EmailChannel>(q, deps.settings.secrets, workspaceId, NAME, lock);

/** The URL SendGrid, Mailgun and Postmark call back. */
const emailCallbackUrl = (publicUrl: string, workspaceId: string): string => `${publicUrl}/webhooks/email/${workspaceId}`;

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

type Body = Record<string, Record<string, unknown> | string | null | undefined>;

async function emailSettings(deps: SettingsDeps, stored: StoredSettings<EmailChannel> | null, body: Body): Promise<EmailChannel> {
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
  const problem = judged && typeof smtp.host === 'string' && typeof smtp.port === 'number' ? await deps.pools.of(SMTP_POOLS).outbound.problem(smtp.host, smtp.port) : undefined;
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

export const EMAIL_SETTINGS: SettingsRoute = {
  async put(q, deps, workspaceId, raw) {
    const body = raw as Body;
    const settings = body.smtp === null ? null : await emailSettings(deps, await loadEmailSettings(q, deps, workspaceId, true), body);
    await saveChannelSettings(q, deps.settings.secrets, workspaceId, NAME, settings);
  },
  async describe(q, deps, workspaceId) {
    const stored = await loadEmailSettings(q, deps, workspaceId);
    return {
      ...describeStored(stored, (c) => ({
        smtp: { host: c.smtp.host, port: c.smtp.port, security: c.smtp.security, username: c.smtp.username ?? null, max_connections: c.smtp.max_connections, rate_per_second: c.smtp.rate_per_second ?? null },
        from: { email: c.from.email, name: c.from.name ?? null },
        reply_to: c.reply_to ?? null,
        webhooks: c.webhooks ? { provider: c.webhooks.provider, url: emailCallbackUrl(deps.settings.publicUrl, workspaceId) } : null,
      })),
      sandbox: !stored && sandboxed(deps.settings, NAME),
    };
  },
};

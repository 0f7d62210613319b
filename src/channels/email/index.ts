// The email channel (docs/channels.md): a person's `email`, the workspace's SMTP relay (a
// nodemailer pool per workspace and actor, email/transport.ts) or the sandbox; callbacks from
// SendGrid, Mailgun and Postmark.
import { channelFields } from '../../domain/campaigns.js';
import { InvalidInput } from '../../domain/errors.js';
import { unavailable, type AddressedChannel, type ChannelDeps, type OpenChannel, type Outgoing, type SendAnswer } from '../channel.js';
import { held } from '../decisions.js';
import { sendAddressed } from '../send.js';
import { emailMessage, htmlPart, textPart, type EmailContent } from './message.js';
import { sandboxEmailEvent } from './sandbox.js';
import { EMAIL_SETTINGS, loadEmailSettings, type EmailChannel } from './settings.js';
import { SMTP_POOLS } from './pools.js';
import { sandboxed } from '../settings.js';
import { isEmailAddress } from './address.js';
import { pixelTag, wrapHtml } from '../../domain/tracking.js';

/** The rendered fields as an email's content. */
const emailContent = (f: Readonly<Record<string, string>>): EmailContent => ({ subject: f.subject ?? '', html: f.html, text: f.text, preheader: f.preheader });

const address = (p: { email: string | null }) => p.email?.trim() || undefined;

async function viaSmtp(deps: ChannelDeps, settings: EmailChannel, out: Outgoing): Promise<SendAnswer> {
  const mail = emailMessage(settings, out.address, out.messageId, emailContent(out.fields), out.unsubscribeUrl);
  const o = await deps.pools.of(SMTP_POOLS).send(out.workspaceId, settings, mail, out.deadline);
  if (o.status === 'sent') return { status: 'sent', providerId: out.messageId };
  return { status: 'failed', error: o.error, retryable: o.retryable, ...(o.invalidAddress ? { suppress: 'invalid_address' as const } : {}) };
}

const SANDBOX: OpenChannel = {
  provider: 'sandbox',
  address,
  send: async (out) => ({ status: 'sent', providerId: out.messageId, reported: sandboxEmailEvent(out.address) }),
};

export const email: AddressedChannel = {
  name: 'email',
  stopsAtBounce: true,
  policy: 'none',
  noAddress: held('no_email_address', 'The person has no email address'),
  fields: channelFields,
  compose(rendered) {
    // The text part as sent (derived from the html when the node has none, once) is what the record keeps.
    const text = textPart(emailContent(rendered));
    return { fields: { ...rendered, text }, title: rendered.subject ?? null, body: text };
  },
  // The html's links and its pixel; the text part keeps its links as they are (docs/tracking.md).
  track: (fields, { wrap, pixel }) => (fields.html === undefined ? { ...fields } : { ...fields, html: wrapHtml(fields.html, wrap, pixel === undefined ? undefined : pixelTag(pixel)) }),
  preview(rendered) {
    const c = emailContent(rendered);
    return { subject: c.subject, html: htmlPart(c) ?? null, text: textPart(c), preheader: c.preheader ?? null };
  },
  async open(deps, workspaceId) {
    const stored = await loadEmailSettings(deps.db, deps, workspaceId);
    if (!stored && sandboxed(deps.settings, 'email')) return SANDBOX;
    if (!stored?.readable) return unavailable('smtp', address, stored ? "the email channel's settings cannot be opened (set them again)" : 'no email channel is configured');
    const settings = stored.settings;
    return { provider: 'smtp', address, send: (out) => viaSmtp(deps, settings, out) };
  },
  settings: EMAIL_SETTINGS,
  suppressionAddress(raw) {
    // Stored in lower case, so that one address has one suppression.
    const lower = raw.trim().toLowerCase();
    if (!isEmailAddress(lower)) throw new InvalidInput('Request body is invalid: address must be an email address', [{ field: 'address', message: 'must be an email address' }]);
    return lower;
  },
  sendNode: (deps, send, recipients) => sendAddressed(email, deps, send, recipients),
};


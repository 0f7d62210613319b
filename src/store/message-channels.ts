// Email and SMS channel settings per workspace (docs/channels.md): one `message_channels` row
// (migration 200), one column per channel holding its settings as JSON sealed with AES-256-GCM
// (util/sealing.ts) under HERALD_SECRETS_KEY, bound to its workspace and column, as push
// credentials are (store/push-channels.ts). A column is null when the channel is not configured.
import type { Queryable } from './db.js';
import { UnsealError, type SecretBox } from '../util/sealing.js';

type SmtpSecurity = 'tls' | 'starttls' | 'none';
type EmailWebhookProvider = 'sendgrid' | 'mailgun' | 'postmark';

export interface EmailChannel {
  smtp: { host: string; port: number; security: SmtpSecurity; username?: string; password?: string; max_connections: number; rate_per_second?: number };
  from: { email: string; name?: string };
  reply_to?: string;
  webhooks?: { provider: EmailWebhookProvider; verification_key?: string; signing_key?: string; username?: string; password?: string };
}

export interface SmsChannel {
  twilio: { account_sid: string; auth_token: string; from?: string; messaging_service_sid?: string };
  /** ISO 3166 alpha-2: the country of numbers stored without `+`. */
  default_country?: string;
}

interface Settings {
  email: EmailChannel;
  sms: SmsChannel;
}

export type MessageChannel = keyof Settings;

/** A configured channel: its settings, or why they cannot be opened (sealed under another key, damaged). */
export type StoredSettings<C extends MessageChannel> = { readable: true; settings: Settings[C] } | { readable: false; error: string };

const context = (workspaceId: string, channel: MessageChannel) => `message_channels/${workspaceId}/${channel}`;

/** The channel's settings, opened; null when it is not configured. `lock` holds the row until the transaction ends. */
export async function loadMessageChannel<C extends MessageChannel>(q: Queryable, box: SecretBox, workspaceId: string, channel: C, lock = false): Promise<StoredSettings<C> | null> {
  const r = await q.query<{ sealed: Buffer | null }>(`SELECT ${channel} AS sealed FROM message_channels WHERE workspace_id = $1${lock ? ' FOR UPDATE' : ''}`, [workspaceId]);
  const sealed = r.rows[0]?.sealed;
  if (!sealed) return null;
  try {
    return { readable: true, settings: JSON.parse(box.open(sealed, context(workspaceId, channel))) as Settings[C] };
  } catch (err) {
    if (!(err instanceof UnsealError)) throw err;
    return { readable: false, error: err.message };
  }
}

/** Seals and stores the channel's settings (null removes the channel); the other channel stays. */
export async function saveMessageChannel<C extends MessageChannel>(q: Queryable, box: SecretBox, workspaceId: string, channel: C, settings: Settings[C] | null): Promise<void> {
  const sealed = settings && box.seal(JSON.stringify(settings), context(workspaceId, channel));
  await q.query(
    `INSERT INTO message_channels AS m (workspace_id, ${channel}, updated_at) VALUES ($1, $2, now())
     ON CONFLICT (workspace_id) DO UPDATE SET ${channel} = EXCLUDED.${channel}, updated_at = now()`,
    [workspaceId, sealed],
  );
}

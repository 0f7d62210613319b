// Message records of every channel (docs/channels.md; README, Request bodies and Routes): rows of
// the `messages` table with their `channel`, push's per-device deliveries, and the scheduled
// sends waiting in the same table. One writer for every channel (saveMessages), a page of a
// send's records and deliveries in one statement.
import { prepared, type Queryable } from './db.js';
import type { JobTable } from './job-queue.js';
import { pageBackTerm, type PageBack } from './page-back.js';
import type { Channel } from '../domain/messages.js';

/** Why a send claimed by a process that stopped is failed rather than sent again. */
const INTERRUPTED = 'Interrupted while sending (the process stopped); not sent again, since the provider may have received it';

/** What a send comes to: its outcome, or (push's scheduled sends) waiting for its time. The providers' reports add `delivered`, `bounced`, `complained` later. */
type RecordStatus = 'scheduled' | 'sent' | 'failed' | 'policy_suppressed' | 'skipped' | 'delivered' | 'bounced' | 'complained';

/** A provider event kept on a message (channels/callbacks.ts). */
interface MessageEvent {
  type: string;
  at: string;
  /** Herald's own open or click made by a proxy or a scanner (docs/tracking.md). */
  machine?: true;
  details?: Record<string, unknown>;
}

/** One message as its send writes it, on any channel. */
export interface MessageRecord {
  id: string;
  workspace_id: string;
  person_id: string;
  external_id: string;
  channel: Channel;
  status: RecordStatus;
  provider: string;
  provider_id: string | null;
  /** Email and SMS: the address or number sent to (push's tokens are its deliveries'). */
  address: string | null;
  skip_reason: string | null;
  error: string | null;
  /** Push: the rendered title and body; email: the subject and the text part; SMS: the body. */
  title: string | null;
  body: string | null;
  tags: string[] | null;
  campaign_id: string | null;
  /** A campaign's message: the workflow node that sent it. */
  node_id: string | null;
  event_id: string | null;
  /** When the provider accepted it (ISO), else null. */
  sent_at: string | null;
  /** Push only. */
  platform?: string | null;
  image_url?: string | null;
  action_url?: string | null;
  custom_data?: Record<string, unknown> | null;
  /** The targets of its tracked links, in their tokens' order (docs/tracking.md); null when none was wrapped. */
  links?: string[] | null;
  /** Kept only while scheduled: the send renders with them when due. */
  variables?: Record<string, unknown> | null;
  scheduled_at?: string | null;
}

/** A push record: its push fields present. */
export type PushRecord = MessageRecord & Required<Pick<MessageRecord, 'platform' | 'image_url' | 'action_url' | 'custom_data' | 'variables' | 'scheduled_at'>>;

export interface DeliveryRecord {
  message_id: string;
  device_id: string;
  device_token: string;
  platform: string;
  status: 'sent' | 'failed';
  provider_id: string | null;
  error: string | null;
}

const MESSAGE_COLUMNS = `id uuid, workspace_id uuid, person_id uuid, external_id text, channel text, status text, platform text, provider text,
  provider_id text, address text, skip_reason text, error text, title text, body text, image_url text, action_url text, custom_data jsonb,
  variables jsonb, tags jsonb, campaign_id text, node_id text, event_id text, scheduled_at timestamptz, sent_at timestamptz, links jsonb`;
const MESSAGE_NAMES = MESSAGE_COLUMNS.split(',').map((c) => c.trim().split(' ')[0]!);

/**
 * Writes a page of records and their deliveries in one statement (so atomically, and in one
 * round trip), whatever their channel: each send's row is written once with its outcome. A
 * scheduled send's row exists already (it was claimed): its outcome replaces it, keeping its id,
 * scheduled_at and created_at; a row that already holds an outcome (a campaign node claimed
 * again) stays as it is. The rows arrive as json, not jsonb: read once, field by field, json
 * skips building the whole jsonb value first (a sixth less time for a campaign page's records).
 */
export async function saveMessages(q: Queryable, messages: readonly MessageRecord[], deliveries: readonly DeliveryRecord[] = []): Promise<void> {
  if (messages.length === 0) return;
  await q.query(SAVE_MESSAGES, [JSON.stringify(messages), JSON.stringify(deliveries)]);
}

/** Once per page of a fan-out: prepared (planned once per connection). */
const SAVE_MESSAGES = prepared(
  'save-messages',
  `WITH m AS (
       INSERT INTO messages AS t (${MESSAGE_NAMES.join(', ')})
       SELECT ${MESSAGE_NAMES.join(', ')} FROM json_to_recordset($1::json) AS x(${MESSAGE_COLUMNS})
       ON CONFLICT (id) DO UPDATE SET ${MESSAGE_NAMES.filter((c) => c !== 'id' && c !== 'scheduled_at').map((c) => `${c} = EXCLUDED.${c}`).join(', ')}, claimed_by = NULL, claimed_at = NULL
       WHERE t.status IN ('scheduled', 'sending')
       RETURNING t.id
     )
     INSERT INTO push_deliveries (message_id, device_id, device_token, platform, status, provider_id, error)
     SELECT message_id, device_id, device_token, platform, status, provider_id, error
     FROM json_to_recordset($2::json) AS x(message_id uuid, device_id uuid, device_token text, platform text, status text, provider_id text, error text)
     WHERE x.message_id IN (SELECT id FROM m)`,
);

/** The times of the people's `sent` pushes since `sinceMs`, by person. */
export async function sentTimes(q: Queryable, personIds: readonly string[], sinceMs: number): Promise<Map<string, number[]>> {
  const r = await q.query<{ person_id: string; times: string[] }>(
    `SELECT person_id, array_agg((extract(epoch FROM sent_at) * 1000)::bigint::text ORDER BY sent_at) AS times FROM messages
     WHERE person_id = ANY ($1::uuid[]) AND status = 'sent' AND sent_at > to_timestamp($2::double precision / 1000)
     GROUP BY person_id`,
    [personIds, sinceMs],
  );
  return new Map(r.rows.map((row) => [row.person_id, row.times.map(Number)]));
}

export interface StoredMessage extends Omit<PushRecord, 'status'> {
  /** `sending` while a scheduled send is claimed. */
  status: RecordStatus | 'sending';
  events: MessageEvent[];
  /** Provider events applied but not kept in `events`, past its cap (channels/callbacks.ts). */
  events_not_stored: number;
  created_at: Date;
  deliveries: Omit<DeliveryRecord, 'message_id'>[];
}

const READ = `SELECT m.id, m.workspace_id, m.person_id, m.external_id, m.status, m.platform, m.provider, m.provider_id, m.skip_reason, m.error,
    m.title, m.body, m.image_url, m.action_url, m.custom_data, m.variables, m.tags, m.campaign_id, m.event_id, m.scheduled_at, m.sent_at, m.created_at, m.channel, m.address, m.events, m.events_not_stored,
    COALESCE((SELECT jsonb_agg(jsonb_build_object('device_id', d.device_id, 'device_token', d.device_token, 'platform', d.platform,
      'status', d.status, 'provider_id', d.provider_id, 'error', d.error) ORDER BY d.device_id)
      FROM push_deliveries d WHERE d.message_id = m.id), '[]') AS deliveries
  FROM messages m`;

/** A campaign's messages with their deliveries, newest first; `before` pages back. Read along messages_by_campaign_time. */
export async function campaignMessages(q: Queryable, workspaceId: string, campaignId: string, before: PageBack | null, limit: number): Promise<StoredMessage[]> {
  const params: unknown[] = [workspaceId, campaignId, limit];
  const r = await q.query<StoredMessage>(
    `${READ} WHERE m.workspace_id = $1 AND m.campaign_id = $2::text${pageBackTerm('m', 'messages', 'workspace_id = $1', before, params)} ORDER BY m.created_at DESC, m.id DESC LIMIT $3`,
    params,
  );
  return r.rows;
}

/** One record of the workspace with its deliveries, or null. */
export async function loadMessage(q: Queryable, workspaceId: string, id: string): Promise<StoredMessage | null> {
  const r = await q.query<StoredMessage>(`${READ} WHERE m.workspace_id = $1 AND m.id = $2`, [workspaceId, id]);
  return r.rows[0] ?? null;
}

/** Whether the workspace has a push record with this id (a suppression's source_push_id; the caller has checked `id` is a UUID). */
export async function pushMessageExists(q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const r = await q.query('SELECT 1 FROM messages WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return r.rowCount > 0;
}

/** A person's records, newest first, and how many there are. */
export async function messagesOf(q: Queryable, workspaceId: string, personId: string, limit: number, offset: number): Promise<{ messages: StoredMessage[]; total: number }> {
  const [page, total] = await Promise.all([
    q.query<StoredMessage>(`${READ} WHERE m.workspace_id = $1 AND m.person_id = $2 ORDER BY m.created_at DESC, m.id DESC LIMIT $3 OFFSET $4`, [workspaceId, personId, limit, offset]),
    q.query<{ n: string }>('SELECT count(*) AS n FROM messages WHERE workspace_id = $1 AND person_id = $2', [workspaceId, personId]),
  ]);
  return { messages: page.rows, total: Number(total.rows[0]!.n) };
}

/**
 * Scheduled sends as jobs (store/job-queue.ts): `scheduled` waits for scheduled_at, `sending` is
 * claimed, and a claim not completed (its holder gone, its lease stale) is failed, never sent
 * again, since the provider may have had it. Their records (saveMessages) complete them.
 */
export const SCHEDULED_SEND_JOBS: JobTable = {
  name: 'scheduled-sends',
  table: 'messages',
  state: 'status',
  values: { waiting: `'scheduled'`, running: `'sending'` },
  due: 'scheduled_at',
  returning: `id, workspace_id, person_id, external_id, status, platform, provider, provider_id, skip_reason, error, title, body, image_url,
    action_url, custom_data, variables, tags, campaign_id, event_id, scheduled_at, sent_at`,
  notCompleted: { fail: `status = 'failed', error = '${INTERRUPTED}'` },
};

/** A campaign send's record (campaigns/executor.ts): its id is deterministic, UUIDv5 of enrolment and node. */
export interface CampaignSendRecord {
  id: string;
  workspace_id: string;
  person_id: string;
  external_id: string;
  campaign_id: string;
  node_id: string;
  event_id: string | null;
  /** The node's channel: push, email or sms (docs/channels.md). */
  channel: Channel;
}

/**
 * Campaign sends whose claim was interrupted (the process stopped while they were with the
 * engine or the email/SMS sender): those not recorded are recorded `failed` on their node's
 * channel, never sent again, since the provider may have had them; those recorded keep their outcome.
 */
export async function recordInterrupted(q: Queryable, sends: readonly CampaignSendRecord[]): Promise<void> {
  if (sends.length === 0) return;
  await q.query(
    `INSERT INTO messages (id, workspace_id, person_id, external_id, status, provider, campaign_id, node_id, event_id, error, channel)
     SELECT id, workspace_id, person_id, external_id, 'failed', 'none', campaign_id, node_id, event_id, $2, channel
     FROM json_to_recordset($1::json) AS x(id uuid, workspace_id uuid, person_id uuid, external_id text, campaign_id text, node_id text, event_id text, channel text)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(sends), INTERRUPTED],
  );
}

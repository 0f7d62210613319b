// Email and SMS message records (docs/channels.md): rows of the `messages` table with their `channel`
// (migration 201), the address sent to, and the provider events applied to them.
import type { Queryable } from './db.js';
import type { AddressChannel } from '../domain/messages.js';

type ChannelMessageStatus = 'sent' | 'failed' | 'skipped' | 'policy_suppressed' | 'delivered' | 'bounced' | 'complained';

export interface ChannelMessageRecord {
  id: string;
  workspace_id: string;
  person_id: string;
  external_id: string;
  channel: AddressChannel;
  status: ChannelMessageStatus;
  provider: string;
  provider_id: string | null;
  address: string | null;
  skip_reason: string | null;
  error: string | null;
  /** Email: subject (title) and text; SMS: the body. */
  title: string | null;
  body: string | null;
  campaign_id: string | null;
  event_id: string | null;
  events: { type: string; at: string; details?: Record<string, unknown> }[];
  tags: string[] | null;
}

const COLUMNS = ['id', 'workspace_id', 'person_id', 'external_id', 'channel', 'status', 'provider', 'provider_id', 'address', 'skip_reason', 'error', 'title', 'body', 'campaign_id', 'event_id', 'events', 'tags'] as const;

/** Writes the records; one already written (a node claimed again) stays as it is. */
export async function saveChannelMessages(q: Queryable, records: readonly ChannelMessageRecord[]): Promise<void> {
  if (records.length === 0) return;
  await q.query(
    `INSERT INTO messages (${COLUMNS.join(', ')}, sent_at)
     SELECT r.*, CASE WHEN r.status IN ('sent', 'delivered', 'bounced', 'complained') THEN now() END
     FROM jsonb_to_recordset($1::jsonb) AS r(id uuid, workspace_id uuid, person_id uuid, external_id text, channel text, status text, provider text, provider_id text,
       address text, skip_reason text, error text, title text, body text, campaign_id text, event_id text, events jsonb, tags jsonb)
     ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(records)],
  );
}

// A campaign's message counters per channel (docs/channels.md): `sent` counts every message that
// went to a provider (delivered, bounced and complained ones too), `delivered` those the
// provider reported delivered (a complaint came from a delivered message), `opened` and
// `clicked` the messages with such an event. The dashboard's test sends (tagged `test`) are not counted.
// Read from message_counters (migration 441), which the statements writing messages keep per
// campaign, channel and status: a read sums a few rows, however many messages the campaign has.
import { sqlLiterals, type Queryable } from './db.js';
import { MESSAGE_STATUSES, type Channel } from '../domain/messages.js';

const S = sqlLiterals(MESSAGE_STATUSES);
const messagesIn = (...statuses: string[]) => `COALESCE(sum(messages) FILTER (WHERE status IN (${statuses.join(', ')})), 0)::int`;

/** Each counter as an aggregate over message_counters: the one definition of each. */
const COUNTER_SQL = {
  sent: messagesIn(S.sent, S.delivered, S.bounced, S.complained),
  skipped: messagesIn(S.skipped),
  policy_suppressed: messagesIn(S.policy_suppressed),
  failed: messagesIn(S.failed),
  delivered: messagesIn(S.delivered, S.complained),
  bounced: messagesIn(S.bounced),
  complained: messagesIn(S.complained),
  opened: `COALESCE(sum(opened), 0)::int`,
  clicked: `COALESCE(sum(clicked), 0)::int`,
} as const;
const COUNTERS = Object.keys(COUNTER_SQL) as (keyof typeof COUNTER_SQL)[];
type Counters = Record<keyof typeof COUNTER_SQL, number>;
export type ChannelStats = Counters & { by_channel: Record<Channel, Counters> };

const select = (names: readonly (keyof typeof COUNTER_SQL)[]) => names.map((c) => `${COUNTER_SQL[c]} AS ${c}`).join(', ');

const zero = (): Counters => Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Counters;

export async function channelStats(q: Queryable, workspaceId: string, campaignId: string): Promise<ChannelStats> {
  const r = await q.query<Counters & { channel: Channel }>(
    `SELECT channel, ${select(COUNTERS)}
     FROM message_counters WHERE workspace_id = $1 AND campaign_id = $2::text GROUP BY channel`,
    [workspaceId, campaignId],
  );
  const total = zero();
  const by_channel = { push: zero(), email: zero(), sms: zero() };
  for (const { channel, ...counts } of r.rows) {
    by_channel[channel] = counts;
    for (const c of COUNTERS) total[c] += counts[c];
  }
  return { ...total, by_channel };
}

/** The campaign list's stats at a glance (all channels together), for each of `campaignIds`. */
export interface GlanceStats {
  enrolled: number;
  sent: number;
  delivered: number;
  failed: number;
  last_triggered_at: Date | null;
}

/** One statement for a page of campaigns: per campaign its enrolments and its message counters. */
export async function glanceStats(q: Queryable, workspaceId: string, campaignIds: readonly string[]): Promise<Map<string, GlanceStats>> {
  const r = await q.query<GlanceStats & { id: string }>(
    `SELECT c.id::text AS id, e.enrolled, e.last_triggered_at, m.sent, m.delivered, m.failed
     FROM unnest($2::uuid[]) AS c(id)
     CROSS JOIN LATERAL (SELECT count(*)::int AS enrolled, max(enrolled_at) AS last_triggered_at FROM campaign_enrolments WHERE campaign_id = c.id) e
     CROSS JOIN LATERAL (SELECT ${select(['sent', 'delivered', 'failed'])} FROM message_counters
                         WHERE workspace_id = $1 AND campaign_id = c.id::text) m`,
    [workspaceId, campaignIds],
  );
  return new Map(r.rows.map(({ id, ...s }) => [id, s]));
}

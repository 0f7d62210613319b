// A campaign's message counters per channel (docs/channels.md): `sent` counts every message that
// went to a provider (delivered, bounced and complained ones too), `delivered` those the
// provider reported delivered (a complaint came from a delivered message), `opened` and
// `clicked` the messages with such an event. The dashboard's test sends (tagged `test`) are not counted.
import type { Queryable } from './db.js';
import type { Channel } from '../domain/messages.js';

/** Each counter as an aggregate over messages: the one definition of each. */
const COUNTER_SQL = {
  sent: `count(*) FILTER (WHERE status IN ('sent', 'delivered', 'bounced', 'complained'))::int`,
  skipped: `count(*) FILTER (WHERE status = 'skipped')::int`,
  policy_suppressed: `count(*) FILTER (WHERE status = 'policy_suppressed')::int`,
  failed: `count(*) FILTER (WHERE status = 'failed')::int`,
  delivered: `count(*) FILTER (WHERE status IN ('delivered', 'complained'))::int`,
  bounced: `count(*) FILTER (WHERE status = 'bounced')::int`,
  complained: `count(*) FILTER (WHERE status = 'complained')::int`,
  opened: `count(*) FILTER (WHERE events @> '[{"type":"opened"}]')::int`,
  clicked: `count(*) FILTER (WHERE events @> '[{"type":"clicked"}]')::int`,
} as const;
const COUNTERS = Object.keys(COUNTER_SQL) as (keyof typeof COUNTER_SQL)[];
type Counters = Record<keyof typeof COUNTER_SQL, number>;
export type ChannelStats = Counters & { by_channel: Record<Channel, Counters> };

/** A campaign's messages that count: not the dashboard's test sends. */
const COUNTED = `NOT COALESCE(tags @> '["test"]'::jsonb, false)`;
const select = (names: readonly (keyof typeof COUNTER_SQL)[]) => names.map((c) => `${COUNTER_SQL[c]} AS ${c}`).join(', ');

const zero = (): Counters => Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Counters;

export async function channelStats(q: Queryable, workspaceId: string, campaignId: string): Promise<ChannelStats> {
  const r = await q.query<Counters & { channel: Channel }>(
    `SELECT channel, ${select(COUNTERS)}
     FROM messages WHERE workspace_id = $1 AND campaign_id = $2::text AND ${COUNTED} GROUP BY channel`,
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
     CROSS JOIN LATERAL (SELECT ${select(['sent', 'delivered', 'failed'])} FROM messages
                         WHERE workspace_id = $1 AND campaign_id = c.id::text AND ${COUNTED}) m`,
    [workspaceId, campaignIds],
  );
  return new Map(r.rows.map(({ id, ...s }) => [id, s]));
}

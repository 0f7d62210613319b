// A campaign's message counters per channel (DECISIONS §13): `sent` counts every message that
// went to a provider (delivered, bounced and complained ones too), `delivered` those the
// provider reported delivered (a complaint came from a delivered message), `opened` and
// `clicked` the messages with such an event. The dashboard's test sends (tagged `test`) are not counted.
import type { Queryable } from './db.js';
import type { Channel } from '../domain/messages.js';

const COUNTERS = ['sent', 'skipped', 'policy_suppressed', 'failed', 'delivered', 'bounced', 'complained', 'opened', 'clicked'] as const;
type Counters = Record<(typeof COUNTERS)[number], number>;
export type ChannelStats = Counters & { by_channel: Record<Channel, Counters> };

const zero = (): Counters => Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Counters;

export async function channelStats(q: Queryable, workspaceId: string, campaignId: string): Promise<ChannelStats> {
  const r = await q.query<Counters & { channel: Channel }>(
    `SELECT channel,
            count(*) FILTER (WHERE status IN ('sent', 'delivered', 'bounced', 'complained'))::int AS sent,
            count(*) FILTER (WHERE status = 'skipped')::int AS skipped,
            count(*) FILTER (WHERE status = 'policy_suppressed')::int AS policy_suppressed,
            count(*) FILTER (WHERE status = 'failed')::int AS failed,
            count(*) FILTER (WHERE status IN ('delivered', 'complained'))::int AS delivered,
            count(*) FILTER (WHERE status = 'bounced')::int AS bounced,
            count(*) FILTER (WHERE status = 'complained')::int AS complained,
            count(*) FILTER (WHERE events @> '[{"type":"opened"}]')::int AS opened,
            count(*) FILTER (WHERE events @> '[{"type":"clicked"}]')::int AS clicked
     FROM push_messages WHERE workspace_id = $1 AND campaign_id = $2::text AND NOT COALESCE(tags @> '["test"]'::jsonb, false) GROUP BY channel`,
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

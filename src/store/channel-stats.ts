// A campaign's message counters per channel (docs/channels.md): `sent` counts every message that
// went to a provider (delivered, bounced and complained ones too), `delivered` those the
// provider reported delivered (a complaint came from a delivered message), `opened` and
// `clicked` the messages with such an event. The dashboard's test sends (tagged `test`) are not counted.
// Read from message_counters (migration 441), which the statements writing messages keep per
// campaign, channel and status: a read sums a few rows, however many messages the campaign has.
import { sqlLiterals, type Queryable } from './db.js';
import { enrolmentStats } from './enrolment-counters.js';
import { CHANNELS, MESSAGE_STATUSES, type Channel } from '../domain/messages.js';

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
  const r = await q.query<Counters & { channel: Channel; slots: number }>(
    `SELECT channel, ${select(COUNTERS)}, count(*)::int AS slots
     FROM message_counters WHERE workspace_id = $1 AND campaign_id = $2::text GROUP BY channel`,
    [workspaceId, campaignId],
  );
  const total = zero();
  const by_channel = Object.fromEntries(CHANNELS.map((c) => [c, zero()])) as Record<Channel, Counters>;
  let slots = 0;
  for (const { channel, slots: n, ...counts } of r.rows) {
    by_channel[channel] = counts;
    for (const c of COUNTERS) total[c] += counts[c];
    slots += n;
  }
  if (slots > FOLD_AT) await q.query(FOLD, [workspaceId, campaignId]);
  return { ...total, by_channel };
}

/**
 * A campaign's counter rows past which its stats read folds them. Each database session that
 * wrote its messages has rows of its own, and the pool's sessions come and go (idle ones close),
 * so a campaign whose callbacks arrive over days gathers rows.
 */
const FOLD_AT = 64;
/**
 * Moves the campaign's counters into slot 0, but for the rows a writer holds now (SKIP LOCKED:
 * the fold never waits on a page, and a writer waits at most on this one statement).
 */
const FOLD = `WITH folded AS (
    DELETE FROM message_counters WHERE (workspace_id, campaign_id, channel, status, slot) IN (
      SELECT workspace_id, campaign_id, channel, status, slot FROM message_counters
      WHERE workspace_id = $1 AND campaign_id = $2::text AND slot <> 0 FOR UPDATE SKIP LOCKED)
    RETURNING *)
  INSERT INTO message_counters AS c (workspace_id, campaign_id, channel, status, slot, messages, opened, clicked)
  SELECT workspace_id, campaign_id, channel, status, 0, sum(messages), sum(opened), sum(clicked) FROM folded
  GROUP BY workspace_id, campaign_id, channel, status ORDER BY channel, status
  ON CONFLICT (workspace_id, campaign_id, channel, status, slot) DO UPDATE
    SET messages = c.messages + excluded.messages, opened = c.opened + excluded.opened, clicked = c.clicked + excluded.clicked`;

/** The campaign list's stats at a glance (all channels together), for each of `campaignIds`. */
export interface GlanceStats {
  enrolled: number;
  sent: number;
  delivered: number;
  failed: number;
  last_triggered_at: Date | null;
}

/** Two statements for a page of campaigns: per campaign its enrolment counters and its message counters. */
export async function glanceStats(q: Queryable, workspaceId: string, campaignIds: readonly string[]): Promise<Map<string, GlanceStats>> {
  const enrolments = await enrolmentStats(q, campaignIds);
  const r = await q.query<Pick<GlanceStats, 'sent' | 'delivered' | 'failed'> & { id: string }>(
    `SELECT c.id::text AS id, m.sent, m.delivered, m.failed
     FROM unnest($2::uuid[]) AS c(id)
     CROSS JOIN LATERAL (SELECT ${select(['sent', 'delivered', 'failed'])} FROM message_counters
                         WHERE workspace_id = $1 AND campaign_id = c.id::text) m`,
    [workspaceId, campaignIds],
  );
  return new Map(r.rows.map(({ id, ...s }) => {
    const e = enrolments.get(id)!;
    return [id, { ...s, enrolled: e.enrolled, last_triggered_at: e.last_triggered_at }];
  }));
}

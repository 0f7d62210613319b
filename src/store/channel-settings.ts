// Channel settings per workspace (docs/channels.md): one `message_channels` row (migration 200),
// one column per channel named as the channel, holding its settings as JSON sealed with
// AES-256-GCM (util/sealing.ts) under HERALD_SECRETS_KEY, bound to its workspace and column, as
// push credentials are (store/push-channels.ts). A column is null when the channel is not
// configured. What the settings hold is the channel's own (channels/<name>/settings.ts).
import type { Queryable } from './db.js';
import { UnsealError, type SecretBox } from '../util/sealing.js';

/** A configured channel: its settings, or why they cannot be opened (sealed under another key, damaged). */
export type StoredSettings<T> = { readable: true; settings: T } | { readable: false; error: string };

const context = (workspaceId: string, channel: string) => `message_channels/${workspaceId}/${channel}`;

/** The channel's column: a channel's name is an identifier, checked here since it is written into SQL. */
function column(channel: string): string {
  if (!/^[a-z][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
  return channel;
}

/** The channel's settings, opened; null when it is not configured. `lock` holds the row until the transaction ends. */
export async function loadChannelSettings<T>(q: Queryable, box: SecretBox, workspaceId: string, channel: string, lock = false): Promise<StoredSettings<T> | null> {
  const r = await q.query<{ sealed: Buffer | null }>(`SELECT ${column(channel)} AS sealed FROM message_channels WHERE workspace_id = $1${lock ? ' FOR UPDATE' : ''}`, [workspaceId]);
  const sealed = r.rows[0]?.sealed;
  if (!sealed) return null;
  try {
    return { readable: true, settings: JSON.parse(box.open(sealed, context(workspaceId, channel))) as T };
  } catch (err) {
    if (!(err instanceof UnsealError)) throw err;
    return { readable: false, error: err.message };
  }
}

/** Seals and stores the channel's settings (null removes the channel); the other channels stay. */
export async function saveChannelSettings<T>(q: Queryable, box: SecretBox, workspaceId: string, channel: string, settings: T | null): Promise<void> {
  const c = column(channel);
  const sealed = settings && box.seal(JSON.stringify(settings), context(workspaceId, channel));
  await q.query(
    `INSERT INTO message_channels AS m (workspace_id, ${c}, updated_at) VALUES ($1, $2, now())
     ON CONFLICT (workspace_id) DO UPDATE SET ${c} = EXCLUDED.${c}, updated_at = now()`,
    [workspaceId, sealed],
  );
}

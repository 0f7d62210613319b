// Push provider credentials per workspace (docs/channels.md): one `push_channels` row
// (migration 6), one column per channel, each holding that channel's credentials as JSON sealed
// with AES-256-GCM (util/sealing.ts) under HERALD_SECRETS_KEY, bound to its workspace and column.
// A column is null when the channel is not configured. `updated_at` changes with every write:
// replicas compare it to know their providers are current.
import type { Queryable } from './db.js';
import { UnsealError, type SecretBox } from '../util/sealing.js';

/** The fields of a Google service-account key Herald keeps (the rest of the file is dropped). */
export interface FcmCredentials {
  project_id: string;
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
}

export interface ApnsCredentials {
  key_p8: string;
  key_id: string;
  team_id: string;
  bundle_id: string;
  production: boolean;
}

interface ProviderCredentials {
  fcm: FcmCredentials;
  apns: ApnsCredentials;
}

export type PushProviderName = keyof ProviderCredentials;
export const PUSH_PROVIDERS: readonly PushProviderName[] = ['fcm', 'apns'];

/** A configured channel: its credentials, or why they cannot be opened (sealed under another key, damaged). */
type StoredCredentials<C extends PushProviderName> = { readable: true; credentials: ProviderCredentials[C] } | { readable: false; error: string };

export interface PushChannels {
  fcm: StoredCredentials<'fcm'> | null;
  apns: StoredCredentials<'apns'> | null;
  /** The sealed columns as stored: equal bytes mean unchanged credentials. */
  sealed: Record<PushProviderName, Buffer | null>;
  updated_at: Date;
  /** `updated_at` to the microsecond, as text: what `pushChannelsVersion` answers. */
  version: string;
}

/** Per channel: credentials to store, null to remove it; an absent channel is left as it is. */
export type PushChannelChanges = { [C in PushProviderName]?: ProviderCredentials[C] | null };

interface Row {
  fcm: Buffer | null;
  apns: Buffer | null;
  updated_at: Date;
  version: string;
}

const VERSION = `(extract(epoch FROM updated_at) * 1000000)::bigint::text AS version`;
const COLUMNS = `fcm, apns, updated_at, ${VERSION}`;
const context = (workspaceId: string, channel: PushProviderName) => `push_channels/${workspaceId}/${channel}`;

function opened<C extends PushProviderName>(box: SecretBox, workspaceId: string, channel: C, sealed: Buffer | null): StoredCredentials<C> | null {
  if (sealed === null) return null;
  try {
    return { readable: true, credentials: JSON.parse(box.open(sealed, context(workspaceId, channel))) as ProviderCredentials[C] };
  } catch (err) {
    if (!(err instanceof UnsealError)) throw err;
    return { readable: false, error: err.message };
  }
}

function present(box: SecretBox, workspaceId: string, row: Row): PushChannels {
  return {
    fcm: opened(box, workspaceId, 'fcm', row.fcm),
    apns: opened(box, workspaceId, 'apns', row.apns),
    sealed: { fcm: row.fcm, apns: row.apns },
    updated_at: row.updated_at,
    version: row.version,
  };
}

/** The workspace's channels, opened; null when none were ever set. `lock` holds the row until the transaction ends. */
export async function loadPushChannels(q: Queryable, box: SecretBox, workspaceId: string, lock = false): Promise<PushChannels | null> {
  const r = await q.query<Row>(`SELECT ${COLUMNS} FROM push_channels WHERE workspace_id = $1${lock ? ' FOR UPDATE' : ''}`, [workspaceId]);
  return r.rows[0] ? present(box, workspaceId, r.rows[0]) : null;
}

/** The version of the workspace's channels (null: none were ever set); cheap, for caches to check. */
export async function pushChannelsVersion(q: Queryable, workspaceId: string): Promise<string | null> {
  const r = await q.query<{ version: string }>(`SELECT ${VERSION} FROM push_channels WHERE workspace_id = $1`, [workspaceId]);
  return r.rows[0]?.version ?? null;
}

/** Seals and stores the channels `changes` names (the others stay); returns the row as it now is. */
export async function savePushChannels(q: Queryable, box: SecretBox, workspaceId: string, changes: PushChannelChanges): Promise<PushChannels> {
  const sealed = (c: PushProviderName) => {
    const v = changes[c];
    return v ? box.seal(JSON.stringify(v), context(workspaceId, c)) : null;
  };
  const r = await q.query<Row>(
    `INSERT INTO push_channels AS p (workspace_id, fcm, apns, updated_at) VALUES ($1, $2, $3, now())
     ON CONFLICT (workspace_id) DO UPDATE SET
       fcm = CASE WHEN $4 THEN EXCLUDED.fcm ELSE p.fcm END,
       apns = CASE WHEN $5 THEN EXCLUDED.apns ELSE p.apns END,
       updated_at = now()
     RETURNING ${COLUMNS}`,
    [workspaceId, sealed('fcm'), sealed('apns'), changes.fcm !== undefined, changes.apns !== undefined],
  );
  return present(box, workspaceId, r.rows[0]!);
}

// The workspace's webhook node secret (docs/channels.md, "The webhook channel"): one per
// workspace, made on first use (the first webhook node's send, or its owner asking for it) and
// stored sealed under HERALD_SECRETS_KEY like every other secret; every webhook node's call is
// signed with it (Standard Webhooks headers), so a receiver verifies calls as it verifies the
// outbound endpoints' events.
import type { Queryable } from '../../store/db.js';
import type { SecretBox } from '../../util/sealing.js';
import { newWebhookSecret } from '../../domain/standard-webhooks.js';

/** A sealed value is bound to where it is kept: this table's row of that workspace. */
const context = (workspaceId: string) => `webhook_node_secrets:${workspaceId}`;

/** The workspace's node secret (`whsec_…`), made now if it has none; the first of two concurrent makers wins. */
export async function nodeSecret(q: Queryable, box: SecretBox, workspaceId: string): Promise<string> {
  const found = await q.query<{ secret: Buffer }>('SELECT secret FROM webhook_node_secrets WHERE workspace_id = $1', [workspaceId]);
  const stored = found.rows[0];
  if (stored) return box.open(stored.secret, context(workspaceId));
  const made = await q.query<{ secret: Buffer }>(
    `INSERT INTO webhook_node_secrets (workspace_id, secret) VALUES ($1, $2)
     ON CONFLICT (workspace_id) DO UPDATE SET workspace_id = excluded.workspace_id RETURNING secret`,
    [workspaceId, box.seal(newWebhookSecret(), context(workspaceId))],
  );
  return box.open(made.rows[0]!.secret, context(workspaceId));
}

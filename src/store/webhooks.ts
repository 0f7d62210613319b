// Outbound webhooks (docs/webhooks.md): a workspace's endpoints, the outbox of deliveries the
// writing statements fill (migration 470's triggers), and the attempts made. Secrets are sealed
// under HERALD_SECRETS_KEY, bound to their endpoint and column, as channel settings are.
import type { Queryable } from './db.js';
import type { JobTable } from './job-queue.js';
import type { Shard } from './leases.js';
import { UnsealError, type SecretBox } from '../util/sealing.js';
import type { WEBHOOK_DELIVERY_STATES } from '../domain/webhook-events.js';

type DeliveryState = (typeof WEBHOOK_DELIVERY_STATES)[number];

export interface EndpointRow {
  id: string;
  workspace_id: string;
  url: string;
  event_types: string[];
  description: string;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: Date | null;
  created_at: Date;
  updated_at: Date;
}

const ENDPOINT = 'id, workspace_id, url, event_types, description, enabled, disabled_reason, failing_since, created_at, updated_at';

const context = (endpointId: string, column: 'secret' | 'previous_secret') => `webhook_endpoints/${endpointId}/${column}`;

export async function insertEndpoint(
  q: Queryable,
  box: SecretBox,
  e: { id: string; workspaceId: string; url: string; eventTypes: string[]; description: string; enabled: boolean; secret: string },
): Promise<EndpointRow> {
  const r = await q.query<EndpointRow>(
    `INSERT INTO webhook_endpoints (id, workspace_id, url, event_types, description, enabled, secret) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${ENDPOINT}`,
    [e.id, e.workspaceId, e.url, e.eventTypes, e.description, e.enabled, box.seal(e.secret, context(e.id, 'secret'))],
  );
  return r.rows[0]!;
}

export async function endpointsOf(q: Queryable, workspaceId: string): Promise<EndpointRow[]> {
  return (await q.query<EndpointRow>(`SELECT ${ENDPOINT} FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY created_at, id`, [workspaceId])).rows;
}

export async function findEndpoint(q: Queryable, workspaceId: string, id: string, lock = false): Promise<EndpointRow | null> {
  const r = await q.query<EndpointRow>(`SELECT ${ENDPOINT} FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [workspaceId, id]);
  return r.rows[0] ?? null;
}

/** Saves the changeable fields; enabling again clears the reason it was disabled and its failures. */
export async function saveEndpoint(q: Queryable, e: Pick<EndpointRow, 'id' | 'url' | 'event_types' | 'description' | 'enabled'>): Promise<EndpointRow> {
  const r = await q.query<EndpointRow>(
    `UPDATE webhook_endpoints SET url = $2, event_types = $3, description = $4, enabled = $5, updated_at = now(),
       disabled_reason = CASE WHEN $5 THEN NULL ELSE disabled_reason END, failing_since = CASE WHEN $5 AND NOT enabled THEN NULL ELSE failing_since END
     WHERE id = $1 RETURNING ${ENDPOINT}`,
    [e.id, e.url, e.event_types, e.description, e.enabled],
  );
  return r.rows[0]!;
}

export async function deleteEndpoint(q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  return (await q.query('DELETE FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2', [workspaceId, id])).rowCount > 0;
}

/** A new secret; the current one becomes the previous, signing beside it for `overlapMs`. */
export async function rotateSecret(q: Queryable, box: SecretBox, id: string, secret: string, overlapMs: number): Promise<void> {
  // The current secret is opened and sealed again for its new column (a sealed value is bound to its column).
  const r = await q.query<{ secret: Buffer }>('SELECT secret FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [id]);
  const current = r.rows[0] && openOrNull(box, r.rows[0].secret, context(id, 'secret'));
  await q.query(
    `UPDATE webhook_endpoints SET secret = $2, previous_secret = $3, previous_secret_until = now() + make_interval(secs => $4::double precision / 1000), updated_at = now() WHERE id = $1`,
    [id, box.seal(secret, context(id, 'secret')), current ? box.seal(current, context(id, 'previous_secret')) : null, overlapMs],
  );
}

function openOrNull(box: SecretBox, sealed: Buffer | null, ctx: string): string | null {
  if (!sealed) return null;
  try {
    return box.open(sealed, ctx);
  } catch (err) {
    if (err instanceof UnsealError) return null;
    throw err;
  }
}

/** What a delivery needs of its endpoint: where, and the secrets that sign now (the current first). */
export interface EndpointTarget {
  id: string;
  url: string;
  enabled: boolean;
  secrets: string[];
}

export async function endpointTargets(q: Queryable, box: SecretBox, ids: readonly string[]): Promise<Map<string, EndpointTarget>> {
  const r = await q.query<{ id: string; url: string; enabled: boolean; secret: Buffer; previous_secret: Buffer | null }>(
    `SELECT id, url, enabled, secret, CASE WHEN previous_secret_until > now() THEN previous_secret END AS previous_secret FROM webhook_endpoints WHERE id = ANY ($1::uuid[])`,
    [ids],
  );
  return new Map(
    r.rows.map((e) => {
      const secrets = [openOrNull(box, e.secret, context(e.id, 'secret')), openOrNull(box, e.previous_secret, context(e.id, 'previous_secret'))].filter((s): s is string => s !== null);
      return [e.id, { id: e.id, url: e.url, enabled: e.enabled, secrets }];
    }),
  );
}

/** The outbox as jobs (store/job-queue.ts): a claim not completed (the holder died mid-call) waits again: at least once. */
export const WEBHOOK_DELIVERY_JOBS: JobTable = {
  name: 'webhook-deliveries',
  table: 'webhook_deliveries',
  state: 'state',
  values: { waiting: `'waiting'`, running: `'running'` },
  due: 'due_at',
  returning: 'id, workspace_id, endpoint_id, event_type, payload, attempts',
  notCompleted: { retry: true },
};

export interface ClaimedDelivery {
  id: string;
  workspace_id: string;
  endpoint_id: string;
  event_type: string;
  payload: Record<string, unknown>;
  attempts: number;
}

/** One attempt's outcome: the delivery is delivered, waits for `nextAt`, or failed for good. */
export interface AttemptOutcome {
  delivery: ClaimedDelivery;
  statusCode: number | null;
  error: string | null;
  ok: boolean;
  /** When the next try is due; null when there is none (delivered, or out of tries). */
  nextAt: Date | null;
  /** The endpoint is disabled with this reason (410, or failing too long). */
  disable?: string;
}

/**
 * Records a page's attempts and moves each delivery on, in one statement: the attempt rows,
 * the deliveries' states, and the endpoints' failure clocks (a success clears it, a failure
 * starts it if it was not running; an endpoint failing since before `disableAfterMs` ago is
 * disabled, as is one whose attempt asks to be).
 */
export async function recordAttempts(q: Queryable, outcomes: readonly AttemptOutcome[], disableAfterMs: number): Promise<void> {
  if (outcomes.length === 0) return;
  const rows = outcomes.map((o) => ({
    delivery_id: o.delivery.id,
    workspace_id: o.delivery.workspace_id,
    endpoint_id: o.delivery.endpoint_id,
    event_type: o.delivery.event_type,
    status_code: o.statusCode,
    error: o.error,
    attempt: o.delivery.attempts + 1,
    next_attempt_at: o.nextAt?.toISOString() ?? null,
    ok: o.ok,
    disable: o.disable ?? null,
  }));
  await q.query(
    `WITH a AS (
       SELECT * FROM json_to_recordset($1::json) AS x(delivery_id uuid, workspace_id uuid, endpoint_id uuid, event_type text, status_code integer,
         error text, attempt integer, next_attempt_at timestamptz, ok boolean, disable text)
     ), attempts AS (
       INSERT INTO webhook_attempts (workspace_id, endpoint_id, delivery_id, event_type, status_code, error, attempt, next_attempt_at)
       -- An endpoint deleted while its call was under way: its deliveries went with it.
       SELECT workspace_id, endpoint_id, delivery_id, event_type, status_code, error, attempt, next_attempt_at FROM a
       WHERE EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.id = a.delivery_id)
     ), deliveries AS (
       UPDATE webhook_deliveries d SET attempts = a.attempt, claims = 0, claimed_by = NULL, claimed_at = NULL,
         state = CASE WHEN a.ok THEN 'delivered' WHEN a.next_attempt_at IS NULL THEN 'failed' ELSE 'waiting' END,
         due_at = COALESCE(a.next_attempt_at, d.due_at)
       FROM a WHERE d.id = a.delivery_id AND d.state = 'running'
     ), clocks AS (
       SELECT endpoint_id, bool_or(ok) AS ok, bool_and(NOT ok) AS failed, max(disable) AS disable FROM a GROUP BY endpoint_id
     )
     UPDATE webhook_endpoints e SET
       failing_since = CASE WHEN c.ok THEN NULL ELSE COALESCE(e.failing_since, now()) END,
       enabled = e.enabled AND c.disable IS NULL AND NOT (c.failed AND COALESCE(e.failing_since < now() - make_interval(secs => $2::double precision / 1000), false)),
       disabled_reason = CASE
         WHEN NOT e.enabled THEN e.disabled_reason
         WHEN c.disable IS NOT NULL THEN c.disable
         WHEN c.failed AND COALESCE(e.failing_since < now() - make_interval(secs => $2::double precision / 1000), false)
           THEN 'Every delivery failed since ' || herald_iso(e.failing_since) || ': disabled after ' || round($2::numeric / 86400000, 2) || ' days of failures'
         ELSE e.disabled_reason END
     FROM clocks c WHERE e.id = c.endpoint_id`,
    [JSON.stringify(rows), disableAfterMs],
  );
}

/** Deliveries of a disabled or deleted endpoint claimed before it changed: failed without a call. */
export async function dropDeliveries(q: Queryable, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await q.query(`UPDATE webhook_deliveries SET state = 'failed', claimed_by = NULL, claimed_at = NULL WHERE id = ANY ($1::uuid[]) AND state = 'running'`, [ids]);
}

/**
 * Removes up to `limit` of the shard's delivered and failed events created over `olderThanMs`
 * ago, oldest first, with their attempts; how many.
 */
export async function pruneDeliveries(q: Queryable, shard: Shard, olderThanMs: number, limit: number): Promise<number> {
  const r = await q.query(
    `DELETE FROM webhook_deliveries WHERE id = ANY (ARRAY(
       SELECT id FROM webhook_deliveries WHERE state IN ('delivered', 'failed') AND created_at < now() - make_interval(secs => $1::double precision / 1000)
         AND herald_shard(workspace_id::text, $2) = $3 ORDER BY created_at LIMIT $4)) AND state IN ('delivered', 'failed')`,
    [olderThanMs, shard.count, shard.index, limit],
  );
  return r.rowCount;
}

/** An event written by Herald itself (a test event), outside the triggers. */
export async function enqueueDelivery(q: Queryable, workspaceId: string, endpointId: string, eventType: string, payload: Record<string, unknown>): Promise<string> {
  const r = await q.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (workspace_id, endpoint_id, event_type, payload) VALUES ($1, $2, $3, $4) RETURNING id`,
    [workspaceId, endpointId, eventType, JSON.stringify(payload)],
  );
  return r.rows[0]!.id;
}

/** Queues an attempt's event again now (a resend): same event, same webhook-id. Pending: it still waits for a retry or is under way. */
export async function resendDelivery(q: Queryable, endpointId: string, attemptId: string): Promise<{ outcome: 'queued' | 'pending'; deliveryId: string } | { outcome: 'not_found' }> {
  const r = await q.query<{ id: string; state: DeliveryState }>(
    `SELECT d.id, d.state FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE a.id = $2 AND a.endpoint_id = $1 FOR UPDATE OF d`,
    [endpointId, attemptId],
  );
  const d = r.rows[0];
  if (!d) return { outcome: 'not_found' };
  if (d.state !== 'failed' && d.state !== 'delivered') return { outcome: 'pending', deliveryId: d.id };
  await q.query(`UPDATE webhook_deliveries SET state = 'waiting', due_at = now(), claims = 0 WHERE id = $1`, [d.id]);
  return { outcome: 'queued', deliveryId: d.id };
}

export interface AttemptRow {
  id: string;
  delivery_id: string;
  event_type: string;
  status_code: number | null;
  error: string | null;
  attempt: number;
  at: Date;
  next_attempt_at: Date | null;
}

/** An endpoint's attempts, newest first; `before` (an attempt id) pages back. */
export async function attemptsOf(q: Queryable, endpointId: string, limit: number, before: string | null): Promise<AttemptRow[]> {
  const params: unknown[] = [endpointId, limit];
  let after = '';
  if (before) {
    params.push(before);
    after = ` AND (at, id) < (SELECT at, id FROM webhook_attempts WHERE id = $3 AND endpoint_id = $1)`;
  }
  const r = await q.query<AttemptRow>(
    `SELECT id, delivery_id, event_type, status_code, error, attempt, at, next_attempt_at FROM webhook_attempts WHERE endpoint_id = $1${after} ORDER BY at DESC, id DESC LIMIT $2`,
    params,
  );
  return r.rows;
}

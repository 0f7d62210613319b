// The lease of Herald's durable jobs (store/job-queue.ts: campaign runs, enrolments, scheduled sends): a
// claim names its holder, `claimed_by`, an instance number that one actor thread holds for its
// life, and `claimed_at`, refreshed while it works. A claim lapses when its holder is gone or
// its lease has not been refreshed for the stale time (LEASE), whichever comes first.
//
// "Gone" is known, not guessed: an instance holds a session advisory lock (INSTANCE_LOCKS,
// its number) on a connection of its own, and PostgreSQL drops the lock the moment that
// connection ends, as it does when the process is killed (-9 included). So a restarted Herald,
// or a replica, takes over a dead process's claims at its next look rather than after a stale
// timeout; the timeout stays for the holder that lives but stopped working (a wedged thread).
// A holder whose lock connection broke while it lives is taken for gone too: its claims are
// taken over, which is safe because a claim taken twice is never sent twice (the claims
// counter, campaigns/executor.ts; failed-not-resent, channels/push/scheduled-sends.ts).
import pg from 'pg';
import { logger } from '../logger.js';
import { backoffDelays } from '../util/backoff.js';

/** First key of the instance locks (pg_advisory_lock(int, int)); the second is the instance number. */
export const INSTANCE_LOCKS = 4242100;

/**
 * SQL: whether the claim whose holder is `byColumn` and lease `atColumn` lapsed, its stale time
 * in ms the parameter `staleParam` (e.g. `$2`). The live instances are those whose lock is
 * granted in this database (a server's other databases have instances with the same numbers).
 */
export function lapsed(byColumn: string, atColumn: string, staleParam: string): string {
  return `(${byColumn} NOT IN (SELECT l.objid::bigint::int FROM pg_locks l
             WHERE l.locktype = 'advisory' AND l.classid = ${INSTANCE_LOCKS} AND l.objsubid = 2 AND l.granted
               AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
           OR ${atColumn} < now() - make_interval(secs => ${staleParam}::double precision / 1000))`;
}

/** Which workspaces an actor serves: those whose util/shard.ts shardOf(workspace id, count) is index. */
export interface Shard {
  index: number;
  count: number;
}

/** Who claims: which workspaces an actor serves, and the instance its claims name. */
export interface Claimant {
  readonly shard: Shard;
  readonly instance: Pick<Instance, 'id'>;
}

/** An actor's instance: its number while it lives (a new one after its lock connection broke). */
export class Instance {
  private client: pg.Client | undefined;
  private closed = false;

  private constructor(
    private readonly url: string,
    private current: number,
  ) {}

  /** The number claims are made under now. */
  get id(): number {
    return this.current;
  }

  /** Takes a new instance number and holds its lock until `close`. */
  static async hold(url: string): Promise<Instance> {
    const inst = new Instance(url, 0);
    await inst.connect();
    return inst;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url });
    client.on('error', (err) => {
      if (this.closed || this.client !== client) return;
      logger.warn('instance lock connection lost: a new instance number is taken', { instance: this.current, err });
      void this.reconnect();
    });
    await client.connect();
    const r = await client.query<{ id: number }>(`SELECT nextval('herald_instances')::int AS id`);
    const id = r.rows[0]!.id;
    await client.query('SELECT pg_advisory_lock($1, $2)', [INSTANCE_LOCKS, id]);
    this.client = client;
    this.current = id;
  }

  private async reconnect(): Promise<void> {
    const old = this.client;
    this.client = undefined;
    void old?.end().catch(() => {});
    for (const ms of backoffDelays({ firstMs: 200, maxMs: 5_000 })) {
      if (this.closed) return;
      try {
        return await this.connect();
      } catch (err) {
        logger.warn('instance lock: reconnecting failed', { err });
        await new Promise((r) => setTimeout(r, ms));
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client?.end().catch(() => {});
  }
}

// A database of the test file's own when the suite runs on DATABASE_URL (CI's second pass runs
// every file's servers on one database, two files at a time). The campaign runtime of any
// server runs every workspace's due campaigns in its database (as replicas do), so a file whose
// campaigns send must not share it: another file's server, started with another
// HERALD_SECRETS_KEY or HERALD_PUSH_PROVIDER, would send some of them and fail. On the embedded
// default each server has its PostgreSQL anyway, and this is nothing.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** `{DATABASE_URL}` of a fresh database on the DATABASE_URL server (dropped at teardown), or `{}` on the embedded default. */
export async function ownDatabase(t: { teardown(fn: () => unknown): void }): Promise<{ DATABASE_URL?: string }> {
  const shared = process.env.DATABASE_URL;
  if (!shared) return {};
  const name = `herald_t_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: shared });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  // FORCE: the servers' connections are ended whichever teardown runs first.
  t.teardown(() => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  const url = new URL(shared);
  url.pathname = `/${name}`;
  return { DATABASE_URL: url.toString() };
}

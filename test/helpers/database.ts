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
  const { name, url } = await createDatabase(shared);
  // FORCE: the servers' connections are ended whichever teardown runs first.
  t.teardown(() => admin(shared, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  return { DATABASE_URL: url };
}

/** A fresh database on the server of `shared` (a connection string): its name and URL. */
export async function createDatabase(shared: string): Promise<{ name: string; url: string }> {
  const name = `herald_t_${randomBytes(6).toString('hex')}`;
  await admin(shared, `CREATE DATABASE ${name}`);
  const url = new URL(shared);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

async function admin(shared: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: shared });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

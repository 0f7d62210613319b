import { readdir, readFile } from 'node:fs/promises';
import type { Db } from './db.js';

// One file a migration in migrations/, `NNN-slug.sql`: NNN is its id in schema_migrations and
// the order it runs in; its first line, `-- name: …`, is the name recorded beside the id. The
// build copies the folder next to this module in dist/. Ordered, append-only. Each runs once,
// inside one transaction holding an advisory lock so that replicas starting together against
// one Postgres do not race.
const DIR = new URL('./migrations/', import.meta.url);
const FILE = /^(\d+)-[a-z0-9-]+\.sql$/;
const NAME = /^-- name: (.+)\n/;

interface Migration {
  id: number;
  name: string;
  sql: string;
}

async function load(): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for (const file of await readdir(DIR)) {
    const id = FILE.exec(file)?.[1];
    if (id === undefined) throw new Error(`store/migrations/${file}: not NNN-slug.sql`);
    const sql = await readFile(new URL(file, DIR), 'utf8');
    const name = NAME.exec(sql)?.[1];
    if (name === undefined) throw new Error(`store/migrations/${file}: the first line is not "-- name: …"`);
    migrations.push({ id: Number(id), name, sql });
  }
  return migrations.sort((a, b) => a.id - b.id);
}

export async function migrate(db: Db): Promise<number> {
  const migrations = await load();
  return db.tx(async (q) => {
    await q.query('SELECT pg_advisory_xact_lock(4242001)');
    await q.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await q.query<{ id: number }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id));
    let applied = 0;
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await q.exec(m.sql);
      await q.query('INSERT INTO schema_migrations (id, name) VALUES ($1, $2)', [m.id, m.name]);
      applied++;
    }
    return applied;
  });
}

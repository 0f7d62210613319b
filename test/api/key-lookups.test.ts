// Keys that do not exist cost the store nothing past the caller's unauthenticated budget
// (issue 22, finding 5): a key the cache does not hold is looked up only with an `ip-public`
// token in hand. Observed where the lookups land: PostgreSQL's scan counters of api_keys.
import t from 'tap';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { startServer, storeUrl, type TestServer } from '../helpers/server.js';

const BURST = 5;
const s: TestServer = await startServer({ HERALD_RATE_LIMITS: `ip-public=1:${BURST}` });
t.teardown(() => s.stop());
const db = new pg.Client({ connectionString: storeUrl(s) });
await db.connect();
t.teardown(() => db.end());

/** Every scan of api_keys so far, as far as the server's connections have reported them. */
async function scans(): Promise<number> {
  const r = await db.query<{ n: string }>(`SELECT coalesce(seq_scan, 0) + coalesce(idx_scan, 0) AS n FROM pg_stat_user_tables WHERE relname = 'api_keys'`);
  return Number(r.rows[0]!.n);
}

/** A well-formed key no workspace has: a prefix of its own each time, so no lookup is shared. */
const unknownKey = () => `ws_live_${randomBytes(4).toString('hex')}_${randomBytes(6).toString('base64url').replace(/[-_]/g, 'x').slice(0, 8)}.${randomBytes(32).toString('hex')}`;

t.test(`200 unknown keys at once from one IP: at most ${BURST} (the ip-public burst) store lookups`, async (t) => {
  const before = await scans();
  const answers = await Promise.all(Array.from({ length: 200 }, () => s.req('GET', '/people', { token: unknownKey() })));
  const statuses = answers.map((r) => r.status);
  t.ok(statuses.every((x) => x === 401 || x === 429), `only 401 and 429 (${[...new Set(statuses)]})`);
  t.ok(statuses.filter((x) => x === 401).length <= BURST, `at most ${BURST} answered 401, the rest 429 (${statuses.filter((x) => x === 401).length})`);
  t.ok(answers.every((r) => r.status === 401 || r.body?.scope === 'ip-public'), 'every 429 is the ip-public budget');
  // A backend reports its counters within PostgreSQL's idle interval (10 s).
  await new Promise((r) => setTimeout(r, 11_000));
  const lookups = (await scans()) - before;
  t.ok(lookups <= BURST, `${lookups} lookups of api_keys for 200 requests (at most ${BURST})`);
});

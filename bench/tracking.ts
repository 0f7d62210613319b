// `npm run bench -- --scenario tracking [--messages 1000] [--duration 10s] [--connections 64]`:
// issue 40's redirect, `GET /t/c/{token}`, hammered with autocannon: req/s and p99 against
// the targets (≥ 20,000 req/s, p99 ≤ 10 ms on the embedded default), every answer a 302 to its
// message's stored link, and every click recorded (through the Log and the batch writer, not a
// write per click). See bench/README.md.
//
// Setup is not timed: one workspace, --messages people inserted in SQL as the fanout scenario
// does and one email record `sent` an hour ago per person (so no click falls in the machine
// window) with two stored links, written with Herald's own statement (saveMessages). The run
// gives Herald its HERALD_SECRETS_KEY, so the bench makes the links' tokens as the send does.
import { parseArgs } from 'node:util';
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { databaseUrl, guardRun, setupWorkspaces, startBenchHerald, stopChild, type HeraldProc } from './procs.js';
import { insertAudience } from './fanout.js';
import { round } from './stats.js';
import { optionChecks } from './cli.js';
import { saveMessages, type MessageRecord } from '../src/store/messages.js';
import type { Queryable } from '../src/store/db.js';
import { unsubscribeKey } from '../src/channels/email/unsubscribe.js';
import { clickToken } from '../src/channels/tracking-links.js';
import { newId } from '../src/ids.js';

export const TRACKING_USAGE = `usage: npm run bench -- --scenario tracking [options]

  --messages 1000     email records, each with two tracked links (the requests cycle over them)
  --duration 10s      how long autocannon sends
  --connections 64    connections held open
  --out bench/results where the JSON result goes`;

/** Issue 40's targets. */
const TARGET_PER_S = 20_000;
const TARGET_P99_MS = 10;
const LINKS = ['https://shop.example/sale', 'https://shop.example/guide'];

interface AcResult {
  duration: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats: Record<string, { count: number }>;
  requests: { total: number };
  latency: { p50: number; p99: number; max: number };
}
type Autocannon = (opts: Record<string, unknown>, cb: (err: Error | null, r: AcResult) => void) => unknown;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string' },
      messages: { type: 'string', default: '1000' },
      duration: { type: 'string', default: '10s' },
      connections: { type: 'string', default: '64' },
      out: { type: 'string', default: 'bench/results' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(TRACKING_USAGE + '\n');
    process.exit(0);
  }
  const { int, dur } = optionChecks(TRACKING_USAGE);
  return { messages: int('messages', values.messages, 1, 1_000_000), durationMs: dur('duration', values.duration), connections: int('connections', values.connections, 1, 1024), out: values.out };
}

/** One email record `sent` an hour ago per person, with LINKS stored: their ids. */
async function seedMessages(url: string, workspaceId: string, n: number): Promise<string[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const people = await db.query<{ id: string; external_id: string; email: string }>(`SELECT id, external_id, email FROM people WHERE workspace_id = $1 ORDER BY id LIMIT $2`, [workspaceId, n]);
    const sentAt = new Date(Date.now() - 3_600_000).toISOString();
    const records: MessageRecord[] = people.rows.map((p) => ({
      id: newId(), workspace_id: workspaceId, person_id: p.id, external_id: p.external_id, channel: 'email', status: 'sent', provider: 'smtp', provider_id: null,
      address: p.email, skip_reason: null, error: null, title: 'Sale', body: 'Sale', campaign_id: null, node_id: null, event_id: null, tags: null, sent_at: sentAt, links: LINKS,
    }));
    const q: Queryable = { query: (sql, params) => db.query(typeof sql === 'string' ? sql : sql.text, params) as never, exec: async (sql) => void (await db.query(sql)) };
    for (let i = 0; i < records.length; i += 5000) await saveMessages(q, records.slice(i, i + 5000));
    return records.map((r) => r.id);
  } finally {
    await db.end();
  }
}

const clicksRecorded = async (url: string, workspaceId: string): Promise<number> => {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const r = await db.query<{ n: number }>(`SELECT coalesce(sum((SELECT count(*) FROM jsonb_array_elements(events) e WHERE e->>'type' = 'clicked')), 0)::int AS n FROM messages WHERE workspace_id = $1`, [workspaceId]);
    return r.rows[0]!.n;
  } finally {
    await db.end();
  }
};

export async function tracking(argv: string[]): Promise<number> {
  const opt = options(argv);
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  let herald: HeraldProc | undefined;
  const { dataDir, cleanup } = guardRun(600_000 + opt.durationMs * 2, log, async () => {
    if (herald) await stopChild(herald.child, 30_000);
  });
  try {
    const secret = process.env.HERALD_AUTH_SECRET ?? randomBytes(24).toString('hex');
    const secretsKey = randomBytes(32);
    herald = await startBenchHerald(dataDir, secret, { HERALD_SECRETS_KEY: secretsKey.toString('hex') });
    const base = herald.base;
    log(`Herald is up at ${base} (pid ${herald.pid})`);
    const [ws] = await setupWorkspaces(base, secret, 1);
    const url = databaseUrl(dataDir);
    await insertAudience(url, ws!.id, opt.messages, 'email');
    const ids = await seedMessages(url, ws!.id, opt.messages);
    const key = unsubscribeKey(secretsKey);
    const requests = ids.flatMap((id) => LINKS.map((_, i) => ({ method: 'GET', path: `/t/c/${clickToken(key, { workspaceId: ws!.id, messageId: id }, i)}`, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) bench' } })));
    log(`set up: ${ids.length} messages, ${requests.length} tracked links`);

    const loadStart = loadavg();
    const r = await new Promise<AcResult>((res, rej) =>
      autocannon({ url: base, connections: opt.connections, duration: Math.max(1, opt.durationMs / 1000), requests, pipelining: 1 }, (err, result) => (err ? rej(err) : res(result))),
    );
    const answered = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
    const redirects = answered['302'] ?? 0;
    // Every 302 was recorded before it was answered (the Log append and the batch write are awaited).
    const recorded = await clicksRecorded(url, ws!.id);
    const perS = round(r.requests.total / r.duration, 0);
    const result = {
      scenario: 'tracking', at: startedAt.toISOString(), options: opt, cpus: availableParallelism(), loadavg: { start: loadStart, end: loadavg() },
      requests: r.requests.total, requests_per_s: perS, latency_ms: r.latency, answered, errors: r.errors, timeouts: r.timeouts, clicks_recorded: recorded,
      targets: { per_s: TARGET_PER_S, p99_ms: TARGET_P99_MS, met: perS >= TARGET_PER_S && r.latency.p99 <= TARGET_P99_MS },
      herald_logged: herald.logged,
    };
    mkdirSync(resolve(opt.out), { recursive: true });
    const file = join(resolve(opt.out), `tracking-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2));
    process.stdout.write(
      [
        `tracking: ${r.requests.total} redirects in ${round(r.duration, 1)} s = ${perS} req/s (target ≥ ${TARGET_PER_S}), p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms (target ≤ ${TARGET_P99_MS}), max ${r.latency.max} ms`,
        `answers: ${JSON.stringify(answered)}; clicks recorded: ${recorded} (302s counted: ${redirects}, plus those in flight at the stop)`,
        `JSON: ${file}`,
        '',
      ].join('\n'),
    );
    // Requests in flight when autocannon stopped were answered (and recorded) but not counted: at most one a connection.
    return redirects > 0 && redirects === r.requests.total && recorded >= redirects && recorded <= redirects + opt.connections ? 0 : 1;
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? err}`);
    if (herald && herald.child.exitCode !== null) log(herald.output());
    return 1;
  } finally {
    await cleanup();
  }
}

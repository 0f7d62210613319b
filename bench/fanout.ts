// `npm run bench -- --scenario fanout [--people 250000] [--workspaces 1] [--ceiling N] [--send-in 10s] [--provider fakes|sandbox] [--seed sql|api]`:
// in each workspace, a `schedule` campaign with the same send_at to N people, each with one android device, against the
// fake FCM in a process of its own (bench/fake-providers.ts), or Herald's sandbox provider (the
// issue 24 figures; then the sends are Herald's own count of campaign sends recorded `sent`,
// there being no provider to ask). Reports the time from send_at to the last send, sends/s, the
// campaign's stats, and the RSS max of Herald and of its embedded PostgreSQL (PSS: shared
// buffers counted once). See bench/README.md.
//
// `--scenario email-fanout` and `sms-fanout` (issue 25) run the same campaign with one email or
// SMS node instead, each person with an email address or a mobile number, against a local SMTP
// server (the workspace's email channel with --connections pooled connections) or the fake
// Twilio, both in a process of their own (bench/messaging-fakes.ts), and then, Herald stopped,
// the floor (bench/channel-floor.ts): the same number of messages through a bare nodemailer
// pool of as many connections, or bare `fetch` POSTs as concurrent as Herald's were. Herald's
// messages/s are reported as a ratio to the floor's (issue 25's target: ≥ 0.6). The push fanout
// against the fakes has its floor too (issue 24's target: ≥ 0.7): bench/push-floor.ts, a bare
// node:http2 client on as many sessions as Herald opened, its pool's streams each, for FLOOR_MS.
//
// Setup is not timed. By default (--seed sql) the people and their devices are inserted straight
// into PostgreSQL in bulk (generate_series) and analysed: through the API, 250,000 device
// registrations take minutes on this machine. --seed api creates them as a user does, people
// through POST /people/batch and devices through POST /people/{userId}/devices, and analyses
// nothing: the fan-out then runs on tables as a new workspace has them, which is what users get
// (issue 35 measured 1.7–1.9× the SQL-seeded time that way). Everything else (workspace, key,
// channel settings, campaign, activation) goes through Herald's HTTP interface.
import { parseArgs } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { formatSummary, parseMetrics, scrapeMetrics, summarize } from './metrics.js';
import { call, databaseUrl, FakeProviders, guardRun, MessagingFakes, pushFakesEnv, pushFloorConfig, runChannelFloor, runPushFloor, Sampler, sessionToken, setupWorkspaces, startBenchHerald, stopChild, type HeraldProc } from './procs.js';
import type { ChannelFloorConfig, ChannelFloorResult } from './channel-floor.js';
import { createPeople, registerDevices, setupPushChannels } from './push.js';
import { round } from './stats.js';
import { optionChecks } from './cli.js';
import { shardOf } from '../src/util/shard.js';
import { WORKSPACE_SHARE } from '../src/channels/push/engine.js';
import type { BenchWorkspace } from './scenarios.js';

export const FANOUT_USAGE = `usage: npm run bench -- --scenario fanout|email-fanout|sms-fanout [options]

  --people N          people in the campaign's audience, each with one android device (fanout,
                      default 250000), an email address (email-fanout) or a mobile number
                      (sms-fanout; both default 50000)
  --ceiling N         HERALD_SCHEDULE_AUDIENCE_CEILING of the Herald started (default: 250000,
                      Herald's default; a smaller one truncates the run)
  --workspaces 1      workspaces, each with --people people and its own campaign, all with the
                      same send_at; with 2 or more, each campaign's p50 send time after send_at
                      is reported and the largest over the smallest (issue 24's target: ≤ 1.5)
  --send-in 10s       send_at this long after the campaigns are activated
  --seed sql          how the audience is created (not timed): sql, in bulk straight into
                      PostgreSQL and analysed; api, as a user does: POST /people/batch (1,000 a
                      request), then each device through POST /people/{userId}/devices (16 in
                      flight), nothing analysed
  --provider fakes    fanout: fakes: the fake FCM over HTTP/2 TLS in a process of its own, sends
                      counted as the requests it received, then the push floor (20 s, Herald
                      stopped); sandbox: Herald's sandbox provider,
                      sends counted as Herald's campaign sends recorded \`sent\` (GET /metrics)
  --connections 5     email-fanout: the email channel's pooled SMTP connections, and the floor's
  --kill-at F         fanout with fakes: kill -9 Herald once this share (0 to 1, e.g. 0.25) of the
                      sends arrived, start it again on the same data dir, and report the tokens
                      the fake FCM received twice, the sends recorded failed, and the last send
                      after the restart (issue 24's target: 0 twice, failed at most the
                      workspace's provider share, all within 10 s); the CPU, RSS and metrics
                      figures are then the restarted Herald's
  --timeout 600s      give up when the provider has not received everything by then
  --cpu-prof DIR      write V8 CPU profiles of Herald's threads into DIR when it stops
                      (node --cpu-prof; profiling slows Herald down)
  --wal-detail        after the run, the WAL records and full-page images of the measured phase by
                      table and index (pg_walinspect; a run small enough that no checkpoint
                      recycled its segments, e.g. --people 20000)
  --out bench/results where the JSON result goes`;

/** What the campaign sends through. */
export type FanoutChannel = 'push' | 'email' | 'sms';
/** Herald's messages/s at least this share of the floor's: issue 24's target (push), issue 25's. */
const FLOOR_TARGET: Record<FanoutChannel, number> = { push: 0.7, email: 0.6, sms: 0.6 };
/** Issue 24's two-workspace target: neither campaign's p50 send time over 1.5× the other's. */
const P50_RATIO_TARGET = 1.5;
/** Issue 24's kill -9 target: everyone else sent within this many seconds of the restart. */
const KILL_SETTLE_S = 10;
/** How long the push floor runs (after a warm-up of PUSH_FLOOR_WARMUP_MS): it is time-bound. */
const PUSH_FLOOR_MS = 20_000;
const PUSH_FLOOR_WARMUP_MS = 3_000;
/** Herald's HTTP/2 pool's streams per session (src/channels/push/http2-pool.ts), the floor's too. */
const PUSH_STREAMS = 100;

/** The floor's figures, whichever channel, and how it sent (for the report). */
type Floor = Omit<ChannelFloorResult, 'kind'> & { describe: string };

interface FanoutOptions {
  channel: FanoutChannel;
  people: number;
  workspaces: number;
  ceiling: number;
  killAt: number | null;
  sendInMs: number;
  provider: 'fakes' | 'sandbox';
  seed: 'sql' | 'api';
  connections: number;
  timeoutMs: number;
  cpuProf?: string;
  walDetail: boolean;
  out: string;
}

function options(argv: string[], channel: FanoutChannel): FanoutOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      scenario: { type: 'string' },
      people: { type: 'string', default: channel === 'push' ? '250000' : '50000' },
      workspaces: { type: 'string', default: '1' },
      'kill-at': { type: 'string' },
      ceiling: { type: 'string', default: '250000' },
      'send-in': { type: 'string', default: '10s' },
      provider: { type: 'string', default: 'fakes' },
      seed: { type: 'string', default: 'sql' },
      connections: { type: 'string', default: '5' },
      timeout: { type: 'string', default: '600s' },
      'cpu-prof': { type: 'string' },
      'wal-detail': { type: 'boolean', default: false },
      out: { type: 'string', default: 'bench/results' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(FANOUT_USAGE + '\n');
    process.exit(0);
  }
  const { int, dur, fail } = optionChecks(FANOUT_USAGE);
  const provider = values.provider === 'fakes' || values.provider === 'sandbox' ? values.provider : fail('--provider must be fakes or sandbox');
  if (provider === 'sandbox' && channel !== 'push') fail('--provider sandbox is for the push fanout only');
  const seed = values.seed === 'sql' || values.seed === 'api' ? values.seed : fail('--seed must be sql or api');
  const killAt = values['kill-at'] === undefined ? null : Number(values['kill-at']);
  if (killAt !== null && !(killAt > 0 && killAt < 1)) fail('--kill-at must be a share between 0 and 1, e.g. 0.25');
  if (killAt !== null && (channel !== 'push' || provider !== 'fakes')) fail('--kill-at is for the push fanout against the fakes (they count the tokens reached twice)');
  return {
    channel,
    provider,
    seed,
    people: int('people', values.people, 1, channel === 'sms' ? 1_000_000 : 5_000_000),
    workspaces: int('workspaces', values.workspaces, 1, 8),
    killAt,
    ceiling: int('ceiling', values.ceiling, 1, 100_000_000),
    connections: int('connections', values.connections, 1, 50),
    sendInMs: Math.max(3000, dur('send-in', values['send-in'])),
    timeoutMs: dur('timeout', values.timeout),
    cpuProf: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    walDetail: values['wal-detail'] ?? false,
    out: values.out,
  };
}

/**
 * `n` people (external ids `p-0` …) in bulk, each with what the campaign's channel needs: one
 * android device (an FCM-shaped token), an email address `p-<i>@bench.example.com`, or a UK
 * mobile number `+447400<i, six digits>`.
 */
export async function insertAudience(url: string, workspaceId: string, n: number, channel: FanoutChannel = 'push'): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query('BEGIN');
    await db.query(
      `INSERT INTO people (id, workspace_id, external_id, first_name, email, phone, traits)
       SELECT gen_random_uuid(), $1, 'p-' || i, 'First' || i,
         CASE WHEN $3 = 'email' THEN 'p-' || i || '@bench.example.com' END,
         CASE WHEN $3 = 'sms' THEN '+447400' || lpad(i::text, 6, '0') END,
         jsonb_build_object('plan', 'pro')
       FROM generate_series(0, $2 - 1) AS i`,
      [workspaceId, n, channel],
    );
    if (channel === 'push') {
      await db.query(
        `INSERT INTO devices (id, workspace_id, person_id, device_token, platform)
         SELECT gen_random_uuid(), $1, p.id, left(md5(p.id::text), 22) || ':APA91b' || md5('a' || p.id) || md5('b' || p.id) || md5('c' || p.id), 'android'
         FROM people p WHERE p.workspace_id = $1`,
        [workspaceId],
      );
    }
    await db.query('COMMIT');
    await db.query('ANALYZE people');
    if (channel === 'push') await db.query('ANALYZE devices');
  } finally {
    await db.end();
  }
}

/** The audience of insertAudience as a user creates it (--seed api): over Herald's HTTP interface, nothing analysed. */
async function seedAudience(base: string, ws: BenchWorkspace, n: number, channel: FanoutChannel): Promise<void> {
  const address = (i: number) => (channel === 'email' ? { email: `p-${i}@bench.example.com` } : channel === 'sms' ? { phone: `+447400${String(i).padStart(6, '0')}` } : {});
  const ids = await createPeople(base, ws, n, address);
  if (channel === 'push') await registerDevices(base, ws, ids.map((_, i) => ({ who: `p-${i}`, platform: 'android' as const })));
}

/**
 * Where PostgreSQL's time went, when pg_stat_statements is loaded (shared_preload_libraries):
 * `reset` at send_at, `read` (statements by total execution time) at the end; null otherwise.
 */
async function statementStats(url: string, action: 'reset' | 'read'): Promise<{ query: string; calls: number; total_ms: number; rows: number }[] | null> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    if (action === 'reset') {
      await db.query('SELECT pg_stat_statements_reset()');
      return [];
    }
    const r = await db.query<{ query: string; calls: string; total_ms: number; rows: string }>(
      `SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query, calls, round(total_exec_time::numeric, 1)::float AS total_ms, rows
       FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 20`,
    );
    return r.rows.map((x) => ({ query: x.query, calls: Number(x.calls), total_ms: x.total_ms, rows: Number(x.rows) }));
  } catch {
    return null; // not loaded
  } finally {
    await db.end();
  }
}

/** PostgreSQL's WAL and checkpoint counters (pg_stat_wal, pg_stat_checkpointer, PostgreSQL 17+) and the WAL position; null when unreadable. */
async function walCounters(url: string): Promise<{ records: number; full_page_images: number; bytes: number; checkpoints: number; lsn: string } | null> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const w = (await db.query<{ records: number; full_page_images: number; bytes: number; lsn: string }>('SELECT wal_records::float8 AS records, wal_fpi::float8 AS full_page_images, wal_bytes::float8 AS bytes, pg_current_wal_lsn()::text AS lsn FROM pg_stat_wal')).rows[0]!;
    const c = (await db.query<{ n: number }>('SELECT (num_timed + num_requested)::float8 AS n FROM pg_stat_checkpointer')).rows[0]!;
    return { ...w, checkpoints: c.n };
  } catch {
    return null; // an older PostgreSQL (DATABASE_URL)
  } finally {
    await db.end();
  }
}

/** One relation's (or, without a block, one record type's) share of the WAL between two positions. */
interface WalShare {
  what: string;
  records: number;
  full_page_images: number;
}

/**
 * `--wal-detail`: the WAL written between two positions by relation (tables and indexes, through
 * pg_walinspect) and record type, and the records that touch no relation (commits, say), most records
 * first; null when unreadable (the segments recycled by a checkpoint, or no pg_walinspect).
 */
async function walByRelation(url: string, from: string, to: string): Promise<WalShare[] | null> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    await db.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const r = await db.query<WalShare>(
      `SELECT coalesce(c.relname, b.relfilenode::text) || ' ' || b.record_type AS what, count(DISTINCT b.start_lsn)::float8 AS records, count(*) FILTER (WHERE b.block_fpi_length > 0)::float8 AS full_page_images
         FROM pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn, false) b LEFT JOIN pg_class c ON c.relfilenode = b.relfilenode
        GROUP BY 1
       UNION ALL
       SELECT resource_manager || '/' || record_type, count(*)::float8, 0
         FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) WHERE block_ref IS NULL
        GROUP BY 1
       ORDER BY records DESC LIMIT 30`,
      [from, to],
    );
    return r.rows;
  } catch (err) {
    process.stderr.write(`WAL by relation: ${(err as Error).message}\n`);
    return null;
  } finally {
    await db.end();
  }
}

const fmt = (n: number | null | undefined, digits = 0) => (n === null || n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

/** The campaign's workflow node for each channel: templated, as a campaign's is. */
const NODES: Record<FanoutChannel, Record<string, unknown>> = {
  push: { id: 'hello', type: 'push', title: 'Hello {{ person.first_name }}', body: 'Your plan: {{ traits.plan }}' },
  email: { id: 'hello', type: 'email', subject: 'Hello {{ person.first_name }}', html: '<p>Your plan: {{ traits.plan }}</p><p><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>' },
  sms: { id: 'hello', type: 'sms', body: 'Hello {{ person.first_name }}, your plan: {{ traits.plan }}' },
};

/**
 * What differs between the channels: Herald's provider settings (and the fakes they point at),
 * the workspace's channel settings, how the sends are counted, and the floor.
 */
interface Rig {
  describe: string;
  env: Record<string, string>;
  pid?: number;
  /** The channel's settings on the workspace, over HTTP. */
  setup(base: string, secret: string, ws: BenchWorkspace): Promise<void>;
  /** Sends so far, as the provider (or, in the sandbox, Herald) counts them. */
  sends(): Promise<number>;
  /** The fakes' own figures, for the result. */
  stats?(): Promise<unknown>;
  /** Sends to a device already reached (duplicates), where the provider can tell. */
  repeated?(): Promise<number>;
  /** The floor, once Herald has stopped: `count` messages the bare way (push: for PUSH_FLOOR_MS). */
  floor?(count: number): Promise<Floor>;
}

async function rigFor(opt: FanoutOptions, caDir: string, base: () => string): Promise<Rig> {
  if (opt.channel === 'push' && opt.provider === 'sandbox') {
    return {
      describe: "Herald's sandbox provider",
      env: { HERALD_PUSH_PROVIDER: 'sandbox' },
      setup: async () => {},
      // Herald's own count of campaign sends recorded `sent` (GET /metrics), not a count of the
      // records in SQL: that read every record so far at each poll, a fifth of PostgreSQL's time
      // at 250,000. The campaign's stats confirm the total at the end.
      async sends() {
        const text = await scrapeMetrics(base());
        return text === null ? 0 : parseMetrics(text).reduce((n, x) => (x.name === 'herald_campaign_sends_total' && x.labels.status === 'sent' ? n + x.value : n), 0);
      },
    };
  }
  if (opt.channel === 'push') {
    const fakes = await FakeProviders.start();
    return {
      describe: 'the fake FCM in a process of its own',
      env: pushFakesEnv(fakes.ready, caDir),
      pid: fakes.child.pid,
      setup: (base, secret, ws) => setupPushChannels(base, secret, [ws], fakes.ready),
      sends: async () => (await fakes.stats()).fcm.requests,
      stats: () => fakes.stats(),
      repeated: async () => (await fakes.stats()).fcm.repeated,
      async floor() {
        await fakes.quiet(1000, 30_000);
        const config = await pushFloorConfig(fakes, PUSH_STREAMS);
        const env = { ...process.env, ...pushFakesEnv(fakes.ready, caDir) };
        await runPushFloor({ ...config, durationMs: PUSH_FLOOR_WARMUP_MS }, env);
        const r = await runPushFloor({ ...config, durationMs: PUSH_FLOOR_MS }, env);
        return {
          describe: `bare node:http2, ${r.sessions} sessions × ${r.streams_per_session} streams, as many sessions as Herald's`,
          sent: r.requests,
          errors: r.errors + r.non2xx,
          error: r.errors + r.non2xx > 0 ? `${r.errors} failed streams, ${r.non2xx} non-2xx answers` : null,
          duration_s: r.duration_s,
          per_s: r.requests_per_s,
          client_cpu_s: r.client_cpu_s,
        };
      },
    };
  }
  const fakes = await MessagingFakes.start();
  const email = opt.channel === 'email';
  const put = async (base: string, secret: string, ws: BenchWorkspace) => {
    const body = email
      ? { smtp: { host: fakes.ready.smtp.host, port: fakes.ready.smtp.port, security: 'none', max_connections: opt.connections }, from: { email: 'bench@herald.example', name: 'Herald bench' } }
      : { twilio: fakes.ready.twilio.account };
    const r = await call(base, 'PUT', `/api/v1/workspaces/${ws.id}/channels/${opt.channel}`, await sessionToken(secret, 'herald-bench'), body);
    if (r.status !== 200) throw new Error(`setting the ${opt.channel} channel answered ${r.status}: ${JSON.stringify(r.body).slice(0, 500)}`);
  };
  return {
    describe: email ? `a local SMTP server (smtp-server) in a process of its own, ${opt.connections} pooled connections` : 'the fake Twilio in a process of its own',
    // Live: a workspace whose channel did not take fails its sends instead of going to the sandbox.
    env: email ? { HERALD_EMAIL_PROVIDER: 'live', HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' } : { HERALD_SMS_PROVIDER: 'live', HERALD_TWILIO_ENDPOINT: fakes.ready.twilio.url },
    pid: fakes.child.pid,
    setup: put,
    sends: async () => {
      const s = await fakes.stats();
      return email ? s.smtp.messages : s.twilio.requests;
    },
    stats: () => fakes.stats(),
    async floor(count) {
      await fakes.quiet(1000, 30_000);
      const [sample, stats] = [await fakes.sample(), await fakes.stats()];
      const budget = opt.timeoutMs + 60_000;
      const config: ChannelFloorConfig = email
        ? { kind: 'email', host: fakes.ready.smtp.host, port: fakes.ready.smtp.port, connections: opt.connections, count, mails: sample.mails }
        : { kind: 'sms', url: fakes.ready.twilio.url, concurrency: Math.max(1, stats.twilio.max_connections), count, requests: sample.sms };
      if ((email ? sample.mails : sample.sms).length === 0) throw new Error('the fakes kept no message of Herald\'s to send at the floor');
      const { kind: _, ...r } = await runChannelFloor(config, budget);
      return { ...r, describe: email ? `bare nodemailer pool, ${opt.connections} connections` : `bare fetch, ${config.kind === 'sms' ? config.concurrency : '?'} in flight, as many as Herald's connections` };
    },
  };
}

export async function fanout(argv: string[], channel: FanoutChannel = 'push'): Promise<number> {
  const opt = options(argv, channel);
  const scenario = channel === 'push' ? 'fanout' : `${channel}-fanout`;
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  let herald: HeraldProc | undefined;
  let rig: Rig | undefined;
  const { dataDir, caDir, cleanup } = guardRun(2 * opt.timeoutMs + opt.sendInMs + 1_800_000, log, async () => {
    if (herald) await stopChild(herald.child, 30_000);
  });

  try {
    const secret = process.env.HERALD_AUTH_SECRET ?? randomBytes(24).toString('hex');
    rig = await rigFor(opt, caDir, () => base);
    const start = () => startBenchHerald(dataDir, secret, { ...rig!.env, HERALD_SCHEDULE_AUDIENCE_CEILING: String(opt.ceiling) }, opt.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', opt.cpuProf] : []);
    herald = await start();
    let base = herald.base;
    log(`Herald is up at ${base} (pid ${herald.pid}), ${rig.describe}${rig.pid ? ` (pid ${rig.pid})` : ''}`);
    const actors = (await call(base, 'GET', '/healthz', '')).body?.components?.actors as number;
    // Spread over the actors, as the push scenarios' workspaces are (bench/procs.ts).
    const workspaces = await setupWorkspaces(base, secret, opt.workspaces, actors);
    // The embedded PostgreSQL's port changes when Herald starts again (--kill-at).
    let url = databaseUrl(dataDir);
    let t = Date.now();
    for (const ws of workspaces) {
      await rig.setup(base, secret, ws);
      if (opt.seed === 'api') await seedAudience(base, ws, opt.people, channel);
      else await insertAudience(url, ws.id, opt.people, channel);
    }
    const setupS = round((Date.now() - t) / 1000, 1);
    log(`created ${fmt(opt.people)} people with ${channel === 'push' ? 'an android device' : channel === 'email' ? 'an email address' : 'a mobile number'} each ${opt.seed === 'api' ? 'through the API' : 'in SQL'}, in ${workspaces.length} workspace(s) (${setupS} s)`);

    const token = await sessionToken(secret, 'herald-bench');
    const sendAt = Date.now() + opt.sendInMs;
    const campaigns: { workspaceId: string; id: string }[] = [];
    for (const ws of workspaces) {
      const inWs = `workspace_id=${ws.id}`;
      const created = await call(base, 'POST', `/api/v1/campaigns?${inWs}`, token, {
        name: `bench ${scenario}`,
        trigger_type: 'schedule',
        trigger_config: { send_at: new Date(sendAt).toISOString() },
        workflow_definition: { nodes: [NODES[channel]] },
      });
      const id = created.body?.data?.campaign?.id as string | undefined;
      if (created.status !== 201 || !id) throw new Error(`creating the campaign answered ${created.status}: ${JSON.stringify(created.body).slice(0, 500)}`);
      const activated = await call(base, 'PUT', `/api/v1/campaigns/${id}?${inWs}`, token, { status: 'active' });
      if (activated.body?.data?.campaign?.status !== 'scheduled') throw new Error(`activating answered ${activated.status}: ${JSON.stringify(activated.body).slice(0, 500)}`);
      campaigns.push({ workspaceId: ws.id, id });
    }
    const perCampaign = Math.min(opt.people, opt.ceiling);
    const expected = perCampaign * campaigns.length;
    log(`${campaigns.length} campaign(s) scheduled at ${new Date(sendAt).toISOString()}; ${fmt(expected)} sends expected`);

    const pgDir = process.env.DATABASE_URL ? null : join(dataDir, 'pg');
    let sampler = new Sampler(herald.pid, pgDir);
    // Sends so far: what the provider received, or (sandbox) Herald's count of sends recorded `sent`.
    const sends = () => rig!.sends();
    const before = await sends();
    await new Promise((r) => setTimeout(r, Math.max(0, sendAt - Date.now() - 1000)));
    await statementStats(url, 'reset');
    const walStart = await walCounters(url);
    sampler.mark('start');
    let metricsStart = await scrapeMetrics(base);
    const loadStart = loadavg();
    // Poll what the provider received until everything arrived (or nothing more comes).
    let first: number | null = null;
    let last: number | null = null;
    let received = 0;
    let lastChange = Date.now();
    /** Requests received by each second after send_at. */
    const timeline: number[] = [];
    /** With --kill-at: when Herald was killed and up again, and the sends by then. */
    let kill: { atKill: number; killedAt: number; restartedAt: number } | null = null;
    const deadline = sendAt + opt.timeoutMs;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      const n = (await sends()) - before;
      const now = Date.now();
      if (now >= sendAt) timeline[Math.floor((now - sendAt) / 1000)] = n;
      if (n > received) {
        first ??= now;
        last = now;
        received = n;
        lastChange = now;
      }
      if (received >= expected) break;
      if (received > 0 && now - lastChange > 30_000) break; // stalled
      if (opt.killAt !== null && kill === null && received >= opt.killAt * expected) {
        // kill -9 (Herald's embedded PostgreSQL is its child: orphaned, and stopped by the next start).
        herald.child.kill('SIGKILL');
        await new Promise((r) => (herald!.child.exitCode !== null || herald!.child.signalCode !== null ? r(null) : herald!.child.once('exit', r)));
        const killedAt = Date.now();
        const atKill = (await sends()) - before;
        sampler.stop();
        log(`killed Herald (-9) at ${fmt(atKill)} of ${fmt(expected)} sends; starting it again on the same data dir`);
        herald = await start();
        base = herald.base;
        url = databaseUrl(dataDir);
        kill = { atKill, killedAt, restartedAt: Date.now() };
        log(`Herald is up again at ${base} (pid ${herald.pid}) ${kill.restartedAt - killedAt} ms after the kill`);
        sampler = new Sampler(herald.pid, pgDir);
        sampler.mark('start');
        metricsStart = await scrapeMetrics(base);
        lastChange = Date.now();
      }
    }
    sampler.mark('end');
    const loadEnd = loadavg();
    // The stats once every send is recorded (the last records follow the last provider answers).
    const readStats = async (c: (typeof campaigns)[number]) => (await call(base, 'GET', `/api/v1/campaigns/${c.id}?workspace_id=${c.workspaceId}`, token)).body?.data;
    const recorded = (x: Awaited<ReturnType<typeof readStats>>) => ['sent', 'skipped', 'policy_suppressed', 'failed'].reduce((n, k) => n + (x?.stats?.[k] ?? 0), 0);
    const settledBy = Date.now() + 30_000;
    let stats = await Promise.all(campaigns.map(readStats));
    while (stats.some((x) => recorded(x) < perCampaign) && Date.now() < settledBy) {
      await new Promise((r) => setTimeout(r, 200));
      stats = await Promise.all(campaigns.map(readStats));
    }
    const metricsEnd = await scrapeMetrics(base);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    // One client: its queries queue, one after another.
    const perWorkspace = await Promise.all(campaigns.map(async (c, i) => {
      const run = (await db.query('SELECT enrolled, truncated, started_at, finished_at FROM campaign_runs WHERE campaign_id = $1', [c.id])).rows[0] ?? null;
      const failures = (await db.query<{ error: string; n: number }>(
        `SELECT error, count(*)::int AS n FROM messages WHERE campaign_id = $1 AND status = 'failed' GROUP BY error ORDER BY n DESC LIMIT 5`,
        [c.id],
      )).rows;
      // When each send was recorded, after send_at: the two-workspace fairness figure.
      const sentAfter = (await db.query<{ p: number[] | null; last: number | null }>(
        `SELECT percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY extract(epoch FROM sent_at - $2::timestamptz)) AS p,
                max(extract(epoch FROM sent_at - $2::timestamptz))::float AS last
         FROM messages WHERE campaign_id = $1 AND status = 'sent'`,
        [c.id, new Date(sendAt)],
      )).rows[0];
      return {
        workspace_id: c.workspaceId,
        actor: shardOf(c.workspaceId, actors),
        campaign_id: c.id,
        status: stats[i]?.campaign?.status ?? null,
        stats: stats[i]?.stats ?? null,
        run,
        failures,
        sent_after_send_at_s: { p50: sentAfter?.p ? round(sentAfter.p[0]!, 2) : null, p90: sentAfter?.p ? round(sentAfter.p[1]!, 2) : null, last: sentAfter?.last === null || sentAfter?.last === undefined ? null : round(sentAfter.last, 2) },
      };
    }));
    await db.end();
    const p50s = perWorkspace.map((w) => w.sent_after_send_at_s.p50);
    const p50Ratio = p50s.length > 1 && p50s.every((x): x is number => x !== null && x > 0) ? round(Math.max(...p50s) / Math.min(...p50s), 3) : null;
    // After a kill the people whose send was with the provider are recorded failed and never
    // reach it again: complete is then everyone recorded, not everyone received.
    const everyoneRecorded = stats.every((x) => recorded(x) >= perCampaign);
    const killed = kill && {
      at: opt.killAt,
      sends_at_kill: kill.atKill,
      restart_ms: kill.restartedAt - kill.killedAt,
      last_send_after_restart_s: last === null ? null : round((last - kill.restartedAt) / 1000, 2),
      reached_twice: (await rig.repeated?.()) ?? null,
      failed: stats.reduce((n, x) => n + (x?.stats?.failed ?? 0), 0),
      provider_share: WORKSPACE_SHARE,
    };
    const killTargetMet = killed ? killed.reached_twice === 0 && killed.failed <= WORKSPACE_SHARE && killed.last_send_after_restart_s !== null && killed.last_send_after_restart_s <= KILL_SETTLE_S && everyoneRecorded : null;
    const statements = await statementStats(url, 'read');
    const walEnd = await walCounters(url);
    // What PostgreSQL wrote to its WAL for the run (none after a kill: its counters restarted with it).
    const wal = walStart && walEnd && !kill ? { records: walEnd.records - walStart.records, full_page_images: walEnd.full_page_images - walStart.full_page_images, bytes: walEnd.bytes - walStart.bytes, checkpoints: walEnd.checkpoints - walStart.checkpoints } : null;
    const walDetail = opt.walDetail && walStart && walEnd && !kill ? await walByRelation(url, walStart.lsn, walEnd.lsn) : null;
    sampler.stop();
    const providerStats = (await rig.stats?.()) ?? null;
    t = Date.now();
    const shutdown = await stopChild(herald.child, 120_000);
    log(`Herald stopped in ${Date.now() - t} ms`);

    // The floor, Herald stopped: as many messages as Herald sent, the bare way.
    let floor: Floor | null = null;
    if (rig.floor && received > 0) {
      log(channel === 'push' ? `the floor: ${PUSH_FLOOR_MS / 1000} s` : `the floor: ${fmt(received)} messages`);
      floor = await rig.floor(received);
      log(`the floor sent ${fmt(floor.sent)} (${fmt(floor.errors)} errors${floor.error ? `, first: ${floor.error}` : ''}) in ${floor.duration_s} s`);
    }

    const toLast = last === null ? null : round((last - sendAt) / 1000, 2);
    const perS = toLast ? round(received / toLast) : null;
    const perSFromFirst = first !== null && last !== null && last > first ? round(received / ((last - first) / 1000)) : null;
    const ratio = floor && floor.per_s > 0 && perS !== null ? round(perS / floor.per_s, 3) : null;
    const result = {
      scenario,
      started_at: startedAt.toISOString(),
      options: { people: opt.people, workspaces: opt.workspaces, ceiling: opt.ceiling, send_in_s: opt.sendInMs / 1000, seed: opt.seed, ...(channel === 'push' ? { provider: opt.provider } : {}), ...(channel === 'email' ? { connections: opt.connections } : {}) },
      machine: { cpus: availableParallelism(), cpu_model: cpus()[0]?.model ?? null, memory_gb: round(totalmem() / 2 ** 30, 1), node: process.version, loadavg: { start: loadStart, end: loadEnd } },
      setup_s: setupS,
      expected,
      received,
      complete: kill ? everyoneRecorded : received >= expected,
      kill: killed,
      kill_target_met: killTargetMet,
      send_at: new Date(sendAt).toISOString(),
      first_request_after_send_at_s: first === null ? null : round((first - sendAt) / 1000, 2),
      last_request_after_send_at_s: toLast,
      sends_per_s: perS,
      received_by_second: timeline.reduce<number[]>((out, x, i) => [...out, x ?? out[i - 1] ?? 0], []),
      sends_per_s_from_first: perSFromFirst,
      floor,
      ratio_to_floor: ratio,
      ratio_to_floor_from_first: floor && floor.per_s > 0 && perSFromFirst !== null ? round(perSFromFirst / floor.per_s, 3) : null,
      target: floor ? FLOOR_TARGET[channel] : null,
      provider: providerStats,
      workspaces: perWorkspace,
      p50_ratio: p50Ratio,
      p50_ratio_target: perWorkspace.length > 1 ? P50_RATIO_TARGET : null,
      herald: { rss_mb: { start: sampler.marks.start?.rss_mb ?? null, max: sampler.maxRss('start', 'end'), end: sampler.marks.end?.rss_mb ?? null }, cpu_s: round((sampler.marks.end?.cpu_s ?? 0) - (sampler.marks.start?.cpu_s ?? 0), 1), threads: sampler.threadCpu('start', 'end') },
      postgres: pgDir ? { pss_mb_max: sampler.maxPgPss('start', 'end'), cpu_s: round((sampler.marks.end?.pg_cpu_s ?? 0) - (sampler.marks.start?.pg_cpu_s ?? 0), 1) } : null,
      statements,
      wal,
      wal_by_relation: walDetail,
      metrics: metricsStart && metricsEnd ? summarize(metricsStart, metricsEnd) : null,
      herald_log: herald.logged,
      shutdown,
      samples: sampler.samples,
    };
    mkdirSync(resolve(opt.out), { recursive: true });
    const file = join(resolve(opt.out), `${scenario}-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    const campaignLine = (w: (typeof perWorkspace)[number]) => {
      const s = w.stats as Record<string, number> | null;
      const at = w.sent_after_send_at_s;
      return `campaign${perWorkspace.length > 1 ? ` in workspace ${w.workspace_id} (actor ${w.actor})` : ''}: ${w.status}; stats ${s ? `enrolled ${fmt(s.enrolled)}, sent ${fmt(s.sent)}, failed ${fmt(s.failed)}, skipped ${fmt(s.skipped)}` : '-'}; run ${w.run ? `enrolled ${fmt(w.run.enrolled)}${w.run.truncated ? ', truncated at the ceiling' : ''}` : '-'}; sends recorded p50 ${fmt(at.p50, 2)} s, p90 ${fmt(at.p90, 2)} s, last ${fmt(at.last, 2)} s after send_at` +
        (w.failures.length > 0 ? `\n  failed sends by error: ${w.failures.map((f) => `${f.n} × ${f.error}`).join('; ')}` : '');
    };
    process.stdout.write(
      [
        '',
        `scenario ${scenario}: ${fmt(opt.people)} people${opt.workspaces > 1 ? ` in each of ${opt.workspaces} workspaces` : ''} seeded ${opt.seed === 'api' ? 'through the API' : 'in SQL'} (${fmt(setupS, 1)} s), ceiling ${fmt(opt.ceiling)}, one ${NODES[channel].type} node; ${rig.describe}; ${availableParallelism()} CPUs`,
        `${opt.provider === 'sandbox' ? 'sends recorded sent' : channel === 'email' ? 'messages the SMTP server accepted' : 'provider requests'}: ${fmt(received)} of ${fmt(expected)}${result.complete ? '' : ' (INCOMPLETE)'}; first ${fmt(result.first_request_after_send_at_s, 2)} s and last ${fmt(toLast, 2)} s after send_at`,
        `sends/s: ${fmt(result.sends_per_s)} from send_at to the last request (${fmt(result.sends_per_s_from_first)} from the first)`,
        floor ? `the floor (${floor.describe}): ${fmt(floor.per_s)} messages/s; Herald ${fmt(ratio, 3)} of it from send_at (${fmt(result.ratio_to_floor_from_first, 3)} from the first send); target ≥ ${FLOOR_TARGET[channel]}: ${ratio !== null && ratio >= FLOOR_TARGET[channel] ? 'met' : 'NOT met'}` : '',
        ...perWorkspace.map(campaignLine),
        killed
          ? `kill -9 at ${fmt(killed.sends_at_kill)} sends, up again in ${fmt(killed.restart_ms)} ms; tokens reached twice ${fmt(killed.reached_twice)}; recorded failed ${fmt(killed.failed)} (the workspace's provider share: ${killed.provider_share}); last send ${fmt(killed.last_send_after_restart_s, 2)} s after the restart; target (0 twice, failed ≤ the share, all within ${KILL_SETTLE_S} s): ${killTargetMet ? 'met' : 'NOT met'}`
          : '',
        perWorkspace.length > 1 ? `p50 send time, the slowest workspace's over the fastest's: ${fmt(p50Ratio, 3)}; target ≤ ${P50_RATIO_TARGET}: ${p50Ratio !== null && p50Ratio <= P50_RATIO_TARGET ? 'met' : 'NOT met'}` : '',
        `Herald RSS: ${fmt(result.herald.rss_mb.start)} MB at send_at, ${fmt(result.herald.rss_mb.max)} max, ${fmt(result.herald.rss_mb.end)} at the end; CPU ${fmt(result.herald.cpu_s, 1)} s`,
        result.metrics ? `herald's own metrics from send_at until every send was recorded (GET /metrics):\n${formatSummary(result.metrics)}` : '',
        result.postgres ? `embedded PostgreSQL: PSS ${fmt(result.postgres.pss_mb_max)} MB max; CPU ${fmt(result.postgres.cpu_s, 1)} s` : 'PostgreSQL: DATABASE_URL (not sampled)',
        wal && received > 0 ? `PostgreSQL WAL: ${fmt(wal.bytes / 2 ** 20)} MB (${fmt(wal.bytes / received)} bytes and ${fmt(wal.records / received, 1)} records a send), ${fmt(wal.full_page_images)} full-page images, ${fmt(wal.checkpoints)} checkpoints` : '',
        opt.walDetail && received > 0
          ? walDetail
            ? `WAL records a send by relation (full-page images in all): ${walDetail.map((w) => `${w.what} ${fmt(w.records / received, 2)} (${fmt(w.full_page_images)})`).join(', ')}`
            : 'WAL by relation: not readable (segments recycled, or no pg_walinspect)'
          : '',
        herald.logged.warn + herald.logged.error > 0 ? `Herald logged ${herald.logged.warn} warnings and ${herald.logged.error} errors; first: ${herald.logged.samples[0] ?? ''}` : '',
        `1-min load average: ${fmt(loadStart[0], 1)} at send_at, ${fmt(loadEnd[0], 1)} at the end (above ${availableParallelism()} means other work competed for the CPUs)`,
        `JSON: ${file}`,
        '',
      ].join('\n'),
    );
    return result.complete && (!rig.floor || floor?.errors === 0) ? 0 : 1;
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? err}`);
    if (herald && herald.child.exitCode !== null) log(herald.output());
    return 1;
  } finally {
    await cleanup();
  }
}

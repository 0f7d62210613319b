// `npm run bench -- --scenario callbacks [--events 10000] [--batch 500] [--connections 4]`:
// SendGrid's signed Event Webhook posted to Herald's callback route (`POST /webhooks/email/{ws}`)
// as SendGrid posts it, for messages that exist: issue 25's "10,000 signed SendGrid events in
// batches of 500, all applied once, ≥ 5,000 events/s". See bench/README.md.
//
// Setup is not timed: one workspace whose email channel names SendGrid with a verification key
// of this run's own (an ECDSA P-256 key pair), people inserted in SQL as the fanout scenario
// does, and one email record `sent` per message, written with Herald's own statement
// (saveMessages), ⌈events / 4⌉ messages, each getting its four events (delivered, open,
// click, open) one after the other, in one batch, as a provider reports a message's events close
// together (so batches in flight at once touch different messages). Each batch is signed
// as SendGrid signs (ECDSA over the timestamp and the raw body); the first is checked with
// SendGrid's own helper (@sendgrid/eventwebhook) before anything is sent, so Herald's
// verification is measured against theirs. Then the batches go out, --connections at a time; the
// time is from the first post to the last answer. Checked afterwards: every answer 200 with
// every event applied and none a duplicate or unmatched, the records carry exactly the events
// posted, and one batch posted again is all duplicates (exit 1 otherwise).
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import sendgrid from '@sendgrid/eventwebhook';
import { call, databaseUrl, guardRun, Sampler, sessionToken, setupWorkspaces, startBenchHerald, stopChild, type HeraldProc } from './procs.js';
import { insertAudience } from './fanout.js';
import { LatencyHistogram, round } from './stats.js';
import { scenarioOptions } from './cli.js';
import { saveMessages, type MessageRecord } from '../src/store/messages.js';
import type { Queryable } from '../src/store/db.js';
import { newId } from '../src/ids.js';

export const CALLBACKS_USAGE = `usage: npm run bench -- --scenario callbacks [options]

  --events 10000      signed SendGrid events posted (four per message: delivered, open, click, open)
  --batch 500         events per request, as SendGrid batches them
  --connections 4     requests in flight at once
  --out bench/results where the JSON result goes`;

/** Issue 25's target. */
const TARGET_PER_S = 5000;
/** The events each message gets, in this order. */
const KINDS = ['delivered', 'open', 'click', 'open'] as const;
const FROM_DOMAIN = 'herald.example';

interface CallbacksOptions {
  events: number;
  batch: number;
  connections: number;
  out: string;
}

function options(argv: string[]): CallbacksOptions {
  const { values, int } = scenarioOptions(argv, CALLBACKS_USAGE, { events: '10000', batch: '500', connections: '4' });
  return {
    events: int('events', values.events, 1, 10_000_000),
    batch: int('batch', values.batch, 1, 10_000),
    connections: int('connections', values.connections, 1, 256),
    out: values.out,
  };
}

/** One email record `sent` per person of the workspace (the first `n` by external id), as Herald writes them; their ids and addresses. */
async function seedMessages(url: string, workspaceId: string, n: number): Promise<{ id: string; address: string }[]> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const people = await db.query<{ id: string; external_id: string; email: string }>(`SELECT id, external_id, email FROM people WHERE workspace_id = $1 ORDER BY id LIMIT $2`, [workspaceId, n]);
    const records: MessageRecord[] = people.rows.map((p) => ({
      id: newId(), workspace_id: workspaceId, person_id: p.id, external_id: p.external_id, channel: 'email', status: 'sent', provider: 'smtp', provider_id: null,
      address: p.email, skip_reason: null, error: null, title: 'Hello', body: 'Your plan: pro', campaign_id: null, node_id: null, event_id: null, tags: null, sent_at: new Date().toISOString(),
    }));
    // saveMessages needs only `query` of a Queryable.
    const q: Queryable = { query: (sql, params) => db.query(typeof sql === 'string' ? sql : sql.text, params) as never, exec: async (sql) => void (await db.query(sql)) };
    for (let i = 0; i < records.length; i += 5000) await saveMessages(q, records.slice(i, i + 5000));
    return records.map((r) => ({ id: r.id, address: r.address! }));
  } finally {
    await db.end();
  }
}

interface SignedBatch {
  raw: string;
  headers: Record<string, string>;
  events: number;
}

/**
 * The events in batches of `size`, each signed. Event i is KINDS[i mod 4] of message ⌊i / 4⌋,
 * with a unique sg_event_id (`run` keeps runs apart).
 */
function batches(messages: { id: string; address: string }[], total: number, size: number, key: KeyObject, run: string): SignedBatch[] {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const out: SignedBatch[] = [];
  for (let from = 0; from < total; from += size) {
    const events = Array.from({ length: Math.min(size, total - from) }, (_, k) => {
      const i = from + k;
      const m = messages[Math.floor(i / KINDS.length)]!;
      const kind = KINDS[i % KINDS.length]!;
      return {
        email: m.address,
        timestamp: Number(timestamp) + i,
        'smtp-id': `<${m.id}@${FROM_DOMAIN}>`,
        event: kind,
        sg_event_id: `${run}-${i}`,
        sg_message_id: `${m.id}.filter0001`,
        ...(kind === 'click' ? { url: 'https://example.com/offer' } : {}),
        ...(kind === 'open' || kind === 'click' ? { useragent: 'Mozilla/5.0 (bench)', ip: '192.0.2.1' } : {}),
      };
    });
    const raw = JSON.stringify(events);
    const signature = sign('sha256', Buffer.from(timestamp + raw), key).toString('base64');
    out.push({ raw, events: events.length, headers: { 'content-type': 'application/json', 'X-Twilio-Email-Event-Webhook-Signature': signature, 'X-Twilio-Email-Event-Webhook-Timestamp': timestamp } });
  }
  return out;
}

interface Answer {
  status: number;
  applied: number;
  duplicates: number;
  unmatched: number;
  ms: number;
}

async function post(url: string, b: SignedBatch): Promise<Answer> {
  const t0 = performance.now();
  const r = await fetch(url, { method: 'POST', headers: b.headers, body: b.raw, signal: AbortSignal.timeout(60_000) });
  const body = (await r.json().catch(() => ({}))) as Partial<Answer>;
  return { status: r.status, applied: body.applied ?? 0, duplicates: body.duplicates ?? 0, unmatched: body.unmatched ?? 0, ms: performance.now() - t0 };
}

const fmt = (n: number | null | undefined, digits = 0) => (n === null || n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }));

export async function callbacks(argv: string[]): Promise<number> {
  const opt = options(argv);
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  let herald: HeraldProc | undefined;
  const { dataDir, cleanup } = guardRun(1_800_000 + opt.events * 10, log, async () => {
    if (herald) await stopChild(herald.child, 30_000);
  });
  try {
    const secret = process.env.HERALD_AUTH_SECRET ?? randomBytes(24).toString('hex');
    // The channel's SMTP host (never connected to) is loopback.
    herald = await startBenchHerald(dataDir, secret, { HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' });
    const base = herald.base;
    log(`Herald is up at ${base} (pid ${herald.pid})`);
    const [ws] = await setupWorkspaces(base, secret, 1);
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const verificationKey = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    // The channel needs its SMTP settings (nothing is sent here) beside the webhook's.
    const channel = await call(base, 'PUT', `/api/v1/workspaces/${ws!.id}/channels/email`, await sessionToken(secret, 'herald-bench'), {
      smtp: { host: '127.0.0.1', port: 25, security: 'none' },
      from: { email: `bench@${FROM_DOMAIN}` },
      webhooks: { provider: 'sendgrid', verification_key: verificationKey },
    });
    if (channel.status !== 200) throw new Error(`setting the email channel answered ${channel.status}: ${JSON.stringify(channel.body).slice(0, 500)}`);
    const messageCount = Math.ceil(opt.events / KINDS.length);
    const url = databaseUrl(dataDir);
    let t = Date.now();
    await insertAudience(url, ws!.id, messageCount, 'email');
    const messages = await seedMessages(url, ws!.id, messageCount);
    const signed = batches(messages, opt.events, opt.batch, privateKey, randomBytes(4).toString('hex'));
    const ew = new sendgrid.EventWebhook();
    if (!ew.verifySignature(ew.convertPublicKeyToECDSA(verificationKey), signed[0]!.raw, signed[0]!.headers['X-Twilio-Email-Event-Webhook-Signature']!, signed[0]!.headers['X-Twilio-Email-Event-Webhook-Timestamp']!)) {
      throw new Error("SendGrid's own helper refuses the bench's signature");
    }
    log(`set up: ${fmt(messageCount)} email records, ${fmt(opt.events)} events in ${signed.length} signed batches (${round((Date.now() - t) / 1000, 1)} s)`);

    const route = `${base}/webhooks/email/${ws!.id}`;
    const sampler = new Sampler(herald.pid, process.env.DATABASE_URL ? null : join(dataDir, 'pg'));
    const loadStart = loadavg();
    sampler.mark('start');
    const answers: Answer[] = [];
    let next = 0;
    t = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(opt.connections, signed.length) }, async () => {
        for (let i = next++; i < signed.length; i = next++) answers[i] = await post(route, signed[i]!);
      }),
    );
    const seconds = (performance.now() - t) / 1000;
    sampler.mark('end');
    sampler.stop();
    const loadEnd = loadavg();

    // Checks: every batch answered 200 with every event applied; the records hold exactly them; a batch again is all duplicates.
    const sum = (k: 'applied' | 'duplicates' | 'unmatched') => answers.reduce((n, a) => n + a[k], 0);
    const refused = answers.filter((a) => a.status !== 200).map((a) => a.status);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const stored = (await db.query<{ events: number; messages: number }>(
      `SELECT coalesce(sum(jsonb_array_length(events)), 0)::int AS events, count(*) FILTER (WHERE jsonb_array_length(events) > 0)::int AS messages FROM messages WHERE workspace_id = $1`,
      [ws!.id],
    )).rows[0]!;
    const statuses = (await db.query<{ status: string; n: number }>(`SELECT status, count(*)::int AS n FROM messages WHERE workspace_id = $1 GROUP BY status ORDER BY status`, [ws!.id])).rows;
    await db.end();
    const again = await post(route, signed[0]!);
    const checks = {
      all_200: refused.length === 0,
      applied_once: sum('applied') === opt.events && sum('duplicates') === 0 && sum('unmatched') === 0,
      stored_once: stored.events === opt.events,
      repeat_all_duplicates: again.status === 200 && again.applied === 0 && again.duplicates === signed[0]!.events,
    };
    const ok = Object.values(checks).every(Boolean);
    const shutdown = await stopChild(herald.child, 60_000);

    const latency = new LatencyHistogram();
    for (const a of answers) latency.record(a.ms);
    const perS = round(opt.events / seconds);
    const result = {
      scenario: 'callbacks',
      started_at: startedAt.toISOString(),
      options: { events: opt.events, batch: opt.batch, connections: opt.connections },
      machine: { cpus: availableParallelism(), node: process.version, loadavg: { start: loadStart, end: loadEnd } },
      messages: messageCount,
      requests: signed.length,
      duration_s: round(seconds, 2),
      events_per_s: perS,
      target_events_per_s: TARGET_PER_S,
      request_latency: latency.summary(),
      answers: { applied: sum('applied'), duplicates: sum('duplicates'), unmatched: sum('unmatched'), refused },
      stored,
      statuses,
      repeat: again,
      checks,
      herald: { cpu_s: round((sampler.marks.end?.cpu_s ?? 0) - (sampler.marks.start?.cpu_s ?? 0), 2), rss_mb_max: sampler.maxRss('start', 'end'), threads: sampler.threadCpu('start', 'end'), logged: herald.logged, shutdown },
      postgres: sampler.marks.end?.pg_cpu_s === undefined ? null : { cpu_s: round((sampler.marks.end.pg_cpu_s ?? 0) - (sampler.marks.start?.pg_cpu_s ?? 0), 2) },
    };
    mkdirSync(resolve(opt.out), { recursive: true });
    const file = join(resolve(opt.out), `callbacks-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    process.stdout.write(
      [
        '',
        `scenario callbacks: ${fmt(opt.events)} signed SendGrid events for ${fmt(messageCount)} email records, ${fmt(opt.batch)} a request, ${opt.connections} in flight; ${availableParallelism()} CPUs`,
        `events/s: ${fmt(perS)} (${fmt(seconds, 2)} s; target ≥ ${fmt(TARGET_PER_S)}: ${perS >= TARGET_PER_S ? 'met' : 'NOT met'}); a request p50 ${fmt(result.request_latency.p50_ms, 1)} ms, p99 ${fmt(result.request_latency.p99_ms, 1)} ms`,
        `answers: ${fmt(result.answers.applied)} applied, ${fmt(result.answers.duplicates)} duplicates, ${fmt(result.answers.unmatched)} unmatched${refused.length ? `, ${refused.length} refused (${[...new Set(refused)].join(', ')})` : ''}; stored ${fmt(stored.events)} events on ${fmt(stored.messages)} records; statuses ${statuses.map((s) => `${s.status} ${fmt(s.n)}`).join(', ')}`,
        `a batch posted again: ${again.status}, ${again.applied} applied, ${again.duplicates} duplicates`,
        `checks: ${Object.entries(checks).map(([k, v]) => `${k} ${v ? 'ok' : 'FAILED'}`).join(', ')}`,
        `Herald CPU ${fmt(result.herald.cpu_s, 2)} s${result.postgres ? `, embedded PostgreSQL CPU ${fmt(result.postgres.cpu_s, 2)} s` : ''}; Herald logged ${herald.logged.warn} warnings and ${herald.logged.error} errors`,
        `1-min load average: ${fmt(loadStart[0], 1)} at the start, ${fmt(loadEnd[0], 1)} at the end`,
        `JSON: ${file}`,
        '',
      ].join('\n'),
    );
    return ok ? 0 : 1;
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? err}`);
    if (herald && herald.child.exitCode !== null) log(herald.output());
    return 1;
  } finally {
    await cleanup();
  }
}

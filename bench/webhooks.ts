// `npm run bench -- --scenario webhooks [--people 50000]` (issue 37): two workspaces, each with
// --people people (one android device each, inserted in SQL as the fanout scenario does) and a
// `schedule` campaign of one push node through Herald's sandbox provider. The first runs without
// a webhook endpoint (the baseline); the second with an endpoint subscribed to `message.sent`,
// pointing at a receiver in a process of its own (bench/webhook-receiver.ts). Reports the
// deliveries/s (distinct webhook-ids received, from send_at to the last), the campaign's time
// with the endpoint over its time without (issue 37's target: ≤ 1.1), and, Herald stopped, the
// floor: bare `fetch` (undici) POSTs of the bodies and headers Herald sent, to the same receiver,
// as many in flight as Herald had connections open to it at its peak; Herald's deliveries/s as a share of it (issue 37's
// target: ≥ 0.6). See bench/README.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { ask, call, databaseUrl, forkReady, guardRun, sessionToken, setupWorkspaces, startBenchHerald, stopChild, type HeraldProc } from './procs.js';
import { insertAudience } from './fanout.js';
import { round } from './stats.js';
import { scenarioOptions } from './cli.js';
import type { FromReceiver } from './webhook-receiver.js';

export const WEBHOOKS_USAGE = `usage: npm run bench -- --scenario webhooks [options]

  --people 50000      people in each of the two campaigns' audiences
  --send-in 10s       each campaign's send_at this long after its activation
  --timeout 600s      give up on a campaign (or its deliveries) not done by then
  --out bench/results where the JSON result goes`;

const RECEIVER = new URL('./webhook-receiver.js', import.meta.url).pathname;
/** Issue 37's targets. */
const FLOOR_TARGET = 0.6;
const CAMPAIGN_RATIO_TARGET = 1.1;

interface Options {
  people: number;
  sendInMs: number;
  timeoutMs: number;
  out: string;
}

function options(argv: string[]): Options {
  const { values, int, dur } = scenarioOptions(argv, WEBHOOKS_USAGE, { people: '50000', 'send-in': '10s', timeout: '600s' });
  return { people: int('people', values.people, 1, 1_000_000), sendInMs: Math.max(3000, dur('send-in', values['send-in'])), timeoutMs: dur('timeout', values.timeout), out: values.out };
}

const stats = (child: ChildProcess) => ask<FromReceiver, 'stats'>(child, 'stats', 'webhook receiver');

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/** The floor: `count` POSTs of the sampled requests, in turn, `concurrency` in flight, with bare fetch. */
async function floor(url: string, sample: { headers: Record<string, string>; body: string }[], count: number, concurrency: number): Promise<{ sent: number; errors: number; per_s: number; duration_s: number }> {
  let next = 0;
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const r = sample[next++ % sample.length]!;
        try {
          const res = await fetch(url, { method: 'POST', headers: r.headers, body: r.body });
          await res.arrayBuffer();
          if (!res.ok) errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const duration = (performance.now() - t0) / 1000;
  return { sent: count, errors, per_s: round(count / duration), duration_s: round(duration, 2) };
}

export async function webhooks(argv: string[]): Promise<number> {
  const opt = options(argv);
  const startedAt = new Date();
  const log = (msg: string) => process.stderr.write(`[bench ${((Date.now() - startedAt.getTime()) / 1000).toFixed(1)}s] ${msg}\n`);
  let herald: HeraldProc | undefined;
  const { dataDir, cleanup } = guardRun(3 * opt.timeoutMs + 1_800_000, log, async () => {
    if (herald) await stopChild(herald.child, 30_000);
  });
  try {
    const { child: receiver, ready } = await forkReady<Extract<FromReceiver, { type: 'ready' }>>(RECEIVER, 'webhook receiver');
    const secret = randomBytes(24).toString('hex');
    herald = await startBenchHerald(dataDir, secret, { HERALD_ALLOWED_PRIVATE_HOSTS: '127.0.0.1', HERALD_PUSH_PROVIDER: 'sandbox', HERALD_SCHEDULE_AUDIENCE_CEILING: String(opt.people) });
    const base = herald.base;
    log(`Herald is up at ${base}; the receiver at ${ready.url}`);
    const [plain, hooked] = await setupWorkspaces(base, secret, 2);
    const url = databaseUrl(dataDir);
    for (const ws of [plain!, hooked!]) await insertAudience(url, ws.id, opt.people, 'push');
    const token = await sessionToken(secret, 'herald-bench');
    const endpoint = await call(base, 'POST', `/api/v1/workspaces/${hooked!.id}/webhooks`, token, { url: ready.url, event_types: ['message.sent'] });
    if (endpoint.status !== 201) throw new Error(`creating the endpoint answered ${endpoint.status}: ${JSON.stringify(endpoint.body).slice(0, 500)}`);
    log(`${opt.people} people in each of two workspaces; the second has an endpoint subscribed to message.sent`);

    const db = new pg.Client({ connectionString: url });
    await db.connect();
    /** Runs one campaign to the end: seconds from send_at to its last send recorded. */
    const campaign = async (workspaceId: string): Promise<{ id: string; sendAt: number; last_sent_s: number | null; sent: number }> => {
      const sendAt = Date.now() + opt.sendInMs;
      const created = await call(base, 'POST', `/api/v1/campaigns?workspace_id=${workspaceId}`, token, {
        name: 'bench webhooks',
        trigger_type: 'schedule',
        trigger_config: { send_at: new Date(sendAt).toISOString() },
        workflow_definition: { nodes: [{ id: 'hello', type: 'push', title: 'Hello {{ person.first_name }}', body: 'Your plan: {{ traits.plan }}' }] },
      });
      const id = created.body?.data?.campaign?.id as string;
      const activated = await call(base, 'PUT', `/api/v1/campaigns/${id}?workspace_id=${workspaceId}`, token, { status: 'active' });
      if (activated.status !== 200) throw new Error(`activating answered ${activated.status}: ${JSON.stringify(activated.body).slice(0, 500)}`);
      const sentNow = async () => Number((await db.query(`SELECT count(*) AS n FROM messages WHERE campaign_id = $1 AND status = 'sent'`, [id])).rows[0].n);
      await until(async () => (await sentNow()) >= opt.people, opt.sendInMs + opt.timeoutMs);
      const r = await db.query<{ last: number | null }>(`SELECT extract(epoch FROM max(sent_at) - $2::timestamptz)::float AS last FROM messages WHERE campaign_id = $1`, [id, new Date(sendAt)]);
      return { id, sendAt, last_sent_s: r.rows[0]?.last === null || r.rows[0]?.last === undefined ? null : round(r.rows[0].last, 2), sent: await sentNow() };
    };
    const baseline = await campaign(plain!.id);
    log(`without an endpoint: ${baseline.sent} sent, the last ${baseline.last_sent_s} s after send_at`);
    const withHooks = await campaign(hooked!.id);
    log(`with the endpoint: ${withHooks.sent} sent, the last ${withHooks.last_sent_s} s after send_at; waiting for the deliveries`);
    await until(async () => (await stats(receiver)).ids >= opt.people, opt.timeoutMs);
    const received = await stats(receiver);
    await db.end();
    const shutdown = await stopChild(herald.child, 60_000);

    const sample = (await ask<FromReceiver, 'sample'>(receiver, 'sample', 'webhook receiver')).requests;
    await ask<FromReceiver, 'reset'>(receiver, 'reset', 'webhook receiver');
    const concurrency = Math.max(1, received.max_connections);
    log(`the floor: ${received.ids} POSTs with bare fetch, ${concurrency} in flight`);
    const bare = sample.length > 0 ? await floor(ready.url, sample, received.ids, concurrency) : null;
    receiver.kill('SIGTERM');

    const toLast = received.last === null ? null : (received.last - withHooks.sendAt) / 1000;
    const perS = toLast ? round(received.ids / toLast) : null;
    const ratio = bare && perS !== null ? round(perS / bare.per_s, 3) : null;
    const campaignRatio = baseline.last_sent_s && withHooks.last_sent_s ? round(withHooks.last_sent_s / baseline.last_sent_s, 3) : null;
    const result = {
      scenario: 'webhooks',
      started_at: startedAt.toISOString(),
      options: { people: opt.people, send_in_s: opt.sendInMs / 1000 },
      machine: { cpus: availableParallelism(), loadavg: loadavg() },
      baseline,
      with_endpoint: withHooks,
      campaign_ratio: campaignRatio,
      campaign_ratio_target: CAMPAIGN_RATIO_TARGET,
      deliveries: { requests: received.requests, distinct: received.ids, first_after_send_at_s: received.first === null ? null : round((received.first - withHooks.sendAt) / 1000, 2), last_after_send_at_s: toLast === null ? null : round(toLast, 2), per_s: perS, max_connections: received.max_connections },
      floor: bare,
      ratio_to_floor: ratio,
      target: FLOOR_TARGET,
      herald_log: herald.logged,
      shutdown,
    };
    mkdirSync(resolve(opt.out), { recursive: true });
    const file = join(resolve(opt.out), `webhooks-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    process.stdout.write(
      [
        '',
        `scenario webhooks: ${opt.people} people per campaign, sandbox push; ${availableParallelism()} CPUs`,
        `campaign without an endpoint: last send ${baseline.last_sent_s} s after send_at; with one: ${withHooks.last_sent_s} s; ratio ${campaignRatio} (target ≤ ${CAMPAIGN_RATIO_TARGET}: ${campaignRatio !== null && campaignRatio <= CAMPAIGN_RATIO_TARGET ? 'met' : 'NOT met'})`,
        `deliveries: ${received.ids} distinct of ${opt.people} (${received.requests} requests), last ${result.deliveries.last_after_send_at_s} s after send_at: ${perS} /s; ${received.max_connections} connections open at most`,
        bare ? `the floor (bare fetch, ${concurrency} in flight): ${bare.per_s} /s (${bare.errors} errors); Herald ${ratio} of it (target ≥ ${FLOOR_TARGET}: ${ratio !== null && ratio >= FLOOR_TARGET ? 'met' : 'NOT met'})` : 'no floor: nothing was received',
        herald.logged.warn + herald.logged.error > 0 ? `Herald logged ${herald.logged.warn} warnings and ${herald.logged.error} errors; first: ${herald.logged.samples[0] ?? ''}` : '',
        `JSON: ${file}`,
        '',
      ].join('\n'),
    );
    return received.ids >= opt.people && (bare?.errors ?? 1) === 0 ? 0 : 1;
  } catch (err) {
    log(`failed: ${(err as Error).stack ?? err}`);
    return 1;
  } finally {
    await cleanup();
  }
}

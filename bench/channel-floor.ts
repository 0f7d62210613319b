// The floors of the email-fanout and sms-fanout scenarios, in a process of their own, sending
// to the same fakes Herald sent to (bench/messaging-fakes.ts) the same number of messages, with
// nothing of Herald on the path:
// - email: a bare nodemailer pooled transport (the options Herald's pool has, src/channels/email/
//   transport.ts, with the channel's connections) sending the messages Herald sent, raw, with
//   their envelopes, all handed to the pool at once;
// - sms: bare `fetch` POSTs of the form bodies Herald sent, with its basic auth, `concurrency`
//   in flight (as many as the fake saw in flight from Herald at once).
// Forked by bench/procs.ts (runChannelFloor) with an IPC channel; runs one `run` and reports back.
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { SmtpSample } from './messaging-fakes.js';
import { round } from './stats.js';

export type ChannelFloorConfig =
  | { kind: 'email'; host: string; port: number; connections: number; count: number; mails: SmtpSample[] }
  | { kind: 'sms'; url: string; concurrency: number; count: number; requests: { body: string; authorization: string; path: string }[] };

export interface ChannelFloorResult {
  kind: 'email' | 'sms';
  sent: number;
  errors: number;
  /** The first error, if any. */
  error: string | null;
  duration_s: number;
  per_s: number;
  client_cpu_s: number;
}

export type ToChannelFloor = { type: 'run'; config: ChannelFloorConfig };
export type FromChannelFloor = { type: 'result'; result: ChannelFloorResult } | { type: 'error'; message: string };

async function email(c: Extract<ChannelFloorConfig, { kind: 'email' }>, tally: (err?: unknown) => void): Promise<void> {
  const options: SMTPPool.Options = { pool: true, host: c.host, port: c.port, secure: false, ignoreTLS: true, maxConnections: c.connections };
  const transport = nodemailer.createTransport(options);
  try {
    await Promise.all(
      Array.from({ length: c.count }, (_, i) => {
        const m = c.mails[i % c.mails.length]!;
        return transport.sendMail({ envelope: { from: m.from, to: m.to }, raw: m.raw }).then(() => tally(), tally);
      }),
    );
  } finally {
    transport.close();
  }
}

async function sms(c: Extract<ChannelFloorConfig, { kind: 'sms' }>, tally: (err?: unknown) => void): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(c.concurrency, c.count) }, async () => {
      for (let i = next++; i < c.count; i = next++) {
        const r = c.requests[i % c.requests.length]!;
        try {
          const res = await fetch(c.url + r.path, { method: 'POST', headers: { authorization: r.authorization, 'content-type': 'application/x-www-form-urlencoded' }, body: r.body });
          await res.arrayBuffer();
          tally(res.ok ? undefined : new Error(`answered ${res.status}`));
        } catch (err) {
          tally(err);
        }
      }
    }),
  );
}

async function run(config: ChannelFloorConfig): Promise<ChannelFloorResult> {
  let sent = 0;
  let errors = 0;
  let error: string | null = null;
  const tally = (err?: unknown) => {
    if (err === undefined) sent++;
    else {
      errors++;
      error ??= (err as Error).message ?? String(err);
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await (config.kind === 'email' ? email(config, tally) : sms(config, tally));
  const s = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { kind: config.kind, sent, errors, error, duration_s: round(s, 2), per_s: round(sent / s), client_cpu_s: round((cpu.user + cpu.system) / 1e6, 2) };
}

if (!process.send) {
  process.stderr.write('bench/channel-floor.js is started by bench/run.js (it needs an IPC channel)\n');
  process.exit(2);
}
process.once('disconnect', () => process.exit(0));
process.on('message', (m: ToChannelFloor) => {
  if (m.type !== 'run') return;
  run(m.config).then(
    (result) => process.send!({ type: 'result', result } satisfies FromChannelFloor, () => process.exit(0)),
    (err: Error) => process.send!({ type: 'error', message: err.stack ?? err.message } satisfies FromChannelFloor, () => process.exit(1)),
  );
});

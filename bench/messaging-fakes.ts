// The email and SMS providers of the email-fanout and sms-fanout scenarios, in one process of
// their own, apart from Herald and from the floor: an SMTP server (smtp-server, the nodemailer
// project's, plain text, no AUTH: it accepts every message and discards it) and the tests' fake
// Twilio (test/fakes/fake-twilio.ts). Forked by bench/procs.ts (MessagingFakes) with an IPC
// channel: it sends `ready` with their addresses, then answers `stats` (what each received so
// far) and `sample` (the first messages as Herald sent them, for the floor to send the same), and
// exits when its parent goes away.
import { SMTPServer } from 'smtp-server';
import { startFakeTwilio } from '../test/fakes/fake-twilio.js';

/** Messages kept whole for the floor to replay; the others are only counted. */
const SAMPLE = 200;

/** The Twilio account the fake accepts (its sid and auth token), and the sender number. */
const ACCOUNT = { account_sid: `AC${'be'.repeat(16)}`, auth_token: 'bench-twilio-token', from: '+15005550006' };

export interface MessagingFakesReady {
  type: 'ready';
  smtp: { host: string; port: number };
  twilio: { url: string; account: typeof ACCOUNT };
}

export interface MessagingFakesStats {
  type: 'stats';
  /** Messages accepted (DATA ended), recipients, connections opened and the most open at once. */
  smtp: { messages: number; recipients: number; connections: number; max_connections: number };
  /** Requests on the Messages route and the most connections open at once (the sender's concurrency). */
  twilio: { requests: number; max_connections: number };
  /** CPU seconds this process has used. */
  cpu_s: number;
}

/** A message as the SMTP server got it: the envelope and the raw message. */
export interface SmtpSample {
  from: string;
  to: string[];
  raw: string;
}

export interface MessagingFakesSample {
  type: 'sample';
  mails: SmtpSample[];
  /** Form bodies of Twilio sends as received (URL-encoded), with the basic-auth header they came with. */
  sms: { body: string; authorization: string; path: string }[];
}

export type FromMessagingFakes = MessagingFakesReady | MessagingFakesStats | MessagingFakesSample;
export type ToMessagingFakes = { type: 'stats' } | { type: 'sample' };

if (!process.send) {
  process.stderr.write('bench/messaging-fakes.js is started by bench/run.js (it needs an IPC channel)\n');
  process.exit(2);
}
process.once('disconnect', () => process.exit(0));
process.once('SIGTERM', () => process.exit(0));

const smtpStats = { messages: 0, recipients: 0, connections: 0, max_connections: 0 };
let open = 0;
const mails: SmtpSample[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  onConnect(_session, cb) {
    smtpStats.connections++;
    smtpStats.max_connections = Math.max(smtpStats.max_connections, ++open);
    cb();
  },
  onClose() {
    open--;
  },
  onData(stream, session, cb) {
    const keep = mails.length < SAMPLE;
    const chunks: Buffer[] = [];
    stream.on('data', (d: Buffer) => {
      if (keep) chunks.push(d);
    });
    stream.on('end', () => {
      smtpStats.messages++;
      smtpStats.recipients += session.envelope.rcptTo.length;
      if (keep) mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString() });
      cb();
    });
  },
});
smtp.on('error', (err) => process.stderr.write(`bench smtp server: ${err.message}\n`));
await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
const twilio = await startFakeTwilio({ [ACCOUNT.account_sid]: ACCOUNT.auth_token }, [], { keep: SAMPLE });
const send = (m: FromMessagingFakes) => process.send!(m);

process.on('message', (m: ToMessagingFakes) => {
  if (m.type === 'stats') {
    const cpu = process.cpuUsage();
    send({ type: 'stats', smtp: { ...smtpStats }, twilio: { requests: twilio.received, max_connections: twilio.maxConnections }, cpu_s: (cpu.user + cpu.system) / 1e6 });
  } else if (m.type === 'sample') {
    const path = `/2010-04-01/Accounts/${ACCOUNT.account_sid}/Messages.json`;
    const authorization = `Basic ${Buffer.from(`${ACCOUNT.account_sid}:${ACCOUNT.auth_token}`).toString('base64')}`;
    send({ type: 'sample', mails, sms: twilio.requests.map((r) => ({ body: new URLSearchParams(r.form).toString(), authorization, path })) });
  }
});

send({ type: 'ready', smtp: { host: '127.0.0.1', port: (smtp.server.address() as { port: number }).port }, twilio: { url: twilio.url, account: ACCOUNT } });

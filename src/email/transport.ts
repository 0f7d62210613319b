// SMTP delivery (DECISIONS §13): one nodemailer pooled transport per workspace (its
// max_connections and rate_per_second). Sockets go through the destination guard (DECISIONS
// §15): an IP literal is judged before connecting, a host name on every address DNS answers at
// connect time, each on the channel's port (SMTP_PORTS unless the allow-list names the host).
// The pool is rebuilt when the channel's settings change.
import net from 'node:net';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { OutboundPolicy } from '../net/destinations.js';
import type { EmailChannel } from '../store/message-channels.js';
import { smtpFailure, SmtpUnreachable, type SmtpFailure } from './smtp-failures.js';

/** The ports of SMTP (25 relay, 465 submission over TLS, 587 submission, 2525 the providers' alternative). */
export const SMTP_PORTS: ReadonlySet<number> = new Set([25, 465, 587, 2525]);

/** A socket not connected in this time counts as unreachable. */
const CONNECT_TIMEOUT_MS = 10_000;
/** The relay's greeting (and a TLS upgrade) within this… */
const GREETING_TIMEOUT_MS = 10_000;
/** …and no silence longer than this while a message is with it. */
const SOCKET_TIMEOUT_MS = 60_000;

/** What an SMTP send came to: accepted (the relay's answer), or refused and how. */
export type SmtpOutcome = { status: 'sent'; response: string } | SmtpFailure;

export class EmailTransports {
  private readonly pools = new Map<string, { settings: string; transport: Transporter }>();

  constructor(private readonly outbound: OutboundPolicy) {}

  private transport(workspaceId: string, channel: EmailChannel): Transporter {
    const settings = JSON.stringify(channel.smtp);
    const current = this.pools.get(workspaceId);
    if (current?.settings === settings) return current.transport;
    current?.transport.close();
    const transport = this.create(channel);
    this.pools.set(workspaceId, { settings, transport });
    return transport;
  }

  private create({ smtp }: EmailChannel): Transporter {
    const options: SMTPPool.Options = {
      pool: true,
      host: smtp.host,
      port: smtp.port,
      secure: smtp.security === 'tls',
      requireTLS: smtp.security === 'starttls',
      ignoreTLS: smtp.security === 'none',
      maxConnections: smtp.max_connections,
      // Counted from the socket's opening (the pool hands nodemailer the time it asked for one).
      connectionTimeout: CONNECT_TIMEOUT_MS + GREETING_TIMEOUT_MS,
      greetingTimeout: GREETING_TIMEOUT_MS,
      socketTimeout: SOCKET_TIMEOUT_MS,
      ...(smtp.rate_per_second ? { rateDelta: 1000, rateLimit: Math.max(1, Math.floor(smtp.rate_per_second)) } : {}),
      ...(smtp.username ? { auth: { user: smtp.username, pass: smtp.password ?? '' } } : {}),
      getSocket: (_o, callback) => {
        const refused = this.outbound.refusal(smtp.host, smtp.port);
        if (refused) return callback(new SmtpUnreachable(refused));
        const socket = net.connect({ host: smtp.host, port: smtp.port, lookup: this.outbound.lookupFor(smtp.port) });
        const timer = setTimeout(() => socket.destroy(new Error('connect timed out')), CONNECT_TIMEOUT_MS);
        const failed = (err: Error) => {
          clearTimeout(timer);
          callback(new SmtpUnreachable(err));
        };
        socket.once('error', failed);
        socket.once('connect', () => {
          clearTimeout(timer);
          // From here the connection's errors are nodemailer's to handle.
          socket.off('error', failed);
          callback(null, { connection: socket });
        });
      },
    };
    return nodemailer.createTransport(options);
  }

  /** Sends `mail` through the workspace's relay; `deadline` aborts it, answered `smtp_timeout`. */
  async send(workspaceId: string, channel: EmailChannel, mail: SendMailOptions, deadline?: AbortSignal): Promise<SmtpOutcome> {
    try {
      // nodemailer's pool takes an AbortSignal per send (its types do not say so yet).
      const options: SendMailOptions & { signal?: AbortSignal } = deadline ? { ...mail, signal: deadline } : mail;
      const info = (await this.transport(workspaceId, channel).sendMail(options)) as { response: string };
      return { status: 'sent', response: info.response };
    } catch (err) {
      return smtpFailure(err as Parameters<typeof smtpFailure>[0]);
    }
  }

  close(): void {
    for (const { transport } of this.pools.values()) transport.close();
    this.pools.clear();
  }
}

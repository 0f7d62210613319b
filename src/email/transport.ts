// SMTP delivery (DECISIONS §13): one nodemailer pooled transport per workspace (its
// max_connections and rate_per_second), rebuilt when the channel's settings change. Sockets go
// through the destination guard (DECISIONS §15): an IP literal is judged before connecting, a
// host name on every address DNS answers at connect time.
import net from 'node:net';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { OutboundPolicy } from '../net/destinations.js';
import type { EmailChannel } from '../store/message-channels.js';

/** What an SMTP send came to: accepted (the relay's answer), or refused and how. */
export type SmtpOutcome =
  | { status: 'sent'; response: string }
  | { status: 'failed'; error: string; retryable: boolean; invalidAddress: boolean };

/**
 * SMTP replies and enhanced codes: 4xx is transient (the relay kept nothing), 5.1.x a bad
 * mailbox (DECISIONS §13: the address is suppressed). With no reply, only a connection that was
 * never made is retried: one lost after the message was handed over may have been accepted, and
 * sending it again would deliver it twice.
 */
function classifySmtpError(err: { responseCode?: number; response?: string; message: string; code?: string; command?: string }): SmtpOutcome {
  const error = err.response ?? err.message;
  const code = err.responseCode;
  if (code === undefined) return { status: 'failed', error, retryable: err.command === 'CONN' && err.code !== 'EDESTINATIONREFUSED', invalidAddress: false };
  return { status: 'failed', error, retryable: code >= 400 && code < 500, invalidAddress: code >= 500 && /\b5\.1\.\d{1,3}\b/.test(err.response ?? '') };
}

export class EmailTransports {
  private readonly pools = new Map<string, { settings: string; transport: Transporter }>();

  constructor(private readonly outbound: OutboundPolicy) {}

  private transport(workspaceId: string, channel: EmailChannel): Transporter {
    const settings = JSON.stringify(channel.smtp);
    const current = this.pools.get(workspaceId);
    if (current?.settings === settings) return current.transport;
    current?.transport.close();
    const { smtp } = channel;
    const options: SMTPPool.Options = {
      pool: true,
      host: smtp.host,
      port: smtp.port,
      secure: smtp.security === 'tls',
      requireTLS: smtp.security === 'starttls',
      ignoreTLS: smtp.security === 'none',
      maxConnections: smtp.max_connections,
      ...(smtp.rate_per_second ? { rateDelta: 1000, rateLimit: Math.max(1, Math.floor(smtp.rate_per_second)) } : {}),
      ...(smtp.username ? { auth: { user: smtp.username, pass: smtp.password ?? '' } } : {}),
      getSocket: (_o, callback) => {
        const refused = this.outbound.refusal(smtp.host, smtp.port);
        if (refused) return callback(refused);
        const socket = net.connect({ host: smtp.host, port: smtp.port, lookup: this.outbound.lookupFor(smtp.port) });
        socket.once('error', (err) => callback(err));
        socket.once('connect', () => callback(null, { connection: socket }));
      },
    };
    const transport = nodemailer.createTransport(options);
    this.pools.set(workspaceId, { settings, transport });
    return transport;
  }

  async send(workspaceId: string, channel: EmailChannel, mail: SendMailOptions): Promise<SmtpOutcome> {
    try {
      const info = (await this.transport(workspaceId, channel).sendMail(mail)) as { response: string };
      return { status: 'sent', response: info.response };
    } catch (err) {
      return classifySmtpError(err as Error & { responseCode?: number; response?: string; code?: string; command?: string });
    }
  }

  close(): void {
    for (const { transport } of this.pools.values()) transport.close();
    this.pools.clear();
  }
}

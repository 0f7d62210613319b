// SMTP delivery (docs/channels.md): one nodemailer pooled transport per workspace (its
// max_connections and rate_per_second). Sockets go through the destination guard
// (docs/isolation.md): an IP literal is judged before connecting, a host name on every
// address DNS answers at connect time, each on the channel's port (SMTP_PORTS unless the
// allow-list names the host).
// When the channel's settings change, a pool for the new ones takes the next sends and the old
// one is closed once the sends already given to it are done: closing it at once failed them.
import net from 'node:net';
import nodemailer, { type SendMailOptions, type Transporter } from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { OutboundPolicy } from '../../net/destinations.js';
import { smtpFailure, SmtpUnreachable, type SmtpError, type SmtpFailure } from './smtp-failures.js';

/** A workspace's SMTP relay, as its email settings hold it (email/settings.ts). */
export type SmtpSettings = { host: string; port: number; security: 'tls' | 'starttls' | 'none'; username?: string; password?: string; max_connections: number; rate_per_second?: number };

/** What a pool is made for: the relay's settings. */
type Relay = { smtp: SmtpSettings };

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

interface Pool {
  /** The settings it was made with, as JSON. */
  settings: string;
  transport: Transporter;
  /** Sends given to it and not yet answered. */
  inFlight: number;
}

export class EmailTransports {
  /** Each workspace's pools, the newest last (made for the latest settings a send came with); the others are closed once idle. */
  private readonly pools = new Map<string, Pool[]>();

  /** Where a tenant's SMTP host may be: global addresses on SMTP_PORTS, or what the allow-list names. */
  constructor(readonly outbound: OutboundPolicy) {}

  private pool(workspaceId: string, channel: Relay): Pool {
    const settings = JSON.stringify(channel.smtp);
    const pools = this.pools.get(workspaceId) ?? [];
    this.pools.set(workspaceId, pools);
    const found = pools.find((p) => p.settings === settings);
    if (found) return found;
    const pool = { settings, transport: this.create(channel), inFlight: 0 };
    pools.push(pool);
    for (const old of pools.slice(0, -1)) this.closeIfDone(workspaceId, old);
    return pool;
  }

  private create({ smtp }: Relay): Transporter {
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

  /** Closes a pool that is not the workspace's newest once no send is with it. */
  private closeIfDone(workspaceId: string, pool: Pool): void {
    const pools = this.pools.get(workspaceId)!;
    if (pool.inFlight > 0 || pools.at(-1) === pool) return;
    pool.transport.close();
    pools.splice(pools.indexOf(pool), 1);
  }

  /** Sends `mail` through the workspace's relay; `deadline` aborts it, answered `smtp_timeout`. */
  async send(workspaceId: string, channel: Relay, mail: SendMailOptions, deadline?: AbortSignal): Promise<SmtpOutcome> {
    const pool = this.pool(workspaceId, channel);
    pool.inFlight++;
    try {
      // nodemailer's pool takes an AbortSignal per send (its types do not say so yet).
      const options: SendMailOptions & { signal?: AbortSignal } = deadline ? { ...mail, signal: deadline } : mail;
      const info = (await pool.transport.sendMail(options)) as { response: string };
      return { status: 'sent', response: info.response };
    } catch (err) {
      return smtpFailure(err as SmtpError);
    } finally {
      pool.inFlight--;
      this.closeIfDone(workspaceId, pool);
    }
  }

  close(): void {
    for (const pools of this.pools.values()) for (const { transport } of pools) transport.close();
    this.pools.clear();
  }
}


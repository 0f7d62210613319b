// What a failed SMTP send tells the tenant: a reason code, then prose (docs/channels.md, "Email
// and SMS channels"). The host is the tenant's, reached from inside the operator's network, so the
// peer's own words are repeated only when they are an SMTP reply to a command that carries the
// message (AUTH, MAIL FROM, RCPT TO, DATA): a relay that got that far speaks SMTP. Before that
// (the greeting, EHLO, HELO, STARTTLS) whatever answered may be any service (NATS greets with its
// INFO JSON, an FTP server with "220"), and a socket's or the resolver's text (`connect
// ECONNREFUSED 10.0.0.5:25`, `getaddrinfo ENOTFOUND db.corp`) maps the network: those say their
// class only.

/** The reason codes (docs/channels.md, "Email and SMS channels"). */
type SmtpFailureReason = 'smtp_unreachable' | 'smtp_timeout' | 'smtp_tls_failed' | 'smtp_protocol_error' | 'smtp_auth_failed' | 'smtp_rejected';

/** A failed send: what the record's `error` says, whether sending again may help, whether the mailbox is unknown (5.1.x). */
export interface SmtpFailure {
  status: 'failed';
  error: string;
  retryable: boolean;
  invalidAddress: boolean;
}

/** What is read of an error nodemailer's pool answered a send with. */
export interface SmtpError {
  code?: string;
  /** The socket's own code under nodemailer's (`ERR_SSL_WRONG_VERSION_NUMBER`, `CERT_HAS_EXPIRED`). */
  originalCode?: string;
  /** The command the reply answered (`CONN` for the greeting and the socket itself). */
  command?: string;
  response?: string;
  timeoutType?: string;
}

/** The socket could not be opened (refused by the destination rule, DNS, the peer, the time): nothing was sent. */
export class SmtpUnreachable extends Error {
  readonly code = 'EUNREACHABLE';
  constructor(readonly cause: unknown) {
    super('SMTP relay unreachable');
  }
}

/** Replies before these commands are the session's setup, before anything says the peer is an SMTP relay. */
const SETUP = new Set(['CONN', 'EHLO', 'HELO', 'LHLO', 'STARTTLS']);
/** Timeouts before a command carrying the message was sent: the message can go again. */
const SETUP_TIMEOUTS = new Set(['CONNECT_TIMEOUT', 'GREETING_TIMEOUT', 'UPGRADE_TIMEOUT']);
const REPLY = /^([2-5]\d\d)(?:[ -]|$)/;
/** OpenSSL's and the certificate checks' codes: a TLS session that failed on the socket. */
const TLS_CODE = /^ERR_(SSL|TLS)_|CERT|SIGNATURE/;

/** A reply's text without its codes, on one line, bounded: what a tenant's record keeps of it. */
const replyText = (response: string) =>
  response.replace(/^\d{3}[ -]?/gm, '').replace(/\p{Cc}+/gu, ' ').replace(/ {2,}/g, ' ').trim().slice(0, 300);

function failure(reason: SmtpFailureReason, text: string, o: { code?: string; retryable?: boolean; invalidAddress?: boolean } = {}): SmtpFailure {
  return { status: 'failed', error: `${reason}${o.code ? ` ${o.code}` : ''}: ${text}`, retryable: o.retryable ?? false, invalidAddress: o.invalidAddress ?? false };
}

/**
 * The classified failure. Retried: a connection never made, a timeout before the message was
 * sent, and 4xx replies (the relay kept nothing). Not retried: anything after the message may
 * have been handed over (sending again could deliver it twice), TLS, protocol and 5xx failures.
 */
export function smtpFailure(err: SmtpError): SmtpFailure {
  if (err.code === 'EUNREACHABLE') return failure('smtp_unreachable', 'no connection could be made to the SMTP relay', { retryable: true });
  if (err.code === 'EABORT') return failure('smtp_timeout', 'the SMTP relay did not answer in time');
  if (err.code === 'ETIMEDOUT') return failure('smtp_timeout', 'the SMTP relay did not answer in time', { retryable: SETUP_TIMEOUTS.has(err.timeoutType ?? '') });
  if (err.code === 'ETLS' || TLS_CODE.test(err.originalCode ?? '')) return failure('smtp_tls_failed', 'no TLS session could be made with the SMTP relay (check `security` for this port)');
  const code = REPLY.exec(err.response ?? '')?.[1];
  const transient = code?.startsWith('4') ?? false;
  if (code && err.command && !SETUP.has(err.command)) {
    const text = replyText(err.response!);
    if (err.code === 'EAUTH') return failure('smtp_auth_failed', text, { code, retryable: transient });
    return failure('smtp_rejected', text, { code, retryable: transient, invalidAddress: code.startsWith('5') && /\b5\.1\.\d{1,3}\b/.test(text) });
  }
  if (err.code === 'EAUTH' || err.code === 'ENOAUTH') return failure('smtp_auth_failed', 'the SMTP relay did not accept the credentials');
  // RFC 5321 §3.8: 421 is a relay closing the session, busy or shutting down, at any point.
  if (code === '421') return failure('smtp_rejected', 'the SMTP relay is not taking mail now', { code, retryable: true });
  if (err.code === 'ECONNECTION' || err.code === 'ESOCKET' || err.code === undefined) return failure('smtp_unreachable', 'the connection to the SMTP relay was lost');
  return failure('smtp_protocol_error', 'what answered does not speak SMTP as a relay does');
}

// What a failed SMTP send tells the tenant (src/channels/email/smtp-failures.ts), from the errors
// nodemailer answers with: a reason code; the relay's words only for its replies to the commands
// that carry the message; retried only when nothing of the message was handed over.
import t from 'tap';
import { smtpFailure, SmtpUnreachable } from '../../src/channels/email/smtp-failures.js';

t.test('replies to the commands carrying the message: the code and the text', async (t) => {
  t.same(smtpFailure({ code: 'EENVELOPE', command: 'RCPT TO', response: '550 5.1.1 <a@example.com>: Recipient address rejected' }), {
    status: 'failed', error: 'smtp_rejected 550: 5.1.1 <a@example.com>: Recipient address rejected', retryable: false, invalidAddress: true,
  });
  t.match(smtpFailure({ code: 'EENVELOPE', command: 'RCPT TO', response: '451 4.7.1 Try again later' }), { error: 'smtp_rejected 451: 4.7.1 Try again later', retryable: true, invalidAddress: false });
  t.match(smtpFailure({ code: 'EMESSAGE', command: 'DATA', response: '554-5.7.1 Spam\n554 5.7.1 See https://example.com' }), { error: 'smtp_rejected 554: 5.7.1 Spam 5.7.1 See https://example.com', retryable: false });
  t.match(smtpFailure({ code: 'EAUTH', command: 'AUTH PLAIN', response: '535 5.7.8 Authentication credentials invalid' }), { error: 'smtp_auth_failed 535: 5.7.8 Authentication credentials invalid', retryable: false });
  t.match(smtpFailure({ code: 'EAUTH', command: 'AUTH LOGIN', response: '454 4.7.0 Temporary authentication failure' }), { error: /^smtp_auth_failed 454: /, retryable: true });
  t.equal(smtpFailure({ code: 'EENVELOPE', command: 'MAIL FROM', response: `550 ${'x'.repeat(1000)}\u0000` }).error.length, 'smtp_rejected 550: '.length + 300, 'bounded, without control characters');
});

t.test('before the session is set up, nothing the peer said', async (t) => {
  const cases: [object, RegExp][] = [
    [{ code: 'EPROTOCOL', command: 'CONN', response: 'INFO {"server_id":"NDXQ","version":"2.10.14"}' }, /^smtp_protocol_error: /],
    [{ code: 'EPROTOCOL', command: 'CONN', response: '554 5.7.1 internal-relay-7 refuses you' }, /^smtp_protocol_error: /],
    [{ code: 'EPROTOCOL', command: 'HELO', response: "500 'HELO': command not understood (ProFTPD)" }, /^smtp_protocol_error: /],
    [{ code: 'ECONNECTION', command: 'EHLO', response: '421 4.3.2 db-7.corp shutting down' }, /^smtp_rejected 421: the SMTP relay is not taking mail now$/],
    [{ code: 'ESOCKET', originalCode: 'ERR_SSL_WRONG_VERSION_NUMBER', command: 'CONN' }, /^smtp_tls_failed: /],
    [{ code: 'ESOCKET', originalCode: 'DEPTH_ZERO_SELF_SIGNED_CERT', command: 'CONN' }, /^smtp_tls_failed: /],
    [{ code: 'ETLS', command: 'STARTTLS', response: '454 4.7.0 TLS not available on db-7.corp' }, /^smtp_tls_failed: /],
  ];
  for (const [err, reason] of cases) {
    const f = smtpFailure(err);
    t.match(f.error, reason, JSON.stringify(err));
    t.notMatch(f.error, /NDXQ|internal-relay|ProFTPD|db-7/, 'the peer\'s words are not repeated');
  }
});

t.test('connections and time: classes only; retried when nothing was handed over', async (t) => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:25'), { code: 'ECONNREFUSED' });
  t.same(smtpFailure(new SmtpUnreachable(refused)), { status: 'failed', error: 'smtp_unreachable: no connection could be made to the SMTP relay', retryable: true, invalidAddress: false });
  t.match(smtpFailure({ code: 'ETIMEDOUT', command: 'CONN', timeoutType: 'GREETING_TIMEOUT' }), { error: /^smtp_timeout: /, retryable: true });
  t.match(smtpFailure({ code: 'ETIMEDOUT', command: 'CONN', timeoutType: 'SOCKET_TIMEOUT' }), { error: /^smtp_timeout: /, retryable: false }, 'a silence while the message may be with the relay');
  t.match(smtpFailure({ code: 'EABORT' }), { error: /^smtp_timeout: /, retryable: false }, 'the deadline');
  t.match(smtpFailure({ code: 'ECONNECTION', command: 'CONN' }), { error: 'smtp_unreachable: the connection to the SMTP relay was lost', retryable: false });
  t.match(smtpFailure({ code: 'ECONNECTION', command: 'CONN', response: '421 4.4.2 idle too long' }), { error: /^smtp_rejected 421: /, retryable: true });
});

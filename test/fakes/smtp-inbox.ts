// An SMTP relay that keeps every mail it is given (smtp-server, no auth, no TLS): what a test's
// workspace sends through, and where it reads what a person would receive.
import { SMTPServer } from 'smtp-server';

export interface Inbox {
  port: number;
  mails: { to: string[]; data: string }[];
  close(): Promise<void>;
}

export async function startInbox(): Promise<Inbox> {
  const mails: Inbox['mails'] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, cb) {
      let data = '';
      stream.on('data', (d: Buffer) => (data += d.toString()));
      stream.on('end', () => {
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), data });
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
  return { port: (smtp.server.address() as { port: number }).port, mails, close: () => new Promise<void>((r) => smtp.close(() => r())) };
}

/** The decoded html part of a raw MIME message. */
export function htmlOf(raw: string): string {
  const part = /Content-Type: text\/html[^\r\n]*\r?\n((?:[^\r\n]+\r?\n)*)\r?\n([\s\S]*?)\r?\n--/i.exec(raw);
  if (!part) throw new Error(`no html part in ${raw}`);
  const [, headers, body] = part;
  if (/Content-Transfer-Encoding: base64/i.test(headers!)) return Buffer.from(body!, 'base64').toString('utf8');
  if (/Content-Transfer-Encoding: quoted-printable/i.test(headers!)) {
    const bytes = body!.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body!;
}

/** The hrefs of an html body, entities of `&` decoded. */
export const hrefs = (html: string): string[] => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!.replace(/&amp;/g, '&'));

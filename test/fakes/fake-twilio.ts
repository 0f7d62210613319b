// A fake Twilio Messages API: `POST /2010-04-01/Accounts/{sid}/Messages.json`, form-encoded,
// basic auth with the account sid and auth token, answering as Twilio does: 201 with the
// message resource, or 400 `{code, message, more_info, status}` for its test numbers' error
// codes: 21211 (+15005550001, invalid To), 21610 (+15005550004, opted out),
// 21614 (+15005550009, not SMS-capable).
import { createServer, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';

interface TwilioRequest {
  sid: string;
  auth: string;
  form: Record<string, string>;
}

const ERRORS: Record<string, { code: number; message: string }> = {
  '+15005550001': { code: 21211, message: "The 'To' number +15005550001 is not a valid phone number." },
  '+15005550004': { code: 21610, message: 'Attempt to send to unsubscribed recipient' },
  '+15005550009': { code: 21614, message: "'To' number is not a valid mobile number" },
};

export interface FakeTwilio {
  url: string;
  /** The requests received (the first `keep`). */
  requests: TwilioRequest[];
  /** Every request received on the Messages route, kept or not, and the most connections open at once (a client's concurrency). */
  readonly received: number;
  readonly maxConnections: number;
  close(): Promise<void>;
}

/**
 * `busyOnce`: numbers whose first send is answered 429 (code 20429) with Retry-After: 1, as Twilio
 * throttles. `keep`: how many requests `requests` keeps (the bench counts the rest).
 */
export async function startFakeTwilio(accounts: Record<string, string>, busyOnce: string[] = [], { keep = Infinity }: { keep?: number } = {}): Promise<FakeTwilio> {
  const requests: TwilioRequest[] = [];
  const busy = new Set(busyOnce);
  let received = 0;
  let open = 0;
  let maxConnections = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const answer = (status: number, body: object) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const m = /^\/2010-04-01\/Accounts\/(AC[0-9a-f]{32})\/Messages\.json$/.exec(req.url ?? '');
      if (req.method !== 'POST' || !m) return answer(404, { code: 20404, message: 'The requested resource was not found', status: 404 });
      const sid = m[1]!;
      const auth = Buffer.from((req.headers.authorization ?? '').replace(/^Basic /, ''), 'base64').toString();
      if (accounts[sid] === undefined || auth !== `${sid}:${accounts[sid]}`) return answer(401, { code: 20003, message: 'Authenticate', status: 401 });
      const form = Object.fromEntries(new URLSearchParams(raw));
      received++;
      if (requests.length < keep) requests.push({ sid, auth, form });
      if (busy.delete(form.To ?? '')) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1' });
        return res.end(JSON.stringify({ code: 20429, message: 'Too Many Requests', status: 429 }));
      }
      const error = ERRORS[form.To ?? ''];
      if (error) return answer(400, { ...error, more_info: `https://www.twilio.com/docs/errors/${error.code}`, status: 400 });
      if (!form.Body || (!form.From && !form.MessagingServiceSid)) return answer(400, { code: 21602, message: 'Message body is required.', status: 400 });
      answer(201, { sid: `SM${randomBytes(16).toString('hex')}`, account_sid: sid, to: form.To, from: form.From ?? null, body: form.Body, status: 'queued', error_code: null });
    });
  });
  server.on('connection', (socket) => {
    maxConnections = Math.max(maxConnections, ++open);
    socket.once('close', () => open--);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get received() {
      return received;
    },
    get maxConnections() {
      return maxConnections;
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}

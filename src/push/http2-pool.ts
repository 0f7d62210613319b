// A long-lived pool of HTTP/2 sessions to one origin (the FCM endpoint of one credential).
// At most `maxStreamsPerSession` streams are open on a session at once (FCM: about 100; more gave
// GOAWAY); beyond that another session is opened. Sessions are reused across sends. A session
// that receives GOAWAY, errs or closes is retired (no new streams on it) and its streams that the
// server did not answer are retried once on a fresh session.
import http2 from 'node:http2';

export interface Http2Response {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
}

/** The session carrying a request went away (GOAWAY, connection dropped) before the answer. */
class SessionLostError extends Error {}

export interface Http2PoolOptions {
  maxStreamsPerSession?: number;
  requestTimeoutMs?: number;
  /** Trusted CAs instead of the system's (tests, private gateways); Node's NODE_EXTRA_CA_CERTS also works. */
  ca?: string | Buffer;
}

interface Slot {
  session: http2.ClientHttp2Session;
  active: number;
  usable: boolean;
}

const { NGHTTP2_REFUSED_STREAM, NGHTTP2_CANCEL } = http2.constants;

export class Http2Pool {
  private slots: Slot[] = [];
  private closed = false;
  private readonly maxStreams: number;
  private readonly timeoutMs: number;
  /** Sessions opened since the pool was made (for tests and diagnostics). */
  sessionsOpened = 0;

  constructor(
    readonly origin: string,
    private readonly opts: Http2PoolOptions = {},
  ) {
    this.maxStreams = opts.maxStreamsPerSession ?? 100;
    this.timeoutMs = opts.requestTimeoutMs ?? 10_000;
  }

  /** Sessions currently open and taking new streams. */
  get liveSessions(): number {
    return this.slots.length;
  }

  /** Sends one request; a request whose session went away is sent once more on a fresh session. */
  async request(path: string, headers: http2.OutgoingHttpHeaders, body: string): Promise<Http2Response> {
    try {
      return await this.attempt(path, headers, body);
    } catch (err) {
      if (!(err instanceof SessionLostError) || this.closed) throw err;
      return await this.attempt(path, headers, body);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots;
    this.slots = [];
    await Promise.all(
      slots.map((s) => new Promise<void>((resolve) => (s.session.closed ? (s.session.destroy(), resolve()) : s.session.close(() => resolve())))),
    );
  }

  private retire(slot: Slot): void {
    slot.usable = false;
    this.slots = this.slots.filter((s) => s !== slot);
  }

  private open(): Slot {
    const session = http2.connect(this.origin, this.opts.ca ? { ca: this.opts.ca } : {});
    const slot: Slot = { session, active: 0, usable: true };
    this.sessionsOpened++;
    session.on('goaway', () => this.retire(slot));
    session.on('close', () => this.retire(slot));
    // A session error (connection refused or reset) closes it; its streams fail and are retried.
    session.on('error', () => this.retire(slot));
    session.on('frameError', () => {});
    this.slots.push(slot);
    return slot;
  }

  private acquire(): Slot {
    if (this.closed) throw new Error('the HTTP/2 pool is closed');
    for (const slot of this.slots) {
      const remote = slot.session.remoteSettings?.maxConcurrentStreams ?? this.maxStreams;
      if (slot.usable && !slot.session.closed && !slot.session.destroyed && slot.active < Math.min(this.maxStreams, remote)) return slot;
    }
    return this.open();
  }

  private attempt(path: string, headers: http2.OutgoingHttpHeaders, body: string): Promise<Http2Response> {
    const slot = this.acquire();
    slot.active++;
    return new Promise<Http2Response>((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        slot.active--;
        fn();
      };
      let stream: http2.ClientHttp2Stream;
      try {
        stream = slot.session.request({ ':method': 'POST', ':path': path, ...headers });
      } catch (err) {
        this.retire(slot);
        settle(() => reject(new SessionLostError(`HTTP/2 session unusable: ${(err as Error).message}`)));
        return;
      }
      let status = 0;
      let resHeaders: http2.IncomingHttpHeaders = {};
      let data = '';
      let timedOut = false;
      stream.setEncoding('utf8');
      stream.on('response', (h) => {
        status = Number(h[':status']);
        resHeaders = h;
      });
      stream.on('data', (chunk: string) => (data += chunk));
      // A connection dropped mid-stream also ends the stream, without a response: 'close' handles that.
      stream.on('end', () => {
        if (status > 0) settle(() => resolve({ status, headers: resHeaders, body: data }));
      });
      stream.on('error', () => {});
      stream.setTimeout(this.timeoutMs, () => {
        timedOut = true;
        stream.close(NGHTTP2_CANCEL);
      });
      stream.on('close', () => {
        if (settled) return;
        if (timedOut) return settle(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)));
        const sessionGone = !slot.usable || slot.session.closed || slot.session.destroyed;
        if (sessionGone || stream.rstCode === NGHTTP2_REFUSED_STREAM) {
          this.retire(slot);
          return settle(() => reject(new SessionLostError(`the HTTP/2 session went away before the answer (stream reset ${stream.rstCode})`)));
        }
        settle(() => reject(new Error(`the stream was reset (code ${stream.rstCode})`)));
      });
      stream.end(body);
    });
  }
}

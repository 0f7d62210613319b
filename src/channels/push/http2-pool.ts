// A long-lived pool of HTTP/2 sessions to one origin (the FCM endpoint of one credential).
// At most `maxStreamsPerSession` streams are open on a session at once (FCM: about 100; more gave
// GOAWAY); beyond that another session is opened. Sessions are reused across sends. A session
// that receives GOAWAY, errs or closes is retired (no new streams on it) and its streams that the
// server did not answer are retried once on a fresh session.
//
// The origin is the operator's (HERALD_FCM_ENDPOINT), yet every request is bounded like a call to
// a tenant's destination: a total deadline over both attempts (an idle timeout never trips on an
// answer dripped a byte at a time) and a cap on the answer's size; a request that fails rejects
// with an OutboundFailure naming the class only.
import http2 from 'node:http2';
import { OutboundFailure } from '../../net/bounded-request.js';

export interface Http2Response {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
}

/** The session carrying a request went away (GOAWAY, connection dropped) before the answer. */
class SessionLostError extends Error {}

export interface Http2PoolOptions {
  maxStreamsPerSession?: number;
  /** The total deadline of one request, its retry on a fresh session included (default 10 s). */
  deadlineMs?: number;
  /** The largest answer body read; past it the stream is cancelled (default 64 KiB: FCM answers are small). */
  maxAnswerBytes?: number;
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
  private readonly deadlineMs: number;
  private readonly maxAnswerBytes: number;
  /** Sessions opened since the pool was made (for tests and diagnostics). */
  sessionsOpened = 0;

  constructor(
    readonly origin: string,
    private readonly opts: Http2PoolOptions = {},
  ) {
    this.maxStreams = opts.maxStreamsPerSession ?? 100;
    this.deadlineMs = opts.deadlineMs ?? 10_000;
    this.maxAnswerBytes = opts.maxAnswerBytes ?? 64 * 1024;
  }

  /** Sessions currently open and taking new streams. */
  get liveSessions(): number {
    return this.slots.length;
  }

  /**
   * Sends one request; a request whose session went away is sent once more on a fresh session,
   * within the same deadline. Rejects with an OutboundFailure.
   */
  async request(path: string, headers: http2.OutgoingHttpHeaders, body: string): Promise<Http2Response> {
    const deadline = Date.now() + this.deadlineMs;
    try {
      try {
        return await this.attempt(path, headers, body, deadline);
      } catch (err) {
        if (!(err instanceof SessionLostError) || this.closed) throw err;
        return await this.attempt(path, headers, body, deadline);
      }
    } catch (err) {
      throw err instanceof OutboundFailure ? err : new OutboundFailure('unreachable', err);
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

  private attempt(path: string, headers: http2.OutgoingHttpHeaders, body: string, deadline: number): Promise<Http2Response> {
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
      const chunks: Buffer[] = [];
      let size = 0;
      let failure: OutboundFailure | undefined;
      const cancel = (f: OutboundFailure) => {
        failure ??= f;
        stream.close(NGHTTP2_CANCEL);
      };
      const timer = setTimeout(() => cancel(new OutboundFailure('timed_out')), Math.max(0, deadline - Date.now()));
      stream.on('response', (h) => {
        status = Number(h[':status']);
        resHeaders = h;
      });
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > this.maxAnswerBytes) return cancel(new OutboundFailure('too_large'));
        chunks.push(chunk);
      });
      // A connection dropped mid-stream also ends the stream, without a response: 'close' handles that.
      stream.on('end', () => {
        if (status > 0 && !failure) settle(() => resolve({ status, headers: resHeaders, body: Buffer.concat(chunks).toString('utf8') }));
      });
      stream.on('error', () => {});
      stream.on('close', () => {
        clearTimeout(timer);
        if (settled) return;
        if (failure) return settle(() => reject(failure));
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

// An integrator's webhook receiver, run by the test: a real HTTP server on 127.0.0.1 that checks
// every delivery with the `standardwebhooks` package (as a receiver would) against the secrets
// it is told, records it, and answers as the test says: 2xx, another status, never (hang), or a
// byte every few seconds (drip). It can be stopped and started again on the same port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export type Answer = number | 'hang' | 'drip';

export interface Delivery {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The parsed body, verified with one of the secrets; null when no secret verified it. */
  event: { type: string; timestamp: string; data: Record<string, unknown> } | null;
  /** The secrets (in the order given) whose verification passed. */
  verifiedBy: string[];
  at: number;
}

export class Receiver {
  readonly deliveries: Delivery[] = [];
  /** Secrets a delivery is checked against. */
  secrets: string[] = [];
  /** What the nth request (0-based) is answered. */
  answer: (n: number, d: Delivery) => Answer = () => 204;
  private server: http.Server | undefined;
  private readonly sockets = new Set<import('node:net').Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  async start(port = this.port): Promise<void> {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const h = (n: string) => String(req.headers[n] ?? '');
        const headers = { 'webhook-id': h('webhook-id'), 'webhook-timestamp': h('webhook-timestamp'), 'webhook-signature': h('webhook-signature') };
        const verifiedBy: string[] = [];
        let event: Delivery['event'] = null;
        for (const secret of this.secrets) {
          try {
            event = new Webhook(secret).verify(body, headers) as Delivery['event'];
            verifiedBy.push(secret);
          } catch {
            // not signed with this one
          }
        }
        const d: Delivery = { id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signature: headers['webhook-signature'], body, event, verifiedBy, at: Date.now() };
        const n = this.deliveries.length;
        this.deliveries.push(d);
        const a = this.answer(n, d);
        if (a === 'hang') return;
        if (a === 'drip') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          const timer = setInterval(() => res.write('.'), 5_000);
          this.timers.add(timer);
          res.on('close', () => {
            clearInterval(timer);
            this.timers.delete(timer);
          });
          return;
        }
        res.writeHead(a).end();
      });
    });
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  /** Stops listening and drops every connection (so Herald sees it gone at once). */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers.clear();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }

  /** The verified deliveries of one event type. */
  of(type: string): Delivery[] {
    return this.deliveries.filter((d) => d.event?.type === type);
  }

  /** Waits until `pred` holds of the deliveries, or `ms` pass; answers whether it held. */
  async until(pred: (ds: Delivery[]) => boolean, ms = 10_000): Promise<boolean> {
    const end = Date.now() + ms;
    while (!pred(this.deliveries)) {
      if (Date.now() > end) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
    return true;
  }
}

export async function receiver(t: { teardown(fn: () => unknown): void }): Promise<Receiver> {
  const r = new Receiver();
  await r.start(0);
  t.teardown(() => r.stop());
  return r;
}

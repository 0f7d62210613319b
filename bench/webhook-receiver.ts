// The webhooks scenario's receiver (bench/webhooks.ts), in a process of its own: an HTTP server
// on 127.0.0.1 that answers every POST 204 once its body is read, and counts what it received:
// requests, distinct `webhook-id`s, the first and last arrival, connections open at the peak.
// It keeps the first SAMPLE requests (headers and body) for the floor to send again. Sends
// `ready` with its URL, then answers `stats`, `sample` and `reset` over IPC.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const SAMPLE = 200;

interface ReceiverStats {
  type: 'stats';
  requests: number;
  ids: number;
  first: number | null;
  last: number | null;
  max_connections: number;
}
interface ReceiverSample {
  type: 'sample';
  requests: { headers: Record<string, string>; body: string }[];
}
export type FromReceiver = { type: 'ready'; url: string } | ReceiverStats | ReceiverSample | { type: 'reset' };

let requests = 0;
let connections = 0;
let maxConnections = 0;
let first: number | null = null;
let last: number | null = null;
const ids = new Set<string>();
const sample: ReceiverSample['requests'] = [];

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    requests++;
    const now = Date.now();
    first ??= now;
    last = now;
    const id = req.headers['webhook-id'];
    if (typeof id === 'string') ids.add(id);
    if (sample.length < SAMPLE) {
      const headers: Record<string, string> = {};
      for (const h of ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) headers[h] = String(req.headers[h] ?? '');
      sample.push({ headers, body: Buffer.concat(chunks).toString('utf8') });
    }
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.on('connection', (socket) => {
  connections++;
  maxConnections = Math.max(maxConnections, connections);
  socket.on('close', () => connections--);
});

server.listen(0, '127.0.0.1', () => {
  const send = (m: FromReceiver) => process.send!(m);
  process.on('message', (m: { type: string }) => {
    if (m.type === 'stats') send({ type: 'stats', requests, ids: ids.size, first, last, max_connections: maxConnections });
    else if (m.type === 'sample') send({ type: 'sample', requests: sample });
    else if (m.type === 'reset') {
      requests = 0;
      maxConnections = connections;
      first = last = null;
      ids.clear();
      send({ type: 'reset' });
    }
  });
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
});

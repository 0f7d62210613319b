// The floor: a bare uWS endpoint that reads the body, parses it as JSON and answers 201.
// Nothing Herald does per request can be cheaper than this, so every bench run reports
// Herald's figures as a ratio to it. Runs as its own child process (bench/run.ts forks it);
// prints `floor listening on <port>` and exits on SIGTERM, SIGINT or when its parent goes.
import { loadNativeUws, type HttpResponse } from '../src/http/uws.js';

const uws = loadNativeUws();
const decoder = new TextDecoder();
const CREATED = JSON.stringify({ success: true, data: { status: 'processed' } });
let parsed = 0;
let malformed = 0;

function answer(res: HttpResponse, status: string, body: string): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('Content-Type', 'application/json').end(body);
  });
}

const app = uws.App();
app.any('/*', (res) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const chunks: Uint8Array[] = [];
  let total = 0;
  res.onData((chunk, isLast) => {
    // uWS reuses the chunk's memory after this callback: copy it, as Herald's front does.
    chunks.push(new Uint8Array(chunk.slice(0)));
    total += chunk.byteLength;
    if (!isLast || aborted) return;
    let body: Uint8Array;
    if (chunks.length === 1) body = chunks[0]!;
    else {
      body = new Uint8Array(total);
      let at = 0;
      for (const c of chunks) {
        body.set(c, at);
        at += c.byteLength;
      }
    }
    if (total > 0) {
      try {
        JSON.parse(decoder.decode(body));
        parsed++;
      } catch {
        malformed++;
        return answer(res, '400 Bad Request', '{"success":false}');
      }
    }
    answer(res, '201 Created', CREATED);
  });
});

const host = '127.0.0.1';
app.listen(host, Number(process.env.FLOOR_PORT ?? 0), (socket) => {
  if (!socket) {
    process.stderr.write('floor: cannot listen\n');
    process.exit(1);
  }
  const port = uws.us_socket_local_port(socket);
  process.stdout.write(`floor listening on http://${host}:${port}\n`);
  const stop = () => {
    uws.us_listen_socket_close(socket);
    process.stderr.write(`floor: ${parsed} bodies parsed, ${malformed} malformed\n`);
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // Forked with an IPC channel: when the parent goes away, so does the floor.
  process.once('disconnect', stop);
});

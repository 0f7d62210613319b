// GET /metrics (docs/operations.md): the Prometheus text of the front and every actor, on the main
// port (HERALD_METRICS=true) or on a listener of its own (HERALD_METRICS_PORT), which need not
// be exposed where the API is.
import type { HttpResponse, TemplatedApp } from './uws.js';
import { write } from './write-reply.js';
import { errorReply } from '../handlers/reply.js';
import { METRICS_CONTENT_TYPE } from '../metrics/scrape.js';
import { logger } from '../logger.js';

/** Serves `GET /metrics` on `app` with the text `scrape` gathers; `only`: the app serves nothing else (404). */
export function serveMetrics(app: TemplatedApp, scrape: () => Promise<string>, only: boolean): void {
  app.get('/metrics', (res: HttpResponse) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    scrape().then(
      (text) => {
        if (!aborted) res.cork(() => res.writeStatus('200 OK').writeHeader('Content-Type', METRICS_CONTENT_TYPE).end(text));
      },
      (err: unknown) => {
        logger.error('metrics scrape failed', { err });
        if (!aborted) res.cork(() => write(res, errorReply('key', 'INTERNAL_ERROR', 'Metrics scrape failed'), false));
      },
    );
  });
  if (only) app.any('/*', (res: HttpResponse) => write(res, errorReply('key', 'NOT_FOUND', 'Only GET /metrics is served on HERALD_METRICS_PORT'), false));
}

// Request bodies streamed to a file rather than held (routes.ts `upload`: a list's CSV import).
// The front writes each chunk as it arrives, pausing the socket while the disk is behind, so a
// body of hundreds of megabytes costs a chunk of memory, never its size. The file is handed to
// the actor by path; the front removes it unless the actor answered 202 and so took it over.
import { createWriteStream, mkdirSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { HttpResponse } from './uws.js';
import { logger } from '../logger.js';

/** Where uploads are staged: `imports/` of the data dir (made on first use). */
export function uploadDir(dataDir: string): string {
  const dir = join(dataDir, 'imports');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

export type Upload = { file: string } | { tooLarge: true } | { failed: true };

/**
 * Streams the body into a new file of `dir`, at most `limit` bytes; `done` once it is on disk
 * (its writes flushed to the kernel) or refused. `aborted` tells whether the client has gone, at
 * which point the file is removed and `done` never called.
 */
export function streamBodyToFile(res: HttpResponse, dir: string, limit: number, aborted: () => boolean, admitted: Promise<boolean>, done: (u: Upload) => void): { cancel(): void } {
  const file = join(dir, `${randomUUID()}.csv`);
  // Nothing is written before the request is authenticated (`admitted`): the socket is paused
  // meanwhile, and the little uWS had already read waits in `held`. Refused, nothing is written
  // and `done` is never called: the caller answers.
  let held: Buffer[] | null = [];
  const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
  let total = 0;
  let over = false;
  let failed = false;
  let paused = true;
  let last = false;
  res.pause();
  const write = (chunk: Buffer, isLast: boolean) => {
    if (!out.write(chunk) && !isLast) {
      paused = true;
      res.pause();
    }
    if (!isLast) return;
    out.end(() => {
      if (failed) return;
      if (aborted()) return drop();
      done({ file });
    });
  };
  void admitted.then((ok) => {
    if (over || failed) return;
    if (!ok || aborted()) {
      over = true;
      held = null;
      out.destroy();
      // Reading again, so that the refusal can be written (the rest of the body is ignored).
      if (!aborted()) res.resume();
      return drop();
    }
    const early = held ?? [];
    held = null;
    early.forEach((c, i) => write(c, last && i === early.length - 1));
    if (!last && out.writableNeedDrain === false) {
      paused = false;
      res.resume();
    } else if (!last) paused = true;
  });
  const drop = () => void unlink(file).catch(() => undefined);
  out.on('error', (err) => {
    if (failed) return;
    failed = true;
    logger.error('an upload could not be staged', { file, err });
    if (paused) res.resume();
    out.destroy();
    drop();
    if (!aborted()) done({ failed: true });
  });
  out.on('drain', () => {
    if (!paused || aborted()) return;
    paused = false;
    res.resume();
  });
  res.onData((chunk, isLast) => {
    if (over || failed) return;
    if (aborted()) {
      over = true;
      out.destroy();
      return drop();
    }
    total += chunk.byteLength;
    if (total > limit) {
      over = true;
      out.destroy();
      drop();
      return done({ tooLarge: true });
    }
    // uWS reuses the chunk's memory after this callback: copy it.
    const copy = Buffer.from(chunk.slice(0));
    if (held) {
      held.push(copy);
      last = isLast;
      return;
    }
    write(copy, isLast);
  });
  // The client went away mid-body: no further chunk comes to notice it.
  return {
    cancel() {
      if (over || failed) return;
      over = true;
      out.destroy();
      drop();
    },
  };
}

/** Removes a staged upload the actor did not take over. */
export function dropUpload(file: string): void {
  void unlink(file).catch(() => undefined);
}

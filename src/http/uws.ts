// Loads uWebSockets.js from @trufflesuite/uws-js-unofficial. The package silently falls back
// to a slow Node implementation when its native binary does not load; Herald loads the
// binary itself and refuses to start without it. It also keeps uWS from naming itself in every
// answer (a `uWebSockets: 20` header tells a prober what is behind Herald, and which version).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Uws from '@trufflesuite/uws-js-unofficial';

export type { HttpRequest, HttpResponse, TemplatedApp, us_listen_socket } from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);

export function loadNativeUws(): typeof Uws {
  const pkgDir = dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'));
  const binary = join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  let uws: typeof Uws;
  try {
    uws = require(binary) as typeof Uws;
  } catch (err) {
    throw new Error(
      `uWebSockets.js native binary did not load (${binary}): ${(err as Error).message}. ` +
        `Herald needs Node.js 20 on Linux/macOS x64 or arm64 (the binaries this package ships); it will not run on the slow fallback.`,
      { cause: err },
    );
  }
  // uWS's one switch for this, `silent`: its event loop (this thread's) stops writing the header.
  uws._cfg('silent');
  return uws;
}

// Request bodies sent with a Content-Encoding (the Segment-compatible source only: RudderStack's
// library gzips its batches). Decoded with a bound on the output, so a small compressed body
// cannot inflate past the route's limit in memory.
import { constants } from 'node:buffer';
import { gunzipSync, inflateSync } from 'node:zlib';

export type Decoded = { ok: true; body: Uint8Array } | { ok: false; why: 'too-large' | 'malformed' | 'unsupported'; message: string };

/** `body` decoded by the codings `encodings` lists (the Content-Encoding values sent), at most `limit` bytes. */
export function decodeBody(body: Uint8Array, encodings: readonly string[] | undefined, limit: number): Decoded {
  const codings = (encodings ?? []).flatMap((v) => v.split(',')).map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity');
  let out = body;
  // Applied in the order they were listed, so decoded in reverse.
  for (const coding of codings.reverse()) {
    const decode = coding === 'gzip' || coding === 'x-gzip' ? gunzipSync : coding === 'deflate' ? inflateSync : null;
    if (!decode) return { ok: false, why: 'unsupported', message: `Content-Encoding ${coding} is not accepted (gzip or deflate)` };
    try {
      out = decode(out, { maxOutputLength: Math.min(limit, constants.MAX_LENGTH) });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return { ok: false, why: 'too-large', message: `Request body exceeds ${limit} bytes once decoded` };
      return { ok: false, why: 'malformed', message: `The body is not valid ${coding} data` };
    }
  }
  return { ok: true, body: out };
}

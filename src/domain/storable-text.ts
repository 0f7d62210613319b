// PostgreSQL text and jsonb (PGlite too) cannot hold U+0000, and jsonb refuses unpaired UTF-16
// surrogates. JSON can carry both (as \u escapes), so a body holding one is refused up front:
// let through, it would fail its whole group commit, or poison the sink that reads it.

/** Cheap test on the raw body: only escapes can produce either character. */
const SUSPECT = /\\u(?:0000|d[89a-f])/i;

/** The path of the first string (value or key) the store cannot hold, or null. */
export function unstorableText(raw: string, body: unknown): string | null {
  return SUSPECT.test(raw) ? find(body, 'body') : null;
}

// eslint-disable-next-line no-control-regex -- U+0000 is the character looked for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const isUnstorable = (s: string) => UNSTORABLE.test(s);

function find(v: unknown, path: string): string | null {
  if (typeof v === 'string') return isUnstorable(v) ? path : null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = find(v[i], `${path}[${i}]`);
      if (p) return p;
    }
    return null;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (isUnstorable(k)) return `${path}.${k}`;
      const p = find(x, `${path}.${k}`);
      if (p) return p;
    }
  }
  return null;
}

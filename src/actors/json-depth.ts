// How deeply a request body may nest, checked on the raw text before JSON.parse runs: a body
// of 20,000 nested arrays is 40 KB, parses to a value every recursive step after it (schema
// validation, the store's jsonb, serialisation) may choke on, and must never get that far.

/** Arrays and objects inside each other, the body itself being level 1 (README, Request bodies). */
export const MAX_BODY_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * True when `raw`, read as JSON, opens more than `max` arrays or objects inside each other.
 * Brackets inside strings do not count. One pass, no allocation; malformed text is counted as
 * far as it goes (JSON.parse refuses it afterwards).
 */
export function nestsDeeperThan(raw: string, max: number = MAX_BODY_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

// PGlite hands `timestamptz` text ('0001-01-01 00:00:00+00') to `new Date`, whose fallback
// parser reads years below 100 as 19xx/20xx. Rewritten as ISO 8601 it parses exactly.
const PG_TIMESTAMPTZ = /^(\d{4})-(\d\d)-(\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::(\d\d))?$/;

export function parseTimestamptz(text: string): Date {
  const m = PG_TIMESTAMPTZ.exec(text);
  // Anything else (BC dates, infinity, seconds in the offset) is left to Date, as before.
  if (!m) return new Date(text);
  return new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}${m[5]}:${m[6] ?? '00'}`);
}

export const TIMESTAMPTZ_OID = 1184;

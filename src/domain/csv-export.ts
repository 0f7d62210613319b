// Writing CSV (RFC 4180) for the exports Herald answers (docs/campaign-analytics.md): a field
// holding a comma, a quote or a line break is quoted, its quotes doubled; a text field starting
// with =, +, -, @, a tab or a carriage return is prefixed with ' so a spreadsheet opening the
// file shows it rather than running it as a formula (CSV injection).

type CsvValue = string | number | boolean | null;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

function field(v: CsvValue): string {
  if (v === null) return '';
  if (typeof v !== 'string') return String(v);
  const safe = FORMULA_START.test(v) ? `'${v}` : v;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One record, CRLF-terminated. */
export const csvRow = (values: readonly CsvValue[]): string => `${values.map(field).join(',')}\r\n`;

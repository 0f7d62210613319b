// What a CSV import reads (docs/audiences.md): a header naming `external_id` or `email` (or
// both) and traits, then one person per row. Pure rules; the runner (audiences/imports.ts)
// streams the file and writes what these return.
import { checkTraits } from './identify.js';
import { traitProblems } from './traits.js';
import { DomainError } from './errors.js';

/** The person a row names and what it sets. `email_key` names them by address when the row has no external_id. */
export interface ImportRow {
  external_id: string | null;
  email_key: string | null;
  /** Dedicated fields the row sets (blank cells set nothing). */
  f: Record<string, string>;
  traits: Record<string, string>;
}

const ID = 'external_id';
const MAX_ID = 255;

/** The header's column names, or why the file cannot be imported. */
export function importColumns(header: readonly string[]): string[] | string {
  const columns = header.map((c) => c.trim());
  if (!columns.includes(ID) && !columns.includes('email')) return `the header row must name an external_id or an email column (it names ${columns.slice(0, 10).join(', ') || 'nothing'})`;
  const seen = new Set<string>();
  for (const c of columns) {
    if (seen.has(c)) return `the header names the column ${c} twice`;
    seen.add(c);
  }
  const traitColumns = Object.fromEntries(columns.filter((c) => c !== ID).map((c) => [c, '']));
  const problems = traitProblems(traitColumns);
  if (problems.length > 0) return `the header's column names must be trait keys: ${problems.map((p) => `${p.field.replace(/^traits\./, '')} ${p.message}`).join('; ')}`;
  return columns;
}

/** The row's person, or why the row is refused. */
export function importRow(columns: readonly string[], values: readonly string[]): ImportRow | string {
  if (values.length !== columns.length) return `has ${values.length} fields; the header has ${columns.length}`;
  let externalId: string | null = null;
  const traits: Record<string, string> = {};
  columns.forEach((c, i) => {
    const v = values[i]!;
    if (v === '') return;
    if (c === ID) externalId = v;
    else traits[c] = v;
  });
  if (externalId !== null && (externalId as string).length > MAX_ID) return `external_id is longer than ${MAX_ID} characters`;
  const email = traits.email?.trim();
  if (externalId === null && !email) return 'has neither an external_id nor an email';
  let fields: Record<string, string | null>;
  try {
    fields = checkTraits(traits);
  } catch (err) {
    if (err instanceof DomainError) return err.message;
    throw err;
  }
  const f: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== null) f[k] = v;
  return { external_id: externalId, email_key: externalId === null ? email!.toLowerCase() : null, f, traits };
}

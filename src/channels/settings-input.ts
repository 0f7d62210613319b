// What every channel's settings route shares (docs/channels.md): a PUT is partial, merged over
// what is stored, and what it cannot be completed from is refused naming the fields.
import { InvalidInput, type FieldError } from '../domain/errors.js';
import type { StoredSettings } from '../store/channel-settings.js';

/** `null` values removed: what a partial update leaves of `sent` over `stored`. */
export function merged<T extends object>(stored: T | undefined, sent: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ...stored, ...sent };
  for (const [k, v] of Object.entries(out)) if (v === null || v === undefined) delete out[k];
  return out;
}

export function refuse(problems: FieldError[]): never {
  throw new InvalidInput(`Request body is invalid: ${problems.map((p) => `${p.field} ${p.message}`).join('; ')}`, problems);
}

export const missing = (prefix: string, o: Record<string, unknown>, fields: readonly string[], why: string): FieldError[] =>
  fields.filter((f) => o[f] === undefined).map((f) => ({ field: `${prefix}.${f}`, message: `is required: ${why}` }));

/** Why `sent` cannot be completed from what is stored. */
export function why(stored: StoredSettings<unknown> | null): string {
  return stored && !stored.readable ? 'the stored settings cannot be opened, so every field must be sent' : 'no value is stored to keep it from';
}

/** How GET /channels shows stored settings: not configured, configured but unreadable, or `view` of them. */
export function describeStored<T>(stored: StoredSettings<T> | null, view: (s: T) => Record<string, unknown>): Record<string, unknown> {
  if (!stored) return { configured: false };
  if (!stored.readable) return { configured: true, readable: false };
  return { configured: true, readable: true, ...view(stored.settings) };
}

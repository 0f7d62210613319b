// The trait rules (README, Request bodies), in one place: every write path
// (identify, people create/upsert/update/batch) validates with traitProblems().
import type { FieldError } from './errors.js';

const TRAIT_KEY = /^[a-zA-Z][a-zA-Z0-9_]*$/;
const RESERVED_TRAIT_KEYS = new Set(['id', 'workspace_id', 'user_id', 'anonymous_id', 'created_at', 'updated_at']);
const LIMITS = { keyLength: 255, topLevelKeys: 1000, stringLength: 10_000, arrayLength: 1000, objectProperties: 100, depth: 10 } as const;

/** Trait keys that also set the person's dedicated field of the same name. */
export const DEDICATED_FIELDS = ['email', 'phone', 'first_name', 'last_name', 'timezone', 'locale'] as const;


export function traitProblems(traits: Record<string, unknown>): FieldError[] {
  const problems: FieldError[] = [];
  const keys = Object.keys(traits);
  if (keys.length > LIMITS.topLevelKeys) problems.push({ field: 'traits', message: `has ${keys.length} keys; at most ${LIMITS.topLevelKeys}` });
  for (const key of keys) {
    const field = `traits.${key}`;
    if (key.length > LIMITS.keyLength) problems.push({ field, message: `key is longer than ${LIMITS.keyLength} characters` });
    else if (!TRAIT_KEY.test(key)) problems.push({ field, message: 'key must start with a letter and hold only letters, digits and underscores' });
    else if (RESERVED_TRAIT_KEYS.has(key)) problems.push({ field, message: 'is a reserved key' });
    checkValue(traits[key], field, 0, problems);
    if (problems.length >= 20) break; // enough to act on; bounded work on hostile input
  }
  return problems;
}

function checkValue(v: unknown, field: string, depth: number, problems: FieldError[]): void {
  if (typeof v === 'string') {
    if (v.length > LIMITS.stringLength) problems.push({ field, message: `string is longer than ${LIMITS.stringLength} characters` });
    return;
  }
  if (v === null || typeof v !== 'object') return;
  // An object or array directly under a trait key is nesting level 1.
  if (depth + 1 > LIMITS.depth) {
    problems.push({ field, message: `nesting is deeper than ${LIMITS.depth} levels` });
    return;
  }
  if (Array.isArray(v)) {
    if (v.length > LIMITS.arrayLength) return void problems.push({ field, message: `array has more than ${LIMITS.arrayLength} elements` });
    v.forEach((item, i) => checkValue(item, `${field}[${i}]`, depth + 1, problems));
    return;
  }
  const entries = Object.entries(v);
  if (entries.length > LIMITS.objectProperties) return void problems.push({ field, message: `object has more than ${LIMITS.objectProperties} properties` });
  for (const [k, item] of entries) checkValue(item, `${field}.${k}`, depth + 1, problems);
}

const FIELD_MAX: Record<(typeof DEDICATED_FIELDS)[number], number> = { email: 254, phone: 50, first_name: 255, last_name: 255, timezone: 255, locale: 255 };

/**
 * The dedicated person fields set by these traits (README, Request bodies): a string
 * sets the field, '' or null clears it, any other value leaves it alone.
 */
export function dedicatedFields(traits: Record<string, unknown>): { fields: Record<string, string | null>; problems: FieldError[] } {
  const fields: Record<string, string | null> = {};
  const problems: FieldError[] = [];
  for (const f of DEDICATED_FIELDS) {
    if (!(f in traits)) continue;
    const v = traits[f];
    if (v === null || v === '') fields[f] = null;
    else if (typeof v === 'string') {
      if (v.length > FIELD_MAX[f]) problems.push({ field: `traits.${f}`, message: `is longer than ${FIELD_MAX[f]} characters` });
      else fields[f] = v;
    }
  }
  return { fields, problems };
}

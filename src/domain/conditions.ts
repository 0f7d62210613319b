// Campaign conditions (docs/campaigns-runtime.md): `{field, operator, value}` over a triggering event's
// `parameters.*`, `traits.*`, `person.*`, and the performed_count_* operators over per-person
// event counts. This is the in-memory reading (event trigger filters); store/audience.ts
// compiles the same rules to SQL for audiences, and the two must agree on every case:
//   - a path walks objects, and arrays by index (`traits.tags.0`), as PostgreSQL's `#>` does;
//     a missing value and JSON null are the same;
//   - eq / neq / in / not_in compare JSON scalars of the same type (the string "5" is not 5);
//     `eq null` holds for a missing value; neq, not_in and not_contains are the negations
//     (so they hold for a missing value);
//   - gt / gte / lt / lte: a number value compares with numbers, a string value with strings
//     (by code point, so ISO 8601 UTC dates compare as times); anything else does not hold;
//   - contains: a string holds the value's text, or an array holds the scalar;
//     starts_with / ends_with: strings only; exists: present and not null;
//   - performed_count_*: the person's count of the event named by `field` (0 when never).
// Pure: the caller loads the subject.

export interface Condition {
  field: string;
  operator: string;
  value?: unknown;
}

export interface AudienceConfig {
  /** The members of this segment of the workspace (then no filters). */
  segment_id?: string;
  filters?: Condition[];
  match?: 'all' | 'any';
}

export interface ConditionSubject {
  /** The triggering event's parameters; absent where there is no event (a `parameters.*` condition then reads nothing). */
  parameters?: Record<string, unknown>;
  traits: Record<string, unknown>;
  person: Record<string, unknown>;
  /** The person's event counts by event name, for performed_count_*; a name absent counts 0. */
  counts?: Readonly<Record<string, number>>;
}

/** Whether `s` is a UUID's text (a segment or list an audience names; domain imports no id module). */
export const isUuidText = (s: string): boolean => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

/** The person fields a condition may read (`person.<field>`). */
export const PERSON_FIELDS: readonly string[] = ['email', 'phone', 'status', 'timezone', 'locale'];

const VALUE_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'not_contains', 'starts_with', 'ends_with', 'in', 'not_in', 'exists', 'not_exists'] as const;
export const COUNT_OPERATORS = ['performed_count_gte', 'performed_count_lte', 'performed_count_eq', 'performed_count_between'] as const;
/** Condition operators of trigger `filters` and `audience_config.filters` (docs/campaigns-runtime.md). */
export const CONDITION_OPERATORS = [...VALUE_OPERATORS, ...COUNT_OPERATORS] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** The value at a condition's field, or undefined when missing (JSON null included). */
function valueAt(field: string, subject: ConditionSubject): unknown {
  const dot = field.indexOf('.');
  if (dot < 0) return undefined;
  const root = field.slice(0, dot);
  const path = field.slice(dot + 1).split('.');
  let v: unknown = root === 'traits' ? subject.traits : root === 'parameters' ? subject.parameters : root === 'person' ? subject.person : undefined;
  if (root === 'person' && !(path.length === 1 && PERSON_FIELDS.includes(path[0]!))) return undefined;
  for (const key of path) {
    if (Array.isArray(v) && /^-?\d+$/.test(key)) {
      const i = Number(key);
      v = v[i < 0 ? v.length + i : i];
    } else if (isObject(v) && Object.hasOwn(v, key)) {
      v = v[key];
    } else {
      return undefined;
    }
  }
  return v === null ? undefined : v;
}

/** Strings by code point (PostgreSQL's "C" collation over UTF-8), not by UTF-16 unit. */
export function compareCodePoints(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

function ordered(v: unknown, value: unknown): number | undefined {
  if (typeof value === 'number') return typeof v === 'number' ? v - value : undefined;
  if (typeof value === 'string') return typeof v === 'string' ? compareCodePoints(v, value) : undefined;
  return undefined;
}

function contains(v: unknown, value: unknown): boolean {
  if (!isScalar(value)) return false;
  if (typeof v === 'string') return v.includes(String(value));
  if (Array.isArray(v)) return v.some((x) => x === value);
  return false;
}

const isIn = (v: unknown, value: unknown): boolean => isScalar(v) && Array.isArray(value) && value.some((x) => x === v);

function countHolds(c: Condition, subject: ConditionSubject): boolean {
  const n = subject.counts?.[c.field] ?? 0;
  const bounds = isObject(c.value) ? c.value : {};
  const count = typeof bounds.count === 'number' ? bounds.count : NaN;
  switch (c.operator) {
    case 'performed_count_gte':
      return n >= count;
    case 'performed_count_lte':
      return n <= count;
    case 'performed_count_eq':
      return n === count;
    default: {
      const max = typeof bounds.count_max === 'number' ? bounds.count_max : NaN;
      return n >= count && n <= max;
    }
  }
}

/** Whether the condition holds for the subject; an unknown operator never holds. */
export function conditionHolds(c: Condition, subject: ConditionSubject): boolean {
  if ((COUNT_OPERATORS as readonly string[]).includes(c.operator)) return countHolds(c, subject);
  const v = valueAt(c.field, subject);
  const value = c.value;
  switch (c.operator) {
    case 'eq':
      return value === null || value === undefined ? v === undefined : v === value;
    case 'neq':
      return !(value === null || value === undefined ? v === undefined : v === value);
    case 'gt':
      return (ordered(v, value) ?? NaN) > 0;
    case 'gte':
      return (ordered(v, value) ?? NaN) >= 0;
    case 'lt':
      return (ordered(v, value) ?? NaN) < 0;
    case 'lte':
      return (ordered(v, value) ?? NaN) <= 0;
    case 'contains':
      return contains(v, value);
    case 'not_contains':
      return !contains(v, value);
    case 'starts_with':
      return typeof v === 'string' && typeof value === 'string' && v.startsWith(value);
    case 'ends_with':
      return typeof v === 'string' && typeof value === 'string' && v.endsWith(value);
    case 'in':
      return isIn(v, value);
    case 'not_in':
      return !isIn(v, value);
    case 'exists':
      return v !== undefined;
    case 'not_exists':
      return v === undefined;
    default:
      return false;
  }
}

/** Whether a list of conditions holds: every one (`all`, the default) or at least one (`any`); no conditions hold for everyone. */
export function conditionsHold(conditions: readonly Condition[] | undefined, match: 'all' | 'any' | undefined, subject: ConditionSubject): boolean {
  if (!conditions || conditions.length === 0) return true;
  return match === 'any' ? conditions.some((c) => conditionHolds(c, subject)) : conditions.every((c) => conditionHolds(c, subject));
}

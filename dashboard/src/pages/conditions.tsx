// Conditions (docs/campaigns-runtime.md) as rows of field, operator and value: an event trigger's filters
// and an audience. Values are typed as text and read as the API compares them (numbers and
// true/false as such, a quoted value as text); the count operators take an event name and
// counts. Each row shows the API's error for its field, operator or value.
import { fieldError } from '../ui';

const VALUE_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'contains', 'not_contains', 'starts_with', 'ends_with', 'in', 'not_in', 'exists', 'not_exists'] as const;
const COUNT_OPERATORS = ['performed_count_gte', 'performed_count_lte', 'performed_count_eq', 'performed_count_between'] as const;
const OPERATOR_LABEL: Record<string, string> = {
  eq: 'equals', neq: 'does not equal', gt: 'is greater than', gte: 'is at least', lt: 'is less than', lte: 'is at most',
  contains: 'contains', not_contains: 'does not contain', starts_with: 'starts with', ends_with: 'ends with',
  in: 'is one of', not_in: 'is none of', exists: 'exists', not_exists: 'does not exist',
  performed_count_gte: 'performed at least', performed_count_lte: 'performed at most', performed_count_eq: 'performed exactly',
  performed_count_between: 'performed between',
};

/** A condition as edited: the value as typed (a list comma-separated), counts apart. */
export interface Cond {
  field: string;
  operator: string;
  text: string;
  count: string;
  countMax: string;
}
export type Condition = { field: string; operator: string; value?: unknown };

const isCount = (op: string) => (COUNT_OPERATORS as readonly string[]).includes(op);
const noValue = (op: string) => op === 'exists' || op === 'not_exists';

/** Text as the API compares it: `5` a number, `true` a boolean, `"5"` the text 5, else the text. */
function scalar(s: string): unknown {
  const t = s.trim();
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t === 'null') return null;
  if (/^".*"$/.test(t)) {
    try {
      return JSON.parse(t) as unknown;
    } catch {
      return t;
    }
  }
  return s;
}
const scalarText = (v: unknown) => (typeof v === 'string' ? (/^-?\d+(\.\d+)?$|^(true|false|null)$/.test(v.trim()) ? JSON.stringify(v) : v) : JSON.stringify(v));

export function toCondition(c: Cond): Condition {
  if (noValue(c.operator)) return { field: c.field.trim(), operator: c.operator };
  if (isCount(c.operator)) {
    const value: Record<string, number> = { count: Number(c.count) };
    if (c.operator === 'performed_count_between') value.count_max = Number(c.countMax);
    return { field: c.field.trim(), operator: c.operator, value };
  }
  if (c.operator === 'in' || c.operator === 'not_in') return { field: c.field.trim(), operator: c.operator, value: c.text.split(',').map((p) => scalar(p.trim())) };
  return { field: c.field.trim(), operator: c.operator, value: scalar(c.text) };
}

export function fromCondition(raw: unknown): Cond {
  const c = (raw ?? {}) as Condition;
  const v = c.value;
  const counts = (typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {}) as { count?: unknown; count_max?: unknown };
  return {
    field: typeof c.field === 'string' ? c.field : '',
    operator: typeof c.operator === 'string' ? c.operator : 'eq',
    text: Array.isArray(v) ? v.map(scalarText).join(', ') : v === undefined || isCount(String(c.operator)) ? '' : scalarText(v),
    count: counts.count === undefined ? '' : String(counts.count),
    countMax: counts.count_max === undefined ? '' : String(counts.count_max),
  };
}

const blankCond = (field = ''): Cond => ({ field, operator: 'eq', text: '', count: '1', countMax: '' });

/**
 * The rows of conditions at `at` (the API's field name, e.g. `audience_config.filters`), with
 * add and remove. `eventFields`: `parameters.*` can be read (an event trigger's filters).
 * `valuesOnly`: no count operators, and no line when empty (a segment group, whose event counts
 * and other conditions are rows of their own beside these).
 */
export function Conditions({ conds, set, at, fields, eventFields, label, valuesOnly = false }: {
  conds: Cond[];
  set: (c: Cond[]) => void;
  at: string;
  fields: Record<string, string>;
  eventFields: boolean;
  label: string;
  valuesOnly?: boolean;
}) {
  const change = (i: number, patch: Partial<Cond>) => set(conds.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  const countHint = valuesOnly ? '' : '; for a count, the event name';
  const fieldHint = `${eventFields ? 'parameters.<path> (the event), ' : ''}traits.<path>, person.email|phone|status|timezone|locale${countHint}`;
  const all = fieldError(fields, at);
  return (
    <div className="conditions">
      {all && <p className="error">{all}</p>}
      {conds.length === 0 && !valuesOnly && <p className="muted">No conditions.</p>}
      <ol className="plain">
        {conds.map((c, i) => {
          const here = `${at}.${i}`;
          const n = i + 1;
          const err = (k: string) => fields[`${here}.${k}`];
          const rowError = fields[here];
          return (
            <li key={i} className="inline cond">
              <div className="field">
                <label htmlFor={`${here}-field`}>{label} {n}: {isCount(c.operator) ? 'event name' : 'field'}</label>
                <input id={`${here}-field`} value={c.field} onChange={(e) => change(i, { field: e.target.value })} placeholder={isCount(c.operator) ? 'purchase' : eventFields ? 'parameters.plan' : 'traits.plan'}
                  aria-invalid={err('field') ? true : undefined} aria-describedby={`${here}-hint${err('field') ? ` ${here}-field-error` : ''}`} />
                {err('field') && <small id={`${here}-field-error`} className="error">{err('field')}</small>}
              </div>
              <div className="field">
                <label htmlFor={`${here}-op`}>{label} {n}: operator</label>
                <select id={`${here}-op`} value={c.operator} onChange={(e) => change(i, { operator: e.target.value })} aria-invalid={err('operator') ? true : undefined}>
                  <optgroup label="Compare a value">
                    {VALUE_OPERATORS.map((o) => <option key={o} value={o}>{OPERATOR_LABEL[o]}</option>)}
                  </optgroup>
                  {!valuesOnly && (
                    <optgroup label="Count of an event">
                      {COUNT_OPERATORS.map((o) => <option key={o} value={o}>{OPERATOR_LABEL[o]}</option>)}
                    </optgroup>
                  )}
                </select>
                {err('operator') && <small className="error">{err('operator')}</small>}
              </div>
              {isCount(c.operator) ? (
                <>
                  <div className="field">
                    <label htmlFor={`${here}-count`}>{label} {n}: {c.operator === 'performed_count_between' ? 'at least' : 'times'}</label>
                    <input id={`${here}-count`} type="number" min={0} step={1} value={c.count} onChange={(e) => change(i, { count: e.target.value })} aria-invalid={err('value') ? true : undefined} />
                  </div>
                  {c.operator === 'performed_count_between' && (
                    <div className="field">
                      <label htmlFor={`${here}-count-max`}>{label} {n}: at most</label>
                      <input id={`${here}-count-max`} type="number" min={0} step={1} value={c.countMax} onChange={(e) => change(i, { countMax: e.target.value })} />
                    </div>
                  )}
                </>
              ) : (
                !noValue(c.operator) && (
                  <div className="field">
                    <label htmlFor={`${here}-value`}>{label} {n}: value{c.operator === 'in' || c.operator === 'not_in' ? 's (comma-separated)' : ''}</label>
                    <input id={`${here}-value`} value={c.text} onChange={(e) => change(i, { text: e.target.value })} aria-invalid={err('value') ? true : undefined} />
                  </div>
                )
              )}
              <button type="button" className="danger" onClick={() => set(conds.filter((_, j) => j !== i))} aria-label={`Remove ${label.toLowerCase()} ${n}`}>Remove</button>
              <small id={`${here}-hint`} className="muted hint">{fieldHint}. Numbers and true/false are compared as such; quote a value to compare it as text ("5").</small>
              {err('value') && <small className="error">{err('value')}</small>}
              {rowError && <small className="error">{rowError}</small>}
            </li>
          );
        })}
      </ol>
      <button type="button" onClick={() => set([...conds, blankCond()])}>Add {label.toLowerCase()}</button>
    </div>
  );
}

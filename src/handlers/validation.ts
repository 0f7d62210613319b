// Request validation with ajv: schemas compiled once per thread. A failure becomes a
// DomainError, worded by the route's refusal rules (schemas/common.ts `SchemaRefusal`): a documented
// code such as BATCH_TOO_LARGE, or the generic schema failure naming each field.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { DomainError, InvalidInput, type FieldError } from '../domain/errors.js';
import { isTimeZone } from '../domain/send-policy.js';
import { parseTimestamp, TIMESTAMP_RULE } from '../domain/time.js';
import type { SchemaRefusal } from '../../schemas/common.js';
import type { Schema } from '../../schemas/common.js';

function ajv(coerceTypes: boolean): Ajv {
  const a = new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes });
  addFormats.default(a);
  a.addFormat('time-zone', isTimeZone);
  // The one definition of the timestamps Herald accepts (domain/time.ts): every request
  // schema's timestamp is `format: 'timestamp'` (schemas/common.ts `timestamp`).
  a.addFormat('timestamp', { type: 'string', validate: (s: string) => parseTimestamp(s) !== null });
  return a;
}

const bodies = ajv(false);
// Query strings and path segments arrive as text: coerce "10" to 10 where the schema asks for integers.
const strings = ajv(true);

export const compileBody = (schema: Schema): ValidateFunction => bodies.compile(schema);
export const compileStrings = (schema: Schema): ValidateFunction => strings.compile(schema);

/** Throws the DomainError for `value` failing `validate`; `what` names it ('body', 'query', 'path', 'entry'). */
export function check(validate: ValidateFunction, value: unknown, what: string, refusals: readonly SchemaRefusal[] = []): void {
  if (!validate(value)) throw schemaFailure(validate.errors ?? [], what, refusals);
}

function schemaFailure(errors: ErrorObject[], what: string, refusals: readonly SchemaRefusal[]): DomainError {
  const details: FieldError[] = [];
  for (const e of errors) {
    const rule = refusals.find((r) => e.instancePath.startsWith(r.at) && (r.keyword === undefined || r.keyword === e.keyword));
    const detail = fieldError(e, what, rule?.message);
    // A documented code answers in the route's code shape, naming the field.
    if (rule?.code) return new DomainError(rule.code, rule.message ?? `Invalid ${detail.field}: ${detail.message}`, [detail]);
    if (!details.some((d) => d.field === detail.field && d.message === detail.message)) details.push(detail);
  }
  const summary = details.slice(0, 5).map((d) => `${d.field} ${d.message}`).join('; ');
  return new InvalidInput(`Request ${what} is invalid: ${summary}`, details);
}

/** The field an ajv error is about (`root` when it is the value itself) and what is wrong with it. */
export function fieldError(e: ErrorObject, root: string, message?: string): FieldError {
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const p = e.params as { missingProperty?: string; additionalProperty?: string; allowedValues?: unknown[] };
  const named = e.keyword === 'required' ? p.missingProperty : e.keyword === 'additionalProperties' ? p.additionalProperty : '';
  const field = [path, named].filter(Boolean).join('.') || root;
  if (message) return { field, message };
  if (e.keyword === 'additionalProperties') return { field, message: 'is not a known field' };
  if (e.keyword === 'format' && (e.params as { format?: string }).format === 'timestamp') return { field, message: `must be ${TIMESTAMP_RULE}` };
  return { field, message: `${e.message ?? 'is invalid'}${e.keyword === 'enum' ? `: ${p.allowedValues!.join(', ')}` : ''}` };
}

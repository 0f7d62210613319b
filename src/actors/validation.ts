// Request validation with ajv: every route's body and query schema compiled once per thread.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { Route } from '../http/routes.js';
import type { FieldError } from '../http/reply.js';
import type { Schema } from '../../schemas/common.js';

export interface RouteValidators {
  body?: ValidateFunction;
  query?: ValidateFunction;
}

function ajv(coerceTypes: boolean): Ajv {
  const a = new Ajv({ allErrors: true, strict: false, useDefaults: true, coerceTypes });
  addFormats.default(a);
  return a;
}

const bodies = ajv(false);
// Query strings arrive as text: coerce "10" to 10 where the schema asks for integers.
const queries = ajv(true);

export const compileBody = (schema: Schema): ValidateFunction => bodies.compile(schema);

export function compileValidators(routes: readonly Route[]): Map<string, RouteValidators> {
  const out = new Map<string, RouteValidators>();
  for (const r of routes) {
    out.set(r.id, {
      body: r.body ? bodies.compile(r.body) : undefined,
      query: r.query ? queries.compile(r.query) : undefined,
    });
  }
  return out;
}

export function fieldErrors(errors: ErrorObject[] | null | undefined, root: string): FieldError[] {
  return (errors ?? []).map((e) => {
    const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    const missing = e.keyword === 'required' ? (e.params as { missingProperty: string }).missingProperty : '';
    const field = [path, missing].filter(Boolean).join('.') || root;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'enum') message += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    return { field, message };
  });
}

// The API client, typed by the OpenAPI document Herald builds (src/http/openapi.ts): the build
// writes it out and generates src/generated/openapi.d.ts from it, so a change of the API that
// breaks a page fails `npm run build`.
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/openapi';
import { signOut, token } from './session';

export type Schemas = components['schemas'];

export const api = createClient<paths>({ baseUrl: '/api/v1' });

api.use({
  onRequest({ request }) {
    const t = token();
    if (t) request.headers.set('Authorization', `Bearer ${t}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) signOut('Your session has ended (expired or not accepted). Sign in again to go on where you were.');
    return response;
  },
});

/** An error answer: its message, its code and, by field (dot path, as the API names it), what is wrong. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly fields: Record<string, string>,
    readonly code?: string,
  ) {
    super(message);
  }
}

function apiError(status: number, body: unknown): ApiError {
  const b = (body ?? {}) as { error?: unknown; message?: unknown; details?: unknown; code?: unknown };
  const e = typeof b.error === 'object' && b.error !== null ? (b.error as { message?: unknown; details?: unknown; code?: unknown }) : b;
  const fields: Record<string, string> = {};
  if (Array.isArray(e.details)) {
    for (const d of e.details as { field?: unknown; message?: unknown }[]) {
      if (typeof d.field === 'string' && typeof d.message === 'string') fields[d.field] ??= d.message;
    }
  }
  const message = typeof e.message === 'string' ? e.message : `Herald answered ${status}`;
  return new ApiError(message, status, fields, typeof e.code === 'string' ? e.code : undefined);
}

/** The data of a successful answer; an ApiError otherwise (a network failure stays a TypeError). */
export async function call<R extends { data?: unknown; error?: unknown; response: Response }>(p: Promise<R>): Promise<NonNullable<R['data']>> {
  const r = await p;
  if (r.response.ok && r.data !== undefined) return r.data as NonNullable<R['data']>;
  throw apiError(r.response.status, r.error);
}

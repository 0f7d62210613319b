// The pieces every page uses: loading data with its loading and failure states, form fields
// showing the API's error for that field, empty states, paging.
import { useCallback, useEffect, useId, useRef, useState, type InputHTMLAttributes, type ReactNode } from 'react';
import { ApiError } from './api';

export type Load<T> = { state: 'loading' } | { state: 'failed'; error: Error } | { state: 'done'; data: T };

/**
 * Runs `fetch` when `deps` change; the second value runs it again. On new deps what was shown
 * goes while the answer loads (stale rows under a new search would mislead); an answer that
 * arrives after a newer request is dropped.
 */
export function useLoad<T>(fetch: () => Promise<T>, deps: unknown[]): [Load<T>, () => void] {
  const [load, setLoad] = useState<Load<T>>({ state: 'loading' });
  const [round, setRound] = useState(0);
  // `deps` name what `fetch` reads, as with useEffect.
  const run = useCallback(fetch, deps);
  const shown = useRef(run);
  useEffect(() => {
    let live = true;
    // New deps: what was shown goes. A reload (after an action) keeps it until the answer.
    if (shown.current !== run) {
      shown.current = run;
      setLoad({ state: 'loading' });
    }
    run().then(
      (data) => live && setLoad({ state: 'done', data }),
      (error: Error) => live && setLoad({ state: 'failed', error }),
    );
    return () => {
      live = false;
    };
  }, [run, round]);
  // The same function every render: a timer that asks again need not be reset by each answer.
  const again = useCallback(() => setRound((r) => r + 1), []);
  return [load, again];
}

/** Renders `children(data)` once loaded; a loading line or the failure with a retry otherwise. */
export function Loaded<T>({ load, retry, what, children }: { load: Load<T>; retry: () => void; what: string; children: (data: T) => ReactNode }) {
  if (load.state === 'loading') return <p className="muted" role="status">Loading {what}…</p>;
  if (load.state === 'failed') {
    return (
      <div className="failure" role="alert">
        <p>Could not load {what}: {describe(load.error)}</p>
        <button type="button" onClick={retry}>Try again</button>
      </div>
    );
  }
  return <>{children(load.data)}</>;
}

export function describe(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof TypeError) return 'Herald did not answer (network error). Check that it is running.';
  return error instanceof Error ? error.message : String(error);
}

/** A form's state: busy while submitting, the error message, and the API's per-field errors. */
export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const submit = async (action: () => Promise<void>) => {
    setBusy(true);
    setError('');
    setFields({});
    try {
      await action();
    } catch (e) {
      setError(describe(e));
      if (e instanceof ApiError) setFields(e.fields);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, fields, submit };
}

export function FormError({ error }: { error: string }) {
  return error ? <p className="error" role="alert">{error}</p> : null;
}

type FieldProps = InputHTMLAttributes<HTMLInputElement> & { label: string; error?: string; hint?: string };

/** A labelled input with its hint and the API's error for it, both tied to it for screen readers. */
export function Field({ label, error, hint, ...input }: FieldProps) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-invalid={error ? true : undefined} aria-describedby={described} {...input} />
      {hint && <small id={`${id}-hint`} className="muted">{hint}</small>}
      {error && <small id={`${id}-error`} className="error">{error}</small>}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children: ReactNode }) {
  return (
    <div className="empty">
      <p><strong>{title}</strong></p>
      {children}
    </div>
  );
}

/** "Showing 51–100 of 240" with previous and next. */
export function Pager({ offset, limit, total, go }: { offset: number; limit: number; total: number; go: (offset: number) => void }) {
  if (total <= limit && offset === 0) return null;
  const last = Math.min(offset + limit, total);
  return (
    <nav className="pager" aria-label="Pages">
      <span>
        Showing {total === 0 ? 0 : offset + 1}–{last} of {total}
      </span>
      <button type="button" disabled={offset === 0} onClick={() => go(Math.max(0, offset - limit))}>Previous</button>
      <button type="button" disabled={last >= total} onClick={() => go(offset + limit)}>Next</button>
    </nav>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** A wide table's box, scrolling sideways on a narrow screen; focusable so the keyboard can scroll it. */
export function TableBox({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

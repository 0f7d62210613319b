// The pieces every page uses: loading data with its loading and failure states, form fields
// showing the API's error for that field, what an action did beside its button, empty states,
// paging.
import { useCallback, useEffect, useId, useRef, useState, type FormEvent, type InputHTMLAttributes, type ReactNode, type TextareaHTMLAttributes } from 'react';
import { ApiError } from './api';
import { refusal, type StepName } from './field-errors';

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
  if (error instanceof ApiError) return refusal(error).summary;
  if (error instanceof TypeError) return 'Herald did not answer (network error). Check that it is running.';
  return error instanceof Error ? error.message : String(error);
}

/**
 * A form's state: busy while submitting, what the action said it did (`done`, its answer), the
 * refusal in the dashboard's words and, by field, what to say beside each (`steps` names
 * workflow steps). A submit while one runs is ignored: busy buttons stay focusable.
 */
export function useSubmit(steps?: StepName) {
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState('');
  const [error, setError] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  const running = useRef(false);
  const submit = async (action: () => Promise<string | void>) => {
    if (running.current) return;
    running.current = true;
    setBusy(true);
    setDone('');
    setError('');
    setFields({});
    try {
      setDone((await action()) ?? '');
    } catch (e) {
      const r = e instanceof ApiError ? refusal(e, steps) : { summary: describe(e), fields: {} };
      setError(r.summary);
      setFields(r.fields);
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  return { busy, done, error, fields, submit, clearDone: () => setDone('') };
}

export function FormError({ error }: { error: string }) {
  return error ? <p className="error" role="alert">{error}</p> : null;
}

/**
 * A form's buttons and, right beside them, what the last action did: its confirmation
 * (role=status, always in the page so that each new one is announced) or its refusal
 * (role=alert). Buttons stay focusable while busy (aria-disabled), so focus stays on the one
 * pressed; where that button is gone (it removed what it acted on), focus goes to what it said
 * rather than to the page.
 */
export function Actions({ done, error, children }: { done: string; error: string; children?: ReactNode }) {
  const said = useRef<HTMLDivElement>(null);
  /** Focus was on one of these buttons and has not moved to another element since. */
  const held = useRef(false);
  useEffect(() => {
    if (held.current && (done || error) && (document.activeElement === null || document.activeElement === document.body)) {
      held.current = false;
      said.current?.focus();
    }
  });
  return (
    <div className="form-actions" onFocus={() => (held.current = true)} onBlur={(e) => e.relatedTarget && (held.current = false)}>
      {children}
      <div ref={said} tabIndex={-1} className="said">
        <span role="status" className="ok">{done}</span>
        <FormError error={error} />
      </div>
    </div>
  );
}

type Labelled = { label: string; error?: string; hint?: string };

/** The label, hint and the API's error around a control, both tied to it for screen readers. */
function Labelled({ label, error, hint, control }: Labelled & { control: (a: { id: string; 'aria-invalid'?: true; 'aria-describedby'?: string }) => ReactNode }) {
  const id = useId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {control({ id, ...(error ? { 'aria-invalid': true } : {}), ...(described ? { 'aria-describedby': described } : {}) })}
      {hint && <small id={`${id}-hint`} className="muted">{hint}</small>}
      {error && <small id={`${id}-error`} className="error">{error}</small>}
    </div>
  );
}

/** A labelled input with its hint and the API's error for it. */
export function Field({ label, error, hint, ...input }: Labelled & InputHTMLAttributes<HTMLInputElement>) {
  return <Labelled label={label} error={error} hint={hint} control={(a) => <input {...a} {...input} />} />;
}

/** A labelled text area with its hint and the API's error for it. */
export function TextField({ label, error, hint, ...area }: Labelled & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return <Labelled label={label} error={error} hint={hint} control={(a) => <textarea {...a} {...area} />} />;
}

/** The API's error for `field`, or for an entry of it (`field.3`: said as line 4). */
export function fieldError(fields: Record<string, string>, field: string): string | undefined {
  if (fields[field]) return fields[field];
  for (const [f, message] of Object.entries(fields)) {
    const m = /^(.+)\.(\d+)$/.exec(f);
    if (m?.[1] === field) return `Line ${Number(m[2]) + 1}: ${message}`;
  }
  return undefined;
}

/**
 * A search box: submitting it (Enter or the button) hands the trimmed text to `search`, which
 * the page keeps in the address; `value` is the search shown (back and reload restore it).
 * `children`: more filters in the same form.
 */
export function SearchForm({ label, value, search, hint, maxLength = 255, children }: { label: string; value: string; search: (text: string) => void; hint?: string; maxLength?: number; children?: ReactNode }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    search(text.trim());
  };
  return (
    <form className="filters" role="search" onSubmit={submit}>
      <Field label={label} type="search" value={text} onChange={(e) => setText(e.target.value)} maxLength={maxLength} hint={hint} spellCheck={false} />
      <button type="submit">Search</button>
      {children}
    </form>
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

/** Where a page of a newest-first list starts (`before`, `before_id`: the last row of the page above). */
export type PageBack = { before: string; before_id: string };

/**
 * Paging back through a newest-first list by its last row shown (the API's `before` and
 * `before_id`), keeping the pages above to go back up: `query` goes into the request.
 */
export function usePageBack() {
  const [above, setAbove] = useState<PageBack[]>([]);
  const query: PageBack | undefined = above[above.length - 1];
  return {
    query,
    page: above.length + 1,
    reset: () => setAbove([]),
    /** Newer (up one page) and older (after the page's last row, `last`, when the page was full). */
    pager: (rows: number, limit: number, last: { id: string; created_at: string } | undefined, what: string) =>
      (query || rows === limit) && (
        <nav className="pager" aria-label={`Pages of ${what}`}>
          {query && <button type="button" onClick={() => setAbove(above.slice(0, -1))}>Newer {what}</button>}
          {rows === limit && last && <button type="button" onClick={() => setAbove([...above, { before: last.created_at, before_id: last.id }])}>Older {what}</button>}
        </nav>
      ),
  };
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** `n` as a share of `of`: one decimal, two below 1% (so a small rate is not shown as 0.0%); – when `of` is 0. */
export const percent = (n: number, of: number) => (of === 0 ? '–' : `${((100 * n) / of).toFixed(n / of < 0.01 && n > 0 ? 2 : 1)}%`);

/** A wide table's box, scrolling sideways on a narrow screen; focusable so the keyboard can scroll it. */
export function TableBox({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}

/**
 * A secret shown once (a new API key, a webhook signing secret), focused so that the next step is
 * to copy it; `what` names it in the copy failure and to screen readers.
 */
export function ShownOnce({ id, heading, note, what, value, onDone }: { id: string; heading: ReactNode; note: string; what: string; value: string; onDone: () => void }) {
  const [copied, setCopied] = useState('');
  const copy = () =>
    navigator.clipboard.writeText(value).then(
      () => setCopied('Copied.'),
      () => setCopied(`Copying is not allowed here: select the ${what} and copy it.`),
    );
  return (
    <section className="secret" aria-labelledby={id}>
      <h2 id={id}>{heading}</h2>
      <p>{note}</p>
      <div className="inline">
        <label htmlFor={`${id}-value`} className="sr-only">{what.charAt(0).toUpperCase() + what.slice(1)}</label>
        <input id={`${id}-value`} readOnly value={value} onFocus={(e) => e.target.select()} spellCheck={false} autoFocus />
        <button type="button" onClick={() => void copy()}>Copy</button>
        <button type="button" onClick={onDone}>Done</button>
      </div>
      <p role="status">{copied}</p>
    </section>
  );
}

// Pieces of campaign and template authoring: a person picker (search by name or email), a
// debounced value, and what Herald rendered for a template or a step (email html in its own
// sandboxed frame beside its text part).
import { useEffect, useId, useRef, useState } from 'react';
import { api, ApiError, call } from '../api';
import { describe, useLoad } from '../ui';
import { displayName } from './People';

/** `value`, once it has not changed for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** A person of the workspace: a search box and the first 20 matches; `''` until one is picked. */
export function PersonPicker({ workspaceId, label, value, onChange }: { workspaceId: string; label: string; value: string; onChange: (id: string) => void }) {
  const id = useId();
  const [text, setText] = useState('');
  const search = useDebounced(text.trim(), 300);
  const [load] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/people', { params: { path: { workspaceId }, query: { limit: 20, offset: 0, search: search || undefined } } })),
    [workspaceId, search],
  );
  const people = load.state === 'done' ? load.data.people : [];
  // The first match is picked when nothing (or someone no longer listed) is.
  useEffect(() => {
    if (load.state === 'done' && people.length > 0 && !people.some((p) => p.id === value)) onChange(people[0]!.id);
  }, [load]);
  return (
    <div className="inline">
      <div className="field">
        <label htmlFor={`${id}-search`}>{label}: search</label>
        <input id={`${id}-search`} type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="name or email" />
      </div>
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
          {people.length === 0 && <option value="">{load.state === 'loading' ? 'Loading…' : 'No one found'}</option>}
          {people.map((p) => <option key={p.id} value={p.id}>{displayName(p)}{p.email ? ` <${p.email}>` : ''}</option>)}
        </select>
      </div>
    </div>
  );
}

type Rendered = { title?: string; body?: string; image_url?: string; action_url?: string; subject?: string; html?: string | null; text?: string; preheader?: string | null };

/**
 * An email's html as a mail app shows it, inline styles and remote images included, which the
 * dashboard's own CSP would block: in email-frame.html (public/, with a CSP of its own), framed
 * without same-origin so it reaches nothing of the dashboard, which posts it the html once it
 * has loaded and on each change; it shows the html in a frame of its own without script.
 */
function EmailFrame({ html }: { html: string }) {
  const frame = useRef<HTMLIFrameElement>(null);
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    // The frame's origin is opaque ("null"): no narrower target can be named.
    if (loaded) frame.current?.contentWindow?.postMessage({ html }, '*');
  }, [loaded, html]);
  return <iframe ref={frame} title="The email's HTML part as rendered" sandbox="allow-scripts" src="/dashboard/email-frame.html" onLoad={() => setLoaded(true)} />;
}

/** What Herald rendered, as the recipient would see it. */
export function RenderedMessage({ channel, rendered }: { channel: 'push' | 'email' | 'sms'; rendered: Rendered }) {
  if (channel === 'email') {
    return (
      <div className="rendered">
        <p><strong>Subject:</strong> {rendered.subject ?? '—'}</p>
        {rendered.preheader && <p className="muted">{rendered.preheader}</p>}
        <div className="email-parts">
          <div>
            <h4>HTML</h4>
            {rendered.html ? <EmailFrame html={rendered.html} /> : <p className="muted">No HTML part.</p>}
          </div>
          <div>
            <h4>Text</h4>
            <pre tabIndex={0} role="region" aria-label="The email's text part as rendered">{rendered.text ?? ''}</pre>
          </div>
        </div>
      </div>
    );
  }
  if (channel === 'sms') {
    return (
      <div className="rendered">
        <p className="bubble">{rendered.body ?? ''}</p>
        <p className="muted">{(rendered.body ?? '').length} characters</p>
      </div>
    );
  }
  return (
    <div className="rendered push">
      <p><strong>{rendered.title ?? ''}</strong></p>
      <p>{rendered.body ?? ''}</p>
      {rendered.action_url && <p className="muted">Opens {rendered.action_url}</p>}
    </div>
  );
}

/**
 * Herald's rendering of `content` (POST …/templates/preview) for the picked person, asked again
 * 400 ms after the last change; a Liquid error names its field (`content.<field>`, with the line).
 */
export function usePreview(workspaceId: string, channel: 'push' | 'email' | 'sms', content: Record<string, unknown>) {
  const [personId, setPersonId] = useState('');
  const settled = useDebounced(JSON.stringify({ channel, content, personId }), 400);
  const [rendered, setRendered] = useState<Parameters<typeof RenderedMessage>[0]['rendered'] | null>(null);
  const [error, setError] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  useEffect(() => {
    let live = true;
    const ask = JSON.parse(settled) as { channel: 'push' | 'email' | 'sms'; content: Record<string, unknown>; personId: string };
    const body = Object.fromEntries(Object.entries(ask.content).filter(([, v]) => v !== '' && v !== undefined && v !== null));
    call(api.POST('/workspaces/{workspaceId}/templates/preview', { params: { path: { workspaceId } }, body: { channel: ask.channel, content: body as never, ...(ask.personId ? { person_id: ask.personId } : {}) } })).then(
      (r) => {
        if (!live) return;
        setRendered(r.rendered);
        setError('');
        setFields({});
      },
      (e: unknown) => {
        if (!live) return;
        setError(describe(e));
        const byField: Record<string, string> = {};
        if (e instanceof ApiError) for (const [k, m] of Object.entries(e.fields)) byField[k.replace(/^content\./, '')] = m;
        setFields(byField);
      },
    );
    return () => {
      live = false;
    };
  }, [workspaceId, settled]);
  return { personId, setPersonId, rendered, error, fields };
}

/** The content fields of each channel: a template's and a workflow node's. */
export const TEMPLATE_FIELDS: Record<'push' | 'email' | 'sms', { key: 'title' | 'body' | 'image_url' | 'action_url' | 'subject' | 'preheader' | 'html' | 'text'; label: string; area?: boolean; hint?: string }[]> = {
  push: [
    { key: 'title', label: 'Title' },
    { key: 'body', label: 'Body', area: true },
    { key: 'image_url', label: 'Image URL' },
    { key: 'action_url', label: 'Action URL' },
  ],
  email: [
    { key: 'subject', label: 'Subject' },
    { key: 'preheader', label: 'Preheader', hint: 'The preview text mail apps show after the subject' },
    { key: 'html', label: 'HTML', area: true, hint: 'Put {{ unsubscribe_url }} in a link: the one-click unsubscribe' },
    { key: 'text', label: 'Text', area: true, hint: 'Derived from the HTML when empty' },
  ],
  sms: [{ key: 'body', label: 'Body', area: true }],
};

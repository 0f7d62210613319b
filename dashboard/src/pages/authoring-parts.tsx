// Pieces of campaign and template authoring: a person picker (search by name or email), a
// debounced value, and what Herald rendered for a template or a step (email html in its own
// sandboxed frame beside its text part).
import { useEffect, useId, useRef, useState } from 'react';
import { api, ApiError, call, type Schemas } from '../api';
import { refusal } from '../field-errors';
import { describe, useLoad } from '../ui';
import type { Channel, MessageChannel } from '../enums';
import { displayName } from './People';

type Person = Schemas['DashboardPerson'];

/** `value`, once it has not changed for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** The person last picked in each workspace (kept while the tab is open): previews start on them. */
const lastPicked = new Map<string, Person>();

/** What a template's Liquid reads of a person: `person.first_name`, `traits.plan`. */
export function personDataUsed(content: Record<string, unknown>): string[] {
  const used = new Set<string>();
  for (const v of Object.values(content)) {
    if (typeof v === 'string') for (const m of v.matchAll(/\b(person|traits)\.([A-Za-z_]\w*)/g)) used.add(`${m[1]}.${m[2]}`);
  }
  return [...used];
}

/** The first of `people` with the most of `used` set (the first of all when it uses nothing). */
function bestFor(people: Person[], used: string[]): Person {
  const has = (p: Person, path: string) => {
    const [scope, key] = path.split('.') as [string, string];
    const v = scope === 'person' ? ((p as Record<string, unknown>)[key] ?? p.attributes[key]) : p.attributes[key];
    return v !== null && v !== undefined && v !== '';
  };
  const score = (p: Person) => used.filter((u) => has(p, u)).length;
  return people.reduce((best, p) => (score(p) > score(best) ? p : best));
}

/**
 * A person of the workspace: a search box and the first 20 matches; `''` until one is picked.
 * While `auto` (nobody chosen yet), it picks the listed person with the most of the data
 * `prefer` names (`person.first_name`, `traits.plan`), and again when that changes; a search
 * picks among its matches. What the user picks is kept for the next picker of the workspace.
 */
export function PersonPicker({ workspaceId, label, value, onChange, auto = false, prefer = [] }: {
  workspaceId: string;
  label: string;
  value: string;
  onChange: (id: string, byUser: boolean) => void;
  auto?: boolean;
  prefer?: string[];
}) {
  const id = useId();
  const [text, setText] = useState('');
  const search = useDebounced(text.trim(), 300);
  const [load] = useLoad(
    () => call(api.GET('/workspaces/{workspaceId}/people', { params: { path: { workspaceId }, query: { limit: 20, offset: 0, search: search || undefined } } })),
    [workspaceId, search],
  );
  const listed = load.state === 'done' ? load.data.people : [];
  // The person picked before stays offered (unless a search is shown) though not among the first 20.
  const kept = lastPicked.get(workspaceId);
  const people = !search && kept?.id === value && !listed.some((p) => p.id === value) ? [kept, ...listed] : listed;
  const choose = (p: Person, byUser: boolean) => {
    if (byUser) lastPicked.set(workspaceId, p);
    onChange(p.id, byUser);
  };
  const preferred = prefer.join(' ');
  useEffect(() => {
    if (load.state !== 'done' || listed.length === 0) return;
    if (!auto && people.some((p) => p.id === value)) return;
    const best = bestFor(listed, prefer);
    if (best.id !== value) choose(best, search !== '');
  }, [load, preferred, auto]);
  return (
    <div className="inline">
      <div className="field">
        <label htmlFor={`${id}-search`}>{label}: search</label>
        <input id={`${id}-search`} type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="name or email" />
      </div>
      <div className="field">
        <label htmlFor={id}>{label}</label>
        <select id={id} value={value} onChange={(e) => {
          const p = people.find((x) => x.id === e.target.value);
          if (p) choose(p, true);
        }}>
          {people.length === 0 && <option value="">{load.state === 'loading' ? 'Loading…' : 'No one found'}</option>}
          {people.map((p) => <option key={p.id} value={p.id}>{displayName(p)}{p.email ? ` <${p.email}>` : ''}</option>)}
        </select>
      </div>
    </div>
  );
}

type Rendered = { url?: string; title?: string; body?: string; image_url?: string; action_url?: string; subject?: string; html?: string | null; text?: string; preheader?: string | null };

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
export function RenderedMessage({ channel, rendered }: { channel: MessageChannel; rendered: Rendered }) {
  if (channel === 'webhook') {
    return (
      <div className="rendered">
        <p><strong>Calls</strong> <code>{rendered.url ?? ''}</code></p>
        <pre tabIndex={0} role="region" aria-label="The webhook's body as rendered">{rendered.body ?? ''}</pre>
      </div>
    );
  }
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
export function usePreview(workspaceId: string, channel: MessageChannel, content: Record<string, unknown>) {
  // The person picked last in this workspace, else one the picker chooses for the data the content uses.
  const [choice, setChoice] = useState(() => ({ id: lastPicked.get(workspaceId)?.id ?? '', byUser: lastPicked.has(workspaceId) }));
  const personId = choice.id;
  const settled = useDebounced(JSON.stringify({ channel, content, personId }), 400);
  const [rendered, setRendered] = useState<Parameters<typeof RenderedMessage>[0]['rendered'] | null>(null);
  const [error, setError] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  useEffect(() => {
    let live = true;
    const ask = JSON.parse(settled) as { channel: MessageChannel; content: Record<string, unknown>; personId: string };
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
        if (e instanceof ApiError) for (const [k, m] of Object.entries(refusal(e).fields)) byField[k.replace(/^content\./, '')] = m;
        setFields(byField);
      },
    );
    return () => {
      live = false;
    };
  }, [workspaceId, settled]);
  /** The props of its PersonPicker. */
  const picker = { value: personId, onChange: (id: string, byUser: boolean) => setChoice({ id, byUser }), auto: !choice.byUser, prefer: personDataUsed(content) };
  return { picker, rendered, error, fields };
}

/** The content fields of each channel: a template's and a workflow node's. */
export const TEMPLATE_FIELDS: Record<Channel, { key: 'title' | 'body' | 'image_url' | 'action_url' | 'subject' | 'preheader' | 'html' | 'text'; label: string; area?: boolean; hint?: string }[]> = {
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

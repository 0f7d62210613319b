// A webhook step of the workflow editor (docs/channels.md, "The webhook channel"): the URL called
// once per person, the method, headers sent as written (one `Name: value` a line) and the JSON
// body, both URL and body Liquid; and Herald's rendering of them for a picked person.
import { useState } from 'react';
import { Field, TextField } from '../ui';
import { PersonPicker, RenderedMessage, usePreview } from './authoring-parts';

type Node = { id: string; url?: unknown; method?: unknown; headers?: unknown; body?: unknown };

const METHODS = ['POST', 'PUT', 'PATCH'] as const;

/** Headers as the text area shows them, one `Name: value` a line. */
const headerLines = (h: unknown) => Object.entries((h ?? {}) as Record<string, string>).map(([k, v]) => `${k}: ${v}`).join('\n');
function parseHeaders(text: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0) out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export function WebhookStep({ workspaceId, node, name, at, change }: {
  workspaceId: string;
  node: Node;
  name: string;
  at: (field: string) => string | undefined;
  change: (patch: Record<string, unknown>) => void;
}) {
  const [headers, setHeaders] = useState(() => headerLines(node.headers));
  const [open, setOpen] = useState(false);
  return (
    <>
      <Field label={`${name}: URL`} value={String(node.url ?? '')} error={at('url')} hint="http(s); Liquid: {{ person.external_id }}. A private address needs HERALD_ALLOWED_PRIVATE_HOSTS" onChange={(e) => change({ url: e.target.value })} />
      <div className="field">
        <label htmlFor={`${node.id}-method`}>{name}: method</label>
        <select id={`${node.id}-method`} value={String(node.method ?? 'POST')} onChange={(e) => change({ method: e.target.value === 'POST' ? undefined : e.target.value })}>
          {METHODS.map((m) => <option key={m} value={m}>{m}</option>)}
        </select>
      </div>
      <TextField label={`${name}: headers`} rows={2} value={headers} error={at('headers')} hint="One Name: value a line; the webhook-id, webhook-timestamp and webhook-signature headers are added (signed with the node secret)"
        onChange={(e) => {
          setHeaders(e.target.value);
          change({ headers: parseHeaders(e.target.value) });
        }} />
      <TextField label={`${name}: body`} rows={4} value={String(node.body ?? '')} error={at('body')} hint={'JSON once rendered; Liquid: {"user": "{{ person.external_id }}", "plan": {{ traits.plan | default: "none" | json }}}'} onChange={(e) => change({ body: e.target.value })} />
      <div>
        <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>{open ? 'Hide the preview' : 'Preview'}<span className="sr-only"> of {name}</span></button>
        {open && <WebhookPreview workspaceId={workspaceId} node={node} name={name} />}
      </div>
    </>
  );
}

function WebhookPreview({ workspaceId, node, name }: { workspaceId: string; node: Node; name: string }) {
  const content: Record<string, unknown> = {};
  for (const key of ['url', 'body'] as const) if (typeof node[key] === 'string' && node[key] !== '') content[key] = node[key];
  const preview = usePreview(workspaceId, 'webhook', content);
  return (
    <div className="step-preview">
      <PersonPicker workspaceId={workspaceId} label={`${name}: preview for`} {...preview.picker} />
      {preview.error ? <p className="error">{preview.error}</p> : preview.rendered ? <RenderedMessage channel="webhook" rendered={preview.rendered} /> : <p className="muted">Rendering…</p>}
    </div>
  );
}
